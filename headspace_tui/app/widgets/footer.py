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

Garbage: even collectable, a rebuild threw away every key widget (its
styles, caches, message queue; about 11 KB each, from the 7.7 MB a minute
above) to make the same number of new ones, and under churn that was a
minute's worth of dead widgets waiting for the full collection (gc_pace.py).  On a loaded machine the collection
comes late, the pile grows, and each new high-water mark left Python's
allocator with arenas it could never give back: the churn soak's RSS grew
in steps.  So a rebuild now changes the keys already there in place (their
key, words, action, dimming and tooltip) and adds or removes only the
difference; Textual's own rebuild runs only for what it draws differently
(grouped keys, the command palette's key coming or going).
"""

from __future__ import annotations

from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from .. import textual_private
from ..textual_private import FooterKey

# One key as the footer draws it: key, key as shown, description, action, disabled, tooltip.
KeySpec = tuple[str, str, str, str, bool, str]
PALETTE = "-command-palette"


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
        return tuple((key, active.binding.action, active.binding.description, active.binding.show, active.enabled, active.tooltip) for key, active in screen.active_bindings.items())

    async def recompose(self) -> None:
        if self.is_attached:
            self._shown = self._offered(self.screen)
            if await self._update_in_place():
                return
        await super().recompose()
        self.drop_gone_watchers()

    def _wanted(self) -> tuple[list[KeySpec], KeySpec | None] | None:
        """The keys Textual's ``Footer.compose`` would draw, and its command palette key; None where it would group keys."""
        by_action: dict[str, tuple[Binding, bool, str]] = {}
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show:
                if binding.group is not None:
                    return None
                by_action.setdefault(binding.action, (binding, enabled, tooltip))
        keys = [(b.key, self.app.get_key_display(b), b.description, b.action, not enabled, tooltip) for b, enabled, tooltip in by_action.values()]
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            found = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _node, b, enabled, _tooltip = found
                palette = (b.key, self.app.get_key_display(b), b.description, b.action, not enabled, b.tooltip or b.description)
        return keys, palette

    async def _update_in_place(self) -> bool:
        """Show the wanted keys by changing the key widgets already there; False where only a full rebuild can."""
        wanted = self._wanted()
        children = list(self.query_children("*").exclude(".-textual-system"))
        footer_keys = [child for child in children if type(child) is FooterKey]
        if wanted is None or not children or len(footer_keys) != len(children):
            return False
        keys, palette = wanted
        shown = [key for key in footer_keys if not key.has_class(PALETTE)]
        palette_key = next((key for key in footer_keys if key.has_class(PALETTE)), None)
        if (palette is None) != (palette_key is None) or any(child.has_class("-grouped") for child in shown):
            return False
        self.styles.grid_size_columns = len(keys)
        for widget, spec in zip(shown, keys, strict=False):
            _set_key(widget, spec)
        if palette is not None and palette_key is not None:
            _set_key(palette_key, palette)
        if len(keys) > len(shown):
            new = [FooterKey(*spec[:4], disabled=spec[4], tooltip=spec[5]).data_bind(compact=Footer.compact) for spec in keys[len(shown) :]]
            if palette_key is not None:
                await self.mount_all(new, before=palette_key)
            else:
                await self.mount_all(new)
        elif len(keys) < len(shown):
            await self.remove_children(shown[len(keys) :])
            self.drop_gone_watchers()
        return True

    def drop_gone_watchers(self) -> None:
        """Forget bindings held for children that were removed (or are being removed)."""
        textual_private.drop_gone_watchers(self)


def _set_key(widget: FooterKey, spec: KeySpec) -> None:
    """Make one key widget show ``spec``, as a new ``FooterKey(*spec)`` would (its classes besides ``-disabled`` kept)."""
    key, display, description, action, disabled, tooltip = spec
    if (widget.key, widget.key_display, widget.description, widget.action, textual_private.key_disabled(widget), widget.tooltip or "") == spec:
        return
    widget.key, widget.key_display, widget.description, widget.action = key, display, description, action
    textual_private.set_key_disabled(widget, disabled)
    widget.tooltip = tooltip or None
    widget.refresh(layout=True)
