"""``headspace diff``: an agent's change, as the running service's baselines give it."""

from __future__ import annotations

import argparse
import re
import sys

from .common import EXIT_OK, UserError, clean, config_of, resolve_target, server_of


def cmd_diff(args: argparse.Namespace) -> int:
    """``headspace diff TARGET``: the agent's change, as the running service's baselines give it (git runs on the agent's host)."""
    import asyncio

    from ..api.errors import ServiceError
    from ..changes.unified import render, stat
    from ..resident.client import asked_place
    from ..resident.facade_client import ServiceClient
    from ..shared import safe_text

    config = config_of(args)
    server = server_of(args)
    pane_id = args.target if re.fullmatch(r"%\d+(@\S+)?", args.target) else resolve_target(server, args.target).pane_id
    try:
        place = asked_place(server.identity)
    except ServiceError as exc:
        raise UserError(f"no headspace service keeps baselines for this tmux server ({exc}): start headspace (or 'headspace serve') first") from None
    diff = asyncio.run(ServiceClient(place, config=config).changes(pane_id, args.scope or "turn"))
    if diff.error:
        raise UserError(f"{pane_id}: {diff.error}")
    if diff.note and (diff.empty or args.stat):
        print(clean(f"# {pane_id}: {diff.note}"), file=sys.stderr)
    text = stat(diff) if args.stat else render(diff)
    sys.stdout.write(safe_text.clean_block(text, limit=len(text) + 1))  # outside text: no control character reaches the terminal
    return EXIT_OK
