"""Starting the TUI for real: the tmux server, the event log, the service, then the app.

The app is handed its facade from here: by default a client of the
resident service of its tmux server (``resident.facade_client``, the
service started first if none runs), so that a popup opened and closed
twenty times attaches nothing and draws the whole table on its first
frame; with ``--no-service`` (or a view the service does not watch) a
service of its own, built here (``service.Service.build``).  The app never
builds tmux servers, monitors or hosts itself, and tests build theirs the
same way with a private server.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from ..api.facade import Facade, ServiceError
from ..app.main import HeadspaceApp
from ..app.themes import choice_path
from ..resident.facade_client import ServiceClient
from ..shared import logfile, theme_files
from ..shared.config import Config, HostSpec
from ..shared.safe_text import clean
from ..tmux.server import TmuxServer

log = logging.getLogger(__name__)


def run_app(
    *,
    socket_name: str | None,
    socket_path: str | None,
    include_all: bool,
    config: Config,
    notices: tuple[str, ...] = (),
    config_path: Path | None = None,
    hosts: Sequence[HostSpec] = (),
    local: bool = True,
    resident: bool = False,
) -> int:
    """Run the TUI; 0 after a normal quit, 1 (with one line and the log's path) after a crash.

    ``resident``: the view is the one the resident service watches (this
    server, the configured hosts, the default config): be its client.
    """
    log_path = logfile.setup()
    server = TmuxServer(socket_name=socket_name, socket_path=socket_path)
    service: Facade | None = None
    journal = None
    if resident:
        service, why_not = connect_resident(server, config)
        if why_not:
            notices = (*notices, why_not)
    if service is None:
        from ..service.facade import Service  # the watcher in this process: a client of the resident service never loads it
        from ..service.records.journal import Journal

        journal, problem = Journal.open()
        if problem:
            log.warning("%s", problem)
            notices = (*notices, problem)
        # The service in this process, behind the same client as a resident one: the app holds copies and calls, never the service.
        service = ServiceClient.in_process(Service.build(server, config=config, include_all=include_all, journal=journal, hosts=hosts, local=local))
    app = HeadspaceApp(
        service,
        notices=notices,
        log_path=log_path,
        config_path=config_path,
        theme_dirs=[theme_files.builtin_dir(), theme_files.user_dir()],
        theme_choice=choice_path(),
    )
    app.end_on_signals = app.pace_gc = True  # the real process only: tests' apps share pytest's process
    try:
        result = app.run()
    except Exception as exc:
        log.error("headspace stopped on an unexpected error", exc_info=exc)
        app.crash = app.crash or exc
        result = None
    finally:
        if journal is not None:
            journal.close()
    if app.crash is not None or (app.return_code or 0) != 0:
        error = app.crash
        what = f"{type(error).__name__}: {error}" if error is not None else f"exit status {app.return_code}"
        where = f"; details in {log_path}" if log_path else ""
        print(f"headspace: stopped on an unexpected error ({clean(what, 300)}){where}", file=sys.stderr)
        return 1
    if result:
        print(f"Jump to the agent with:\n  {result}")
    return 0


def connect_resident(server: TmuxServer, config: Config, *, restart: bool = True, here: dict[str, str] | None = None) -> tuple[Facade | None, str]:
    """A client of the resident service of ``server``, started first when none runs, with its whole state taken; or None and why not (one line).

    A service of an older version is stopped and started anew (an upgrade
    never leaves an old one answering).  ``restart``: start it again if it
    dies later (the warm UI ends with it instead).  Anything in the way, a newer
    service or one that does not start, leaves the TUI to watch from its
    own process, and says so.
    """
    from ..resident.start import asked_or_started, start_service
    from ..shared.resident_place import PlaceError

    if server.server_pid() is None:
        return None, ""  # no tmux server: the app says so itself, as it always has

    try:
        place = asked_or_started(server)
        facade = ServiceClient(place, config=config, restart=functools.partial(start_service, server, place) if restart else None, here=here)
        facade.connect()
    except (ServiceError, PlaceError, OSError) as exc:
        log.warning("the resident service could not be used: %s", exc)
        return None, f"watching from this headspace alone: the headspace service could not be used ({clean(str(exc), 160)})"
    return facade, ""
