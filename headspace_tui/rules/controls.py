"""The agent's own controls: files no rule may let an agent write (or a redirection read), whatever the rule says.

An agent that may write its own settings may widen its own permissions
and hooks (``.claude/settings.local.json``), make the person's editor or
shell run code on the next open (``.vscode/tasks.json``, ``.envrc``,
``.bashrc``), or its repository run code at the next commit
(``.git/hooks``, ``.husky/``).  So these are denied to every allow, for
path rules, every redirection, and every word a wildcard or a prefix rule
let through; an explicit deny rule still applies as written.

A path is protected when one of its folders (or itself) is named in
``FOLDERS``, its file name is in ``FILES``, or it lies in headspace's own
config, state, data or runtime folders.  Pure, given the paths.
"""

from __future__ import annotations

import os
from functools import lru_cache

from ..shared.paths import config_dir, data_dir, runtime_dir, state_dir

# Folders (any segment of the path): agents' settings and hooks, a repository's, editors', the person's keys and
# tools' configuration under home (``.config``, ``.local``: every XDG folder by default, PATH's ``.local/bin``).
FOLDERS = frozenset(
    {
        ".claude", ".codex", ".gemini", ".opencode", ".qwen", ".copilot", ".cursor", ".windsurf", ".continue", ".aider",
        ".kiro", ".roo", ".git", ".githooks", ".husky", ".vscode", ".idea", ".devcontainer", ".zed", ".helix", ".vim",
        ".emacs.d", ".bashrc.d", ".ssh", ".gnupg", ".aws", ".kube", ".docker", ".config", ".local", ".cargo", ".gradle",
        ".m2", ".npm-global", ".mise",
        # What a project's own commands run from (a virtualenv's python and pip.conf, node_modules/.bin): npm test runs them.
        ".venv", "venv", "node_modules",
    }
)  # fmt: skip
# File names: shell start-up files, per-folder environments, tool configurations that run commands.
FILES = frozenset(
    {
        ".envrc", ".env.local.sh", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
        ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".inputrc", ".kshrc", ".cshrc", ".tcshrc", ".login", ".logout",
        ".bash_aliases", ".vimrc", ".gvimrc", ".exrc", ".nvimrc", ".nvim.lua", ".emacs", ".tmux.conf", ".screenrc",
        ".xprofile", ".xsession", ".xsessionrc", ".xinitrc", ".pam_environment", ".mcp.json", "opencode.json",
        "opencode.jsonc", ".claude.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".gitconfig",
        ".git-credentials", ".pgpass", ".my.cnf", ".pre-commit-config.yaml", "lefthook.yml", "lefthook.yaml",
        ".lefthook.yml", "lefthook-local.yml", ".gitmodules", ".lesskey", ".netrc", ".pypirc", ".overcommit.yml",
        ".simple-git-hooks.json", ".aider.conf.yml", "pip.conf", "pip.ini", "pyvenv.cfg", ".tool-versions", "mise.toml",
        ".mise.toml", "rust-toolchain", "rust-toolchain.toml",
        # What an agent reads as its own instructions at every start: written, they steer every session after.
        "claude.md", "claude.local.md", "agents.md", "agents.override.md", "gemini.md", "qwen.md",
    }
)  # fmt: skip
SUFFIXES = (".code-workspace", ".zwc")  # an editor's workspace (its tasks), zsh's compiled start-up files
PREFIXES = (".lintstagedrc", "lint-staged.config.", ".simple-git-hooks")  # what lint-staged and its kind run at a commit
_FOLDERS = frozenset(name.casefold() for name in FOLDERS)
_FILES = frozenset(name.casefold() for name in FILES)


def own_folders() -> tuple[str, ...]:
    """headspace's own folders (its config and rules, state and event log, data, runtime and hook spool), as real paths."""
    return _real(tuple(str(place()) for place in (config_dir, state_dir, data_dir, runtime_dir)))


@lru_cache(maxsize=8)
def _real(folders: tuple[str, ...]) -> tuple[str, ...]:
    """Resolved once per set of folders: a judge per request must not walk four paths through the file system each time."""
    return tuple(os.path.realpath(folder) for folder in folders)


def protected(path: str, own: tuple[str, ...] = ()) -> str:
    """Why ``path`` (absolute, normalised) is one of the controls ("" when it is not).

    Names are compared case-folded: on a file system that folds case (macOS's
    own, a Windows drive) ``.CLAUDE/`` is ``.claude/``.
    """
    parts = [p for p in path.split("/") if p]
    folded = [p.casefold() for p in parts]
    for part, name in zip(parts[:-1], folded[:-1], strict=True):
        if name in _FOLDERS:
            return f"{path} is in {part}/ (an agent's, a repository's or a tool's own controls)"
    if parts and folded[-1] in _FOLDERS:
        return f"{path} is {parts[-1]}/ itself"
    if parts and (folded[-1] in _FILES or folded[-1].endswith(SUFFIXES) or folded[-1].startswith(PREFIXES)):
        return f"{path} is a start-up or control file ({parts[-1]})"
    for folder in own:
        if path == folder or path.startswith(folder.rstrip("/") + "/"):
            return f"{path} is headspace's own (its config, rules or state)"
    return ""
