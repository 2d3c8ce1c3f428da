"""What the app's uses of Textual's private API rely on is still there, and its three process-wide patches apply.

Textual and Rich are pinned exactly (pyproject.toml) because of these.  An
upgrade is done on purpose: bump the pins, run this file, and for each
failure re-check the use or the patch it names (app/textual_private.py)
against the new Textual, then update what it expects here (a patch's
fingerprints are in app/patches.py).

* the three patches: the source of each definition they replace or rely on
  (its fingerprint), the behaviour of Textual's own code that makes them
  needed and safe, and their effect once the app has applied them;
* every other private use in textual_private.py (and OVERRIDES): the
  attribute or method is there, with the signature and type it assumes,
  and Textual's own code still reads it as the use assumes.
"""

from __future__ import annotations

import ast
import gc
import inspect
import subprocess
import sys
import tomllib
import weakref
from pathlib import Path

import pytest
import rich.cells
from rich.segment import Segment
from textual import reactive
from textual._styles_cache import StylesCache
from textual.app import App
from textual.binding import BindingsMap
from textual.cache import LRUCache
from textual.color import Color
from textual.dom import DOMNode
from textual.driver import Driver
from textual.filter import LineFilter, NoColor
from textual.geometry import Region
from textual.notifications import Notification
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import DataTable, Footer
from textual.widgets._footer import FooterKey  # this test may: it checks what the app relies on
from textual.widgets._toast import Toast, ToastRack

from headspace_tui.app import patches, render_caches, textual_private

ROOT = Path(__file__).resolve().parents[2]
RECHECK = "re-check {what} in headspace_tui/app/textual_private.py against this Textual, then update this test"


def _params(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


# -- the pins ------------------------------------------------------------------------


def test_textual_and_rich_are_pinned_exactly_to_what_the_patches_were_checked_against():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for package, version in patches.PINNED.items():
        assert f"{package}=={version}" in dependencies, f"pyproject pins {package} otherwise than app/patches.py's PINNED: change both, on purpose"


def test_the_installed_textual_and_rich_are_the_pinned_ones():
    for package, version in patches.PINNED.items():
        assert patches.installed(package) == version, f"{package} {patches.installed(package)} installed, {version} pinned: reinstall, or upgrade on purpose (this file's docstring)"


# -- the three process-wide patches ------------------------------------------------------


@pytest.mark.parametrize("patch", patches.PATCHES, ids=lambda p: p.name)
def test_the_code_each_patch_relies_on_is_the_code_it_was_checked_against(patch):
    for module, qualname, expected in patch.relies_on:
        found = patches.fingerprint(module, qualname)
        assert found == expected, (
            f"Textual changed {module}.{qualname} (fingerprint {found or 'gone'}, was {expected}): "
            f"re-check patch {patch.name!r} ({patch.what}) in textual_private.py, then update its fingerprint in app/patches.py"
        )


def test_a_fingerprint_is_of_the_source_in_the_file_not_of_the_patched_method():
    patches.apply_all()
    assert patches.fingerprint("textual.cache", "LRUCache.clear") == patches.PATCHES[2].relies_on[0][2]
    assert patches.fingerprint("textual.cache", "LRUCache.no_such_method") == ""
    assert patches.fingerprint("textual.no_such_module", "X") == ""


def test_the_app_applies_every_patch():
    # In a fresh interpreter: in pytest's, another test's app may have applied them already.
    program = """
from headspace_tui.app import patches
assert not any(p.applied() for p in patches.PATCHES), [p.name for p in patches.PATCHES if p.applied()]
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.tmux.server import TmuxServer
HeadspaceApp(Service.build(TmuxServer(socket_name="headspace-patches-unused"), live=False, journal=Journal(None), hooks=False))
print(sorted(p.name for p in patches.PATCHES if p.applied()))
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == str(sorted(p.name for p in patches.PATCHES))


@pytest.mark.parametrize("patch", patches.PATCHES, ids=lambda p: p.name)
def test_each_patch_checks_out_as_doctor_says_it(patch):
    assert patches.check(patch) == (True, f"applied to Textual {patches.PINNED['textual']}: {patch.what}")
    assert patch.applied()


def test_applying_twice_patches_once():
    patches.apply_all()
    replaced = StylesCache.get_inner_outer, Strip.crop_extend, Strip.divide, LRUCache.clear
    patches.apply_all()
    assert (StylesCache.get_inner_outer, Strip.crop_extend, Strip.divide, LRUCache.clear) == replaced
    assert not hasattr(inspect.unwrap(LRUCache.clear.headspace_replaces), "headspace_unlinks")  # type: ignore[attr-defined]


def test_styles_cache_patch_textuals_get_inner_outer_is_an_lru_cache_that_ignores_its_first_argument():
    patches.apply_all()
    original = StylesCache.get_inner_outer.headspace_replaces  # type: ignore[attr-defined]
    assert hasattr(original, "cache_clear") and callable(getattr(original, "__wrapped__", None)), RECHECK.format(what="unpin_styles_caches (no lru_cache)")
    assert _params(original.__wrapped__) == ["cls", "base_background", "background"], RECHECK.format(what="unpin_styles_caches (signature)")
    tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(original.__wrapped__)))
    first = tree.body[0].args.args[0].arg  # type: ignore[attr-defined]
    assert not any(isinstance(n, ast.Name) and n.id == first for n in ast.walk(tree.body[0]) if n is not tree.body[0].args.args[0]), RECHECK.format(
        what="unpin_styles_caches (the result now depends on the StylesCache, not on the two colours alone)"
    )


def test_styles_cache_patch_in_effect_a_widgets_styles_cache_is_not_kept():
    patches.apply_all()
    cache = StylesCache()
    gone = weakref.ref(cache)
    base, background = Color(10, 20, 30), Color(40, 50, 60)
    expected = StylesCache.get_inner_outer.headspace_replaces.__wrapped__(None, base, background)  # type: ignore[attr-defined]
    assert cache.get_inner_outer(base, background) == expected
    del cache
    assert gone() is None, "the patched get_inner_outer keeps the StylesCache it was called on"


def test_strips_patch_textuals_own_cuts_keep_the_strip_in_its_own_cache():
    """Why the patch exists (and what its keys are): Textual's crop_extend and divide cache the strip itself under these keys."""
    patches.apply_all()
    crop_extend, divide = Strip.crop_extend.headspace_replaces, Strip.divide.headspace_replaces  # type: ignore[attr-defined]
    assert set(Strip.__slots__) >= {"_crop_extend_cache", "_divide_cache"}, RECHECK.format(what="strips_free_themselves (cache names)")
    strip = Strip([Segment("abcd")])
    assert crop_extend(strip, 0, 4, None) is strip
    assert strip._crop_extend_cache._cache.get((0, 4, None)) is strip, RECHECK.format(what="strips_free_themselves (crop_extend's key)")
    assert list(divide(strip, [4])) == [strip]
    assert list(strip._divide_cache._cache.get((4,), [])) == [strip], RECHECK.format(what="strips_free_themselves (divide's key)")


def test_strips_patch_in_effect_a_strip_is_not_its_own_cached_cut_and_other_cuts_are_cached():
    patches.apply_all()
    strip = Strip([Segment("abcd")])
    assert strip.crop_extend(0, 4, None) is strip and (0, 4, None) not in strip._crop_extend_cache._cache
    assert list(strip.divide(iter([4, 9]))) == [strip] and not strip._divide_cache._cache
    cut = strip.crop_extend(0, 2, None)
    assert cut.text == "ab" and strip._crop_extend_cache._cache.get((0, 2, None)) is cut
    assert [s.text for s in strip.divide([1, 4])] == ["a", "bcd"] and len(strip._divide_cache._cache) == 1


class _Value:
    pass


def _cached_values_left_by(clear) -> int:
    """How many of three cached values a clear leaves alive until the next full collection."""
    cache: LRUCache[int, _Value] = LRUCache(10)
    values = [_Value() for _ in range(3)]
    refs = [weakref.ref(v) for v in values]
    for n, value in enumerate(values):
        cache.set(n, value)
    del values, value
    was = gc.isenabled()
    gc.disable()
    try:
        clear(cache)
        return sum(ref() is not None for ref in refs)
    finally:
        if was:
            gc.enable()
        gc.collect()


def test_lru_clear_patch_textuals_own_clear_leaves_its_ring_for_the_collector():
    """Why the patch exists: Textual's clear forgets the ring's head only; the ring holds itself and every value."""
    patches.apply_all()
    assert set(LRUCache.__slots__) >= {"_cache", "_head"}, RECHECK.format(what="lru_caches_free_on_clear (ring names)")
    assert _cached_values_left_by(LRUCache.clear.headspace_replaces) == 3, RECHECK.format(  # type: ignore[attr-defined]
        what="lru_caches_free_on_clear (Textual's clear now frees its values: the patch may go)"
    )


def test_lru_clear_patch_in_effect_a_cleared_cache_frees_its_values_at_once():
    patches.apply_all()
    assert _cached_values_left_by(LRUCache.clear) == 0
    cache: LRUCache[str, int] = LRUCache(4)
    cache.set("a", 1)
    cache.clear()
    cache.set("b", 2)
    assert cache.get("b") == 2 and cache.get("a") is None and len(cache) == 1


# -- the other private uses (textual_private.py), one check each -----------------------------


def test_write_between_frames_the_apps_driver():
    app = App()
    assert app._driver is None, RECHECK.format(what="write_between_frames (App._driver)")
    assert _params(Driver.write) == ["self", "data"] and _params(Driver.flush) == ["self"]


def test_filters_the_apps_line_filters_are_the_ones_it_draws_with():
    app = App()
    assert isinstance(app._filters, list) and all(isinstance(f, LineFilter) for f in app._filters), RECHECK.format(what="filters (App._filters)")
    chosen = NoColor()
    textual_private.set_filters(app, [chosen])
    assert list(app.get_line_filters()) == [chosen], RECHECK.format(what="set_filters (App.get_line_filters no longer reads App._filters)")


def test_drop_exit_renderables_what_textual_prints_on_exit():
    app = App()
    assert app._exit_renderables == [], RECHECK.format(what="drop_exit_renderables (App._exit_renderables)")
    assert "self._exit_renderables" in inspect.getsource(App._print_error_renderables)


def test_the_listed_overrides_keep_their_signatures():
    assert _params(App._handle_exception) == ["self", "error"], RECHECK.format(what="OVERRIDES['_handle_exception']")
    assert _params(App._print_error_renderables) == ["self"], RECHECK.format(what="OVERRIDES['_print_error_renderables']")
    assert set(textual_private.OVERRIDES) == {"_handle_exception", "_print_error_renderables"}, "a new override: add its check here"


def test_drop_oldest_toast_a_toast_knows_its_notification_and_the_app_drops_one():
    notification = Notification("hello", "")
    assert Toast(notification)._notification is notification, RECHECK.format(what="drop_oldest_toast (Toast._notification)")
    assert _params(App._unnotify) == ["self", "notification", "refresh"], RECHECK.format(what="drop_oldest_toast (App._unnotify)")


def test_toasts_the_rack_and_its_toasts():
    assert issubclass(Toast, object) and ToastRack.__module__ == "textual.widgets._toast"
    assert 'ToastRack(id="textual-toastrack")' in inspect.getsource(Screen), RECHECK.format(what="toasts (the rack's id, screens/layout.py)")


def test_shrink_render_caches_a_datatables_caches():
    table = DataTable()
    for name in ("_cell_render_cache", "_row_render_cache", "_row_renderable_cache", "_line_cache"):
        assert isinstance(getattr(table, name, None), LRUCache), RECHECK.format(what=f"shrink_render_caches (DataTable.{name})")


def test_binding_chains_and_own_bindings():
    for name in ("_binding_chain", "_modal_binding_chain"):
        assert isinstance(vars(Screen).get(name), property), RECHECK.format(what=f"binding_chain (Screen.{name})")
    assert isinstance(DOMNode()._bindings, BindingsMap), RECHECK.format(what="own_bindings (DOMNode._bindings)")


def test_bindings_shown_the_footers_ready_flag():
    assert isinstance(vars(Footer).get("_bindings_ready"), reactive.Reactive), RECHECK.format(what="bindings_shown (Footer._bindings_ready)")
    assert "self._bindings_ready = True" in inspect.getsource(Footer.bindings_changed)
    assert "if not self._bindings_ready" in inspect.getsource(Footer)


def test_drop_gone_watchers_where_textual_keeps_watchers():
    source = inspect.getsource(reactive._watch)
    assert 'setattr(obj, "__watchers", {})' in source and "watcher_list.append((node, callback))" in source, RECHECK.format(what="drop_gone_watchers (the '__watchers' dict of (node, callback) lists)")


def test_footer_key_disabled():
    assert "disabled" in _params(FooterKey.__init__)
    key = FooterKey("q", "q", "quit", "quit", disabled=True)
    assert textual_private.key_disabled(key), RECHECK.format(what="key_disabled (FooterKey._disabled)")
    textual_private.set_key_disabled(key, False)
    assert not key._disabled and not key.has_class("-disabled")
    assert "self._disabled" in inspect.getsource(FooterKey) and "-disabled" in inspect.getsource(FooterKey)


def test_render_caches_textuals_geometry_caches_and_richs_cell_widths():
    clears = render_caches.caches()
    assert rich.cells.cached_cell_len.cache_clear in clears, "Rich's cell-width cache moved: re-check app/render_caches.py"
    assert {Region.overlaps.cache_clear, Region.translate.cache_clear, Region.intersection.cache_clear} <= set(clears), "re-check app/render_caches.py"  # type: ignore[attr-defined]
