"""Handlers that cannot take the app down (the app's and the main screen's alike).

A report that arrives while the app is shutting down is dropped (its
widgets are going); an error in a handler is logged with its traceback and
shown as one line, and the next report is handled as usual.
"""

from __future__ import annotations

import functools
import logging

from ..shared.safe_text import clean

log = logging.getLogger(__name__)


def ui_handler(handler):
    """Wrap a handler of a node (the app, a screen) so that its errors stay one line in the UI."""

    @functools.wraps(handler)
    def guarded(self, *args):
        if not self.is_running:
            return
        try:
            handler(self, *args)
        except Exception as exc:
            log.exception("%s failed", handler.__name__)
            self.notify(clean(f"display error ({type(exc).__name__}: {exc}); details in the log", 300), severity="error", markup=False)

    return guarded
