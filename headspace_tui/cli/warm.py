"""``headspace popup-ui``: the warm UI, run by the popup's launcher in headspace's private tmux server (cli/popup.py, docs/popup.md).

A client of the resident service only: when the service cannot be used it
ends at once (the launcher then starts the cold headspace), and it never
watches from its own process (that would attach control clients to the
user's server from a process nobody sees).  Its lock says it runs; it ends
with the service and with the watched tmux server, removing its control
socket and its private server's socket on the way out.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

from .. import __version__
from ..shared import logfile, theme_files
from ..shared.config import ConfigError, load_config
from ..shared.resident_place import PlaceError, make_folder, place_of, read_card, take_lock
from ..tmux.server import TmuxServer
from . import popup

log = logging.getLogger(__name__)

EXIT_NOT_WARM = 3  # the service could not be used, or another warm UI runs: the launcher starts the cold headspace


def run_warm(socket_path: str) -> int:
    """The warm UI for the tmux server at ``socket_path`` (an absolute path: ``$TMUX`` here is our private server's)."""
    for name in popup.HERE:
        os.environ.pop(name, None)  # we run inside our private server: nothing here may take it for the user's
    with contextlib.suppress(OSError):
        # Started from / (no folder of the user's on the import path); the home folder is where a new agent
        # starts when none is selected, as a long-lived process pins no mount the user would take away.
        os.chdir(os.path.expanduser("~"))
    log_path = logfile.setup()
    server = TmuxServer(socket_path=socket_path)
    place = popup.ui_place(server.identity)
    try:
        config = load_config(None)
    except ConfigError as exc:
        log.warning("warm UI: not started: %s", exc)
        return EXIT_NOT_WARM  # the cold headspace says what is wrong, on its screen
    try:
        make_folder(place)
        lock = take_lock(place)
    except PlaceError as exc:
        log.warning("warm UI: not started: %s", exc)
        return EXIT_NOT_WARM
    try:
        return _run(server, place, config, log_path)
    finally:
        for path in (place.socket, popup.tmux_socket(place)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # tmux 3.3a leaves its socket file; the server itself ends with our pane
        os.close(lock)


def _run(server: TmuxServer, place, config, log_path) -> int:
    from ..app.themes import choice_path
    from ..app.warm import WarmApp
    from .launch import connect_resident

    tmux_pid = server.server_pid()
    if not tmux_pid:
        log.warning("warm UI: not started: no tmux server at %s", server.where())
        return EXIT_NOT_WARM
    facade, why_not = connect_resident(server, config, restart=False, here={})
    if facade is None or why_not:
        log.warning("warm UI: not started: %s", why_not or "no tmux server")
        return EXIT_NOT_WARM
    service_pid = (read_card(place_of(server.identity)) or {}).get("pid")
    if not isinstance(service_pid, int) or service_pid <= 0:
        log.warning("warm UI: not started: the service's card names no pid")
        return EXIT_NOT_WARM

    def detach() -> None:
        popup.private_tmux(place, "detach-client", "-s", f"={popup.SESSION}")

    def resize(cols: int, rows: int) -> None:
        popup.private_tmux(place, "resize-window", "-t", f"={popup.SESSION}:", "-x", str(cols), "-y", str(rows))

    app = WarmApp(
        facade,
        log_path=log_path,
        theme_dirs=[theme_files.builtin_dir(), theme_files.user_dir()],
        theme_choice=choice_path(),
        control=place.socket,
        detach=detach,
        resize=resize,
        here=facade.set_here,  # type: ignore[attr-defined]  # a ServiceClient
        lifelines=(service_pid, tmux_pid),
        version=__version__,
    )
    app.end_on_signals = app.pace_gc = True
    try:
        app.run()
    except Exception as exc:
        log.error("warm UI stopped on an unexpected error", exc_info=exc)
        return 1
    if app.crash is not None:
        print(f"headspace: the warm UI stopped on an unexpected error; details in {log_path}", file=sys.stderr)
        return 1
    log.info("warm UI ended (%s) after %d opens", app.ended_by or "signal", app.opens)
    return 0
