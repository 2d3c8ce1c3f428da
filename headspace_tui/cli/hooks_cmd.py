"""``headspace hooks``: install, remove or show headspace's hooks in Claude's settings (here or on a host), or its rules hook in Codex's, Copilot CLI's or Qwen Code's."""

from __future__ import annotations

import argparse
import shutil
from typing import TYPE_CHECKING

from .common import EXIT_OK, UserError, config_of

if TYPE_CHECKING:
    from ..detect.family import Family


def cmd_hooks(args: argparse.Namespace) -> int:
    import os

    from ..detect.families import CLAUDE, FAMILIES
    from ..hooks.settings import ANSWER_WAIT, DENIED_EVENT, HooksError, backup_path, install, status, uninstall
    from .hooks_text import said

    held = [family for family in FAMILIES if family.held_hook is not None and family.held_hook.hooks_file is not None and getattr(args, family.name, False)]
    if len(held) > 1:
        raise UserError("one family's hooks at a time: " + ", ".join(f"--{family.name}" for family in held))
    if held:
        return _held_hooks(args, held[0])
    if args.host:
        from .hooks_remote import RemoteHooksError, run

        try:
            print(run(args, config_of(args)))
        except RemoteHooksError as exc:
            raise UserError(str(exc)) from None
        return EXIT_OK
    if args.project is not None:
        if not args.project.is_dir():
            raise UserError(f"no such directory: {args.project}")
        path = args.project.resolve() / ".claude" / "settings.json"
    else:
        assert CLAUDE.hooks is not None  # the family whose hooks these are (Family.hooks: where its settings live)
        path = CLAUDE.hooks.settings_folder(os.environ) / "settings.json"
    try:
        if args.hooks_action == "install":
            if args.wait is not None and not args.answer:
                raise UserError("--wait goes with --answer")
            wait = (args.wait if args.wait is not None else ANSWER_WAIT) if args.answer else None
            changed = install(path, answer_wait=wait)
            backup = backup_path(path)
            denied = DENIED_EVENT in status(path).events
            assert CLAUDE.starting is not None  # the program a person types: Claude's binary on PATH
            on_path = shutil.which(CLAUDE.starting.program) is not None
            print(said("install", {"path": path, "changed": changed, "backup": backup if backup.exists() else None, "denied": denied, "claude_found": on_path}, wait))
        elif args.hooks_action == "uninstall":
            print(said("uninstall", {"path": path, "done": uninstall(path), "backup": backup_path(path)}, None))
        else:
            found = status(path)
            facts = {
                "path": path,
                "installed": found.installed,
                "exists": found.exists,
                "events": found.events,
                "missing": found.missing,
                "commands": found.commands,
                "answer_wait": found.answer_wait,
            }
            print(said("status", facts, None))
    except HooksError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}") from None
    return EXIT_OK


def _held_hooks(args: argparse.Namespace, family: Family) -> int:
    """``headspace hooks ACTION --codex|--copilot|--qwen``: the rules hook in the family's own hooks file (``Family.held_hook``), on this machine."""
    import os

    from ..hooks.settings import ANSWER_EVENT, HooksError, backup_path, holds_own, install_held, install_own, status, uninstall, uninstall_own

    held = family.held_hook
    assert held is not None and held.hooks_file is not None, f"{family.name} keeps no hooks file headspace installs"
    if args.host or args.project is not None or getattr(args, "answer", False) or getattr(args, "wait", None) is not None:
        raise UserError(f"--{family.name} goes alone: {family.label}'s own hooks file on this machine")
    path = held.hooks_file(os.environ)
    hook = f"headspace's rules hook for {family.label}"
    try:
        if args.hooks_action == "install":
            if held.own_file is not None:
                changed = install_own(path, held.own_file, family.name, held.wait)
                where = "its own file"
            else:
                changed = install_held(path, family.name, held.wait, in_pane=held.in_pane)
                backup = backup_path(path)
                where = f"backup: {backup}" if backup.exists() else "new file"
            trust = f"; {family.label} asks you to trust it at its next start (or in /hooks)" if held.asks_trust else f"; {family.label} runs it from its next start"
            if changed:
                print(f"installed {hook} in {path} ({where}){trust}")
            else:
                print(f"{hook} already installed in {path}")
        elif args.hooks_action == "uninstall":
            done = uninstall_own(path) if held.own_file is not None else uninstall(path)
            print({"absent": f"no headspace hook in {path}"}.get(done, f"removed {hook} from {path} ({done})"))
        else:
            found = status(path)
            on = holds_own(path) if held.own_file is not None else ANSWER_EVENT in found.events
            print(f"{hook} {'installed' if on else 'not installed'} in {path}" + ("" if found.exists else " (no such file)"))
    except HooksError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}") from None
    return EXIT_OK
