"""Command-line entry point."""

from __future__ import annotations

import argparse
import sys

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="headspace",
        description="One screen for every Claude Code agent in tmux: who needs you, answered in one key.",
    )
    parser.add_argument("--version", action="version", version=f"headspace {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
