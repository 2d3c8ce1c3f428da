"""``headspace`` with no command: the full-screen table."""

from __future__ import annotations

import argparse

from .common import host_specs, plugin_problems


def cmd_tui(args: argparse.Namespace) -> int:
    from ..shared.config import Config, ConfigError, load_config
    from . import leftovers
    from .launch import run_app

    leftovers.sweep()  # what a SIGKILLed headspace left (its socket, its ssh control folders)

    # A broken config must not keep the user from their agents: the app starts
    # with the defaults and says what is wrong, in one line, on its screen.
    notices: tuple[str, ...] = ()
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        config, notices = Config(), (f"{exc}; using the defaults",)
    local, specs = host_specs(args, config)
    # The service watches this server and the configured hosts with the default config: any other view is watched from here.
    own_view = args.all or getattr(args, "host", None) or getattr(args, "no_local", False) or args.config is not None or notices
    notices += tuple(plugin_problems())  # said on the screen; the service loads the same plug-ins for itself
    return run_app(
        socket_name=args.socket_name,
        socket_path=args.socket_path,
        include_all=args.all,
        config=config,
        notices=notices,
        config_path=args.config,
        hosts=specs,
        local=local,
        resident=not (args.no_service or own_view),
    )
