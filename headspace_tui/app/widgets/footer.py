"""The key footer: Textual's ``Footer``, in step with the keys and without the memory it never gives back.

In step: Textual's footer rebuilds after the screen's next refresh (its
``bindings_changed`` asks ``call_after_refresh``), so the frame that shows a
new selection's preview and prompt bar still shows the previous agent's
keys; the new ones come a frame later, and the screen's update timer can put
that frame up to two frame periods (33 ms) away.  ``KeysFooter`` asks for its
rebuild as the bindings change (``refresh(recompose=True)``, which Textual
runs from the footer's own queue before the next frame and runs once however
often it is asked), so the keys change in the same frame as the rest.  What
the keys are is read at the rebuild, from ``check_action``, so they are
never older than the selection.

Memory: Textual's footer (8.2.8, and as written since ``data_bind`` came)
builds a new ``FooterKey`` for every key each time the keys on offer change,
and binds each one's ``compact`` to the footer's.  The binding is a watcher
kept on the footer, pruned only when ``compact`` itself changes, which here
is never: every old key stayed reachable with its styles, caches and message
queue.  headspace changes the keys whenever the selected row's state changes
and whenever a dialog opens, so under agent churn this was the whole of a
steady 7.7 MB a minute (measured with tracemalloc in ``benchmarks/soak.py``:
694 widgets a minute, nearly all ``FooterKey``).

``KeysFooter`` drops the watchers of keys that are gone after each rebuild.
It relies on private names (``__watchers``, ``_closing``: textual_private.py); the unit
test that rebuilds the footer many times fails if a Textual release changes
them, rather than letting the leak back in silently.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

from .. import textual_private


class KeysFooter(Footer):
    """A ``Footer`` that rebuilds with its screen's keys, and whose old keys can be collected once removed."""

    _shown: tuple = ()  # the keys on offer at the last rebuild

    def bindings_changed(self, screen: Screen) -> None:
        """Rebuild before the next frame, not after it (Textual's own test of when to rebuild, kept).

        Only when the keys on offer differ from those shown: Textual tells the
        footer also when nothing it shows changed (its screen coming back from
        the help, a focus move), and a rebuild in the frame's path then only
        delays the frame (the churn soak's key-to-screen p95 rose by about 20 ms).
        """
        textual_private.bindings_shown(self)
        if screen.app.app_focus and self.is_attached and screen is self.screen and self._offered(screen) != self._shown:
            self.refresh(recompose=True)

    @staticmethod
    def _offered(screen: Screen) -> tuple:
        return tuple(
            (key, active.binding.action, active.binding.description, active.binding.show, active.enabled, active.tooltip)
            for key, active in screen.active_bindings.items()
        )

    async def recompose(self) -> None:
        if self.is_attached:
            self._shown = self._offered(self.screen)
        await super().recompose()
        self.drop_gone_watchers()

    def drop_gone_watchers(self) -> None:
        """Forget bindings held for children that were removed (or are being removed)."""
        textual_private.drop_gone_watchers(self)
