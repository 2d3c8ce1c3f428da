"""``headspace popup-binding``, ``popup`` and ``popup-ui``: the tmux popup's key, its launcher and its warm UI."""

from __future__ import annotations

import argparse

from .common import EXIT_OK, UserError


def cmd_popup_binding(args: argparse.Namespace) -> int:
    from .popup_key import binding

    try:
        print(binding(args.key))
    except ValueError as exc:
        raise UserError(f"--key {args.key!r}: {exc}") from None
    return EXIT_OK


def cmd_popup(args: argparse.Namespace) -> int:
    """The popup key's launcher: no Textual here (cli/popup.py); the warm UI, else the cold headspace, in this popup."""
    from .popup import main_launcher
    from .popup_key import installed_command

    if getattr(args, "host", None) or getattr(args, "no_local", False) or args.all or args.no_service or args.config is not None:
        raise UserError("popup shows the view the service watches: run 'headspace' with --host, --all, --config or --no-service instead")
    socket_args = ["-S", args.socket_path] if args.socket_path else ["-L", args.socket_name] if args.socket_name else []
    return main_launcher(socket_args, installed_command())


def cmd_popup_ui(args: argparse.Namespace) -> int:
    from .warm import run_warm

    if not args.socket_path or not args.socket_path.startswith("/"):
        raise UserError("popup-ui is started by 'headspace popup', with -S and the tmux server's socket path")
    return run_warm(args.socket_path)
