"""The key footer: Textual's ``Footer``, without the memory it never gives back.

Textual's footer (8.2.8, and as written since ``data_bind`` came) builds a
new ``FooterKey`` for every key each time the keys on offer change, and
binds each one's ``compact`` to the footer's.  The binding is a watcher kept
on the footer, pruned only when ``compact`` itself changes, which here is
never: every old key stayed reachable with its styles, caches and message
queue.  headspace changes the keys whenever the selected row's state
changes and whenever a dialog opens, so under agent churn this was the
whole of a steady 7.7 MB a minute (measured with tracemalloc in
``benchmarks/soak.py``: 694 widgets a minute, nearly all ``FooterKey``).

``KeysFooter`` drops the watchers of keys that are gone after each rebuild.
It relies on two private names (``__watchers``, ``_closing``); the unit
test that rebuilds the footer many times fails if a Textual release changes
them, rather than letting the leak back in silently.
"""

from __future__ import annotations

from textual.widgets import Footer


class KeysFooter(Footer):
    """A ``Footer`` whose old keys can be collected once they are removed."""

    async def recompose(self) -> None:
        await super().recompose()
        self.drop_gone_watchers()

    def drop_gone_watchers(self) -> None:
        """Forget bindings held for children that were removed (or are being removed)."""
        watchers = getattr(self, "__watchers", {})
        for bound in watchers.values():
            bound[:] = [(node, callback) for node, callback in bound if not (getattr(node, "_closing", False) or getattr(node, "_closed", False))]
