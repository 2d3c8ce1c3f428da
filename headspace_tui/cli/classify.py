"""``headspace classify``: one screen read as the detector reads it."""

from __future__ import annotations

import argparse
import sys

from .common import EXIT_OK, UserError, clean, json_line, load_plugins_here


def cmd_classify(args: argparse.Namespace) -> int:
    from ..detect.families import UnknownFamily, family_named
    from ..model import DEFAULT_FAMILY

    load_plugins_here()
    try:
        family = family_named(args.agent or DEFAULT_FAMILY)
    except UnknownFamily as exc:
        raise UserError(str(exc)) from None
    try:
        data = sys.stdin.buffer.read() if str(args.file) == "-" else args.file.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    observation = family.read(data.decode("utf-8", errors="replace"), command=args.pane_command, version=args.claude_version, title=args.title)
    if args.json:
        print(json_line(observation.to_json()))
        return EXIT_OK
    from ..api.rows import describe
    from ..model import Agent

    print(clean(describe(Agent(pane_id="", target="", session="", family=family.name, observation=observation))))
    for evidence in observation.evidence:
        print(f"  why: {clean(evidence)}")
    return EXIT_OK
