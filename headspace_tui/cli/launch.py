"""Starting the TUI for real: the tmux server, the event log, the service, then the app.

The app is handed a service built here (``service.Service.build``): it
never builds tmux servers, monitors or hosts itself, and tests build theirs
the same way with a private server.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from ..app.main import HeadspaceApp
from ..app.themes import choice_path
from ..service.facade import Service
from ..service.journal import Journal
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
) -> int:
    """Run the TUI; 0 after a normal quit, 1 (with one line and the log's path) after a crash."""
    log_path = logfile.setup()
    server = TmuxServer(socket_name=socket_name, socket_path=socket_path)
    journal, problem = Journal.open()
    if problem:
        log.warning("%s", problem)
        notices = (*notices, problem)
    service = Service.build(server, config=config, include_all=include_all, journal=journal, hosts=hosts, local=local)
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
