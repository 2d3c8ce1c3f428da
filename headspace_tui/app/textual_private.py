"""Every use of Textual's private API in the app, each with the reason Textual's public API does not do.

A Textual upgrade breaks private names first; here they are in one place,
so an upgrade is checked here (and tests/unit/test_textual_private.py fails
when another module of the app uses one; tests/unit/test_private_patches.py
fails when what each use relies on changes, and app/patches.py lists the
three that patch Textual process-wide, for doctor).  Each function is a small
wrapper: it names what it does for the app, and says why no public call
does it.  Private hooks the app must override in its own classes cannot
move here; ``OVERRIDES`` lists them with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from rich.style import Style
from textual._styles_cache import StylesCache
from textual.app import App
from textual.binding import BindingsMap
from textual.cache import LRUCache
from textual.dom import DOMNode
from textual.filter import LineFilter
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable, Footer
from textual.widgets._footer import FooterKey  # the footer's key widget, not exported: KeysFooter changes its keys in place (widgets/footer.py)
from textual.widgets._toast import Toast

# Private hooks overridden in the app's own classes (the name, and why).
OVERRIDES = {
    "_handle_exception": "HeadspaceApp: an unexpected error goes to the log file with its traceback, and ends the app with one line (no public hook sees it first)",
    "_print_error_renderables": "HeadspaceApp: Textual would print the traceback over the user's terminal on exit; run_app prints one line and the log's path instead",
}


def write_between_frames(app: App, text: str) -> None:
    """Raw bytes to the terminal, between two frames (a notification's OSC and bell).

    Textual has no public call for this (``bell`` writes BEL alone); its own
    ``copy_to_clipboard`` writes OSC 52 the same way, through the driver.
    Called on the app's loop, which is where frames are written too, and the
    driver queues each write whole: a notification never lands inside a frame.
    """
    driver = app._driver
    if text and driver is not None and app.is_running and not app.is_headless:
        driver.write(text)
        driver.flush()


def filters(app: App) -> list[LineFilter]:
    """The app's line filters (NO_COLOR's Monochrome among them), to be replaced in ``__init__``.

    Textual picks them from the environment in ``App.__init__`` and has no
    public setter; headspace swaps Monochrome for NoColor under NO_COLOR.
    """
    return app._filters


def set_filters(app: App, chosen: list[LineFilter]) -> None:
    """Replace the app's line filters (see ``filters``)."""
    app._filters = chosen


def drop_exit_renderables(app: App) -> None:
    """Forget the traceback Textual would print on exit (in the ``_print_error_renderables`` override, see ``OVERRIDES``)."""
    app._exit_renderables.clear()


def drop_oldest_toast(app: App, toast: Toast) -> None:
    """Take one notification off the screen, the others staying.

    Textual has public calls to clear all notifications only; the toast
    keeps its notification privately, and ``App._unnotify`` drops one.
    """
    app._unnotify(toast._notification)


def shrink_render_caches(table: DataTable, cell: int, row: int) -> None:
    """Keep a DataTable's render caches to ``cell`` cells and ``row`` rows and lines.

    DataTable makes them in ``__init__`` at 10,000 cells and 1,000 rows and
    lines, with no parameter or public attribute to size them (why it
    matters: ``AgentTable``).  Only caches that are there, as LRU caches, are
    replaced: an upgrade that renames them leaves them as they are.
    """
    for name, size in (("_cell_render_cache", cell), ("_row_render_cache", row), ("_row_renderable_cache", row), ("_line_cache", row)):
        if isinstance(getattr(table, name, None), LRUCache):
            setattr(table, name, LRUCache(size))


def binding_chain(screen: Screen) -> list[tuple[DOMNode, BindingsMap]]:
    """The screen's chain of bindings (focused widget, its parents, the screen, the app), keymap applied, as Textual resolves a key.

    Public are only the active bindings (one per key, the winner); the help
    lists every key of every node, and a key's explanation needs each node's
    binding for it in order.
    """
    return list(screen._binding_chain)


def modal_binding_chain(screen: Screen) -> list[tuple[DOMNode, BindingsMap]]:
    """As ``binding_chain``, stopping at a modal screen (what a key on ``screen`` can reach now)."""
    return list(screen._modal_binding_chain)


def own_bindings(node: DOMNode) -> BindingsMap:
    """The bindings ``node`` itself declares (its class's BINDINGS, merged over its bases), before a keymap is applied.

    Textual keeps them privately; the public ``active_bindings`` is the chain's
    winners with the keymap applied, which loses the order and the losers.
    """
    return node._bindings


def bindings_shown(footer: Footer) -> None:
    """Tell Textual's footer its bindings are ready (what its own ``bindings_changed`` does before rebuilding).

    ``KeysFooter`` replaces ``bindings_changed`` to rebuild only when the keys
    differ; the flag it must set is private.
    """
    footer._bindings_ready = True


def drop_gone_watchers(node: Widget) -> None:
    """Forget the watchers Textual holds for removed widgets (a rebuilt footer's old keys), so they can be collected.

    Textual keeps a node's watchers under a private attribute and drops those
    of removed nodes only when it next calls them; a footer rebuilt on each
    change of keys kept every old key alive until then.
    """
    watchers = getattr(node, "__watchers", {})
    for bound in watchers.values():
        bound[:] = [(each, callback) for each, callback in bound if not (getattr(each, "_closing", False) or getattr(each, "_closed", False))]


def key_disabled(key: FooterKey) -> bool:
    """Whether a footer key is drawn dimmed and rings the bell when clicked (Textual keeps it privately)."""
    return bool(key._disabled)


def set_key_disabled(key: FooterKey, disabled: bool) -> None:
    """Dim a footer key, or not, after it was made (``FooterKey`` takes ``disabled`` only when it is built)."""
    key._disabled = disabled
    key.set_class(disabled, "-disabled")


def toasts(rack: Widget) -> list[Toast]:
    """The toasts in Textual's toast rack, oldest first.

    ``Toast`` lives in a private module (``textual.widgets._toast``), and the
    rack is found only by its id; there is no public way to see one toast.
    """
    return list(rack.query(Toast))


def unpin_styles_caches() -> None:
    """Let a removed widget's styles cache go: Textual's ``StylesCache.get_inner_outer`` keeps every one it saw.

    It is an ``lru_cache`` (1,024 entries) on a method, so each entry holds
    the widget's ``StylesCache`` (with the lines it rendered) as its first
    argument.  headspace's footer is rebuilt whenever the selected agent's
    keys change, and under churn those caches filled the 1,024 entries
    (about 7 MB) over 12-20 minutes: growth the memory soak saw.  The result
    depends on the two colours only, so it is cached on them alone, once
    for the process.  An upgrade that changes the method (no ``__wrapped__``)
    leaves it as it is.
    """
    method = StylesCache.get_inner_outer
    compute = getattr(method, "__wrapped__", None)
    if compute is None or getattr(method, "headspace_unpinned", False):
        return

    @lru_cache(1024)
    def shared(base_background: object, background: object) -> object:
        return compute(None, base_background, background)

    def get_inner_outer(self: StylesCache, base_background: object, background: object) -> object:
        return shared(base_background, background)

    get_inner_outer.headspace_unpinned = True  # type: ignore[attr-defined]
    get_inner_outer.headspace_replaces = method  # type: ignore[attr-defined]  # Textual's own, for the checks (patches.py)
    method.cache_clear()
    StylesCache.get_inner_outer = get_inner_outer  # type: ignore[method-assign,assignment]


def strips_free_themselves() -> None:
    """A strip that is its own crop or division no longer keeps itself in its own cache.

    ``Strip.crop_extend`` and ``Strip.divide`` remember their result in the
    strip's own small caches; when nothing needs cutting the result is the
    strip itself (or ``[strip]``), so the strip holds itself: a reference
    cycle, and with it the strip's seven caches and its segments, which
    only a full garbage collection frees.  Textual's compositor does both
    on every line it draws, so every strip a render cache let go waited for
    that collection: in the loaded churn soak, up to 17,000 such objects a
    minute (a census of the collector's garbage: FIFOCache, Strip, Segment),
    much of the heap's swing between collections, whose highest mark stays
    in the process's RSS.  The cut that returns the strip itself
    costs nothing to redo, so it is not remembered; every other result is,
    as before.  An upgrade that renames the caches leaves the methods as
    they are.
    """
    if getattr(Strip.crop_extend, "headspace_acyclic", False) or not {"_crop_extend_cache", "_divide_cache"} <= set(Strip.__slots__):
        return
    crop_extend, divide = Strip.crop_extend, Strip.divide

    def crop_extend_acyclic(self: Strip, start: int, end: int, style: Style | None) -> Strip:
        strip = crop_extend(self, start, end, style)
        if strip is self:
            self._crop_extend_cache._cache.pop((start, end, style), None)
        return strip

    def divide_acyclic(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        kept = list(cuts)  # an iterator is read once, here
        strips = divide(self, kept)
        if len(strips) == 1 and strips[0] is self:
            self._divide_cache._cache.pop(tuple(cut for cut in kept if cut <= self.cell_length), None)
        return strips

    crop_extend_acyclic.headspace_acyclic = True  # type: ignore[attr-defined]
    crop_extend_acyclic.headspace_replaces = crop_extend  # type: ignore[attr-defined]  # Textual's own, for the checks (patches.py)
    divide_acyclic.headspace_replaces = divide  # type: ignore[attr-defined]
    Strip.crop_extend = crop_extend_acyclic  # type: ignore[method-assign]
    Strip.divide = divide_acyclic  # type: ignore[method-assign]


def lru_caches_free_on_clear() -> None:
    """A cleared ``LRUCache`` frees what it held at once, not at the next full garbage collection.

    Textual's ``LRUCache`` keeps its entries in a ring (each link a list
    ``[previous, next, key, value]``), and ``clear`` only forgets the ring's
    head: the ring still holds itself, and with it every value cached, which
    only a full collection frees.  DataTable clears its render caches
    whenever its columns change (an agent with a longer name or folder
    came), each time up to a thousand rows' strips, segments and texts: in
    the loaded churn soak one clear left 18,000-26,000 objects for the
    collector, a burst that raised the heap's high-water mark (about 1 MB of
    RSS for good) at the same minute in every run of a seed (issue 41).
    Emptying each link before forgetting the ring breaks it, so reference
    counting frees it all now.  An upgrade that renames the ring's parts
    leaves ``clear`` as it is.
    """
    if getattr(LRUCache.clear, "headspace_unlinks", False) or not {"_cache", "_head"} <= set(LRUCache.__slots__):
        return
    clear = LRUCache.clear

    def clear_unlinked(self: LRUCache) -> None:
        for link in self._cache.values():
            link.clear()  # [previous, next, key, value] -> []: the ring no longer holds itself
        clear(self)

    clear_unlinked.headspace_unlinks = True  # type: ignore[attr-defined]
    clear_unlinked.headspace_replaces = clear  # type: ignore[attr-defined]  # Textual's own, for the checks (patches.py)
    LRUCache.clear = clear_unlinked  # type: ignore[method-assign]
