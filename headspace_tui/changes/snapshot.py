"""A work tree as git sees it, kept as a tree object without touching the user's repository.

Why not ``git stash create`` or a commit: both write to the user's
repository (objects at least; a stash or a ref at worst), and several
agents in one work tree would each see the others' changes as their own.
A snapshot here is the work tree's content (tracked and untracked files,
ignored ones left out, as ``git add -A`` sees them) written as a tree:

* through a temporary index: a copy of the user's own index (so only the
  files whose stat changed are read again) in a folder of ours, never the
  user's index, its lock, HEAD, the refs or the stash;
* into an object store of ours (``GIT_OBJECT_DIRECTORY``), with the user's
  objects as an alternate (read, never written): a blob git already has is
  not copied, a new one is written to our store only.  The user's
  repository is only read.

Stores live under ``$XDG_DATA_HOME/headspace/changes/<repository>/`` (on the
agent's own host: the probe runs this module there), one per repository
(its common git folder, so linked work trees share one).  A store no
baseline needs any more is removed (``prune``): baselines belong to live
agents, so a store is removed a week after the last snapshot written to it,
and each time headspace starts.

A folder that is no git work tree gets a repository of ours instead (``plain``):
its git folder, index and objects live in the store, the folder is its
work tree, and nothing is written into the folder.  Such a folder can be
anything (a home folder), so before its first baseline it is counted and
refused past PLAIN_FILES files or PLAIN_BYTES bytes, saying so.

The diff of two snapshots is ``git diff`` of two trees in the same
environment (the user's attributes and diff settings apply; no external
diff, no text conversion, no colour).  Standard library only, Python 3.9.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from .model import Diff
from .unified import parse

GIT_TIMEOUT = 30.0  # s for one git command (a snapshot of a very large tree reads every changed file)
STORE_KEPT = 7 * 86400.0  # s a store lives after its last snapshot
DIFF_OPTIONS = (
    "diff",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "-M",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)
# Settings that would make a snapshot write where it must not, or run what it must not.
SAFE_CONFIG = (
    "-c",
    "core.hooksPath=/dev/null",  # no hook of the user's runs (git add runs post-index-change)
    "-c",
    "core.fsmonitor=false",  # no hook program run on the user's behalf
    "-c",
    "core.splitIndex=false",  # a split index would write its shared part into the user's .git
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "diff.noprefix=false",
    "-c",
    "diff.mnemonicPrefix=false",
    "-c",
    "diff.suppressBlankEmpty=false",  # a blank context line keeps its space: the line numbers stay right
    "-c",
    "diff.renames=true",  # renames, never "copy from" headers
)
UNTRACKED_CAP = 5 << 20  # an untracked file larger than this is left out of a snapshot (a build output, a dump): said in its note
PLAIN_FILES = 20_000  # a folder outside git with more files than this gets no baseline (a home folder, a data dump): said
PLAIN_BYTES = 512 << 20  # ... or more bytes in its files (each one under UNTRACKED_CAP: larger ones are left out anyway)
NOT_GIT = "not a git repository"
DIFF_BYTES = 8 << 20  # at most this much of a diff's text is read; its counts come whole from --numstat


class NotARepository(Exception):
    """The folder is not in a git work tree (or git is not installed); its message says which, for people."""


@dataclass(frozen=True)
class Repository:
    """Where a folder's work tree is and where its git keeps things."""

    top: str  # the work tree's top folder
    git_dir: str  # this work tree's git folder (a linked work tree has its own)
    index: str  # this work tree's index file
    objects: str  # the repository's object folder (shared by linked work trees)
    common: str  # the repository's common git folder: what a store is named by (a plain folder's own path)
    plain: bool = False  # a folder outside git: its git folder, index and objects are ours, in its store


@dataclass(frozen=True)
class Snapshot:
    tree: str  # the tree object's id
    repository: Repository
    at: float  # time.time() when it was taken
    took: float  # seconds
    left_out: int = 0  # files git could not read, or untracked files over UNTRACKED_CAP


def data_root(env: dict | None = None) -> Path:
    environ = os.environ if env is None else env
    base = environ.get("XDG_DATA_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".local", "share")
    return Path(base) / "headspace" / "changes"


def repository(folder: str, root: Path | None = None) -> Repository:
    """The work tree ``folder`` is in, or (outside git) the folder itself with a repository of ours in its store under ``root``.

    ``NotARepository`` when the folder is gone, git is not installed, or a
    bare repository is all there is.
    """
    if not folder or not os.path.isdir(folder):
        raise NotARepository("the agent's folder is gone")
    out = _git(folder, ["rev-parse", "--is-inside-work-tree", "--show-toplevel", "--git-dir", "--git-common-dir", "--git-path", "index", "--git-path", "objects"], check=False)
    lines = out.stdout.splitlines()
    if out.returncode != 0 and "not a git repository" in out.stderr:
        return plain(folder, root or data_root())
    if out.returncode != 0 or len(lines) < 6 or lines[0] != "true":
        raise NotARepository(NOT_GIT)
    top = lines[1]

    def absolute(path: str) -> str:
        return path if os.path.isabs(path) else os.path.normpath(os.path.join(folder, path))

    return Repository(top=top, git_dir=absolute(lines[2]), common=absolute(lines[3]), index=absolute(lines[4]), objects=absolute(lines[5]))


def plain(folder: str, root: Path) -> Repository:
    """A folder outside git as a work tree of a repository of ours (made on first use, in its store)."""
    top = os.path.realpath(folder)
    store = root / ("plain-" + hashlib.sha256(top.encode("utf-8", "surrogateescape")).hexdigest()[:24])
    git_dir = store / "git"
    if not (git_dir / "objects").is_dir():
        store.mkdir(parents=True, exist_ok=True, mode=0o700)
        _git(str(store), ["init", "-q", "--bare", str(git_dir)])
    return Repository(top=top, git_dir=str(git_dir), index=str(git_dir / "index"), objects=str(git_dir / "objects"), common=top, plain=True)


def _count_plain(repo: Repository, store: Path) -> None:
    """Refuse (``NotARepository``, lasting) a plain folder too large to keep a baseline of: counted up to the caps, links not followed."""
    files, size, folders = 0, 0, [repo.top]
    try:
        skip = os.stat(store.parent).st_ino  # our stores' folder, by inode (a realpath per folder cost more than the count)
    except OSError:
        skip = -1
    while folders:
        here = folders.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != ".git" and not (entry.inode() == skip and os.path.samefile(entry.path, store.parent)):
                        folders.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    files += 1
                    length = entry.stat(follow_symlinks=False).st_size
                    size += length if length <= UNTRACKED_CAP else 0
            except OSError:
                continue
            if files > PLAIN_FILES or size > PLAIN_BYTES:
                what = f"over {PLAIN_FILES:,} files" if files > PLAIN_FILES else f"over {PLAIN_BYTES >> 20} MB"
                raise NotARepository(f"{NOT_GIT}, and too large for a baseline of its own ({what}): no diff here")


def store_of(repo: Repository, root: Path) -> Path:
    """Our object store for ``repo``: a folder named by its common git folder's real path (a plain folder's: its repository's)."""
    if repo.plain:
        return Path(repo.git_dir).parent
    name = hashlib.sha256(os.path.realpath(repo.common).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return root / name


def objects_of(repo: Repository, root: Path | None = None) -> Path:
    """Where our snapshots' objects are: the store's object folder (a plain folder's: its repository's own)."""
    return Path(repo.objects) if repo.plain else store_of(repo, root or data_root()) / "objects"


def snapshot(folder: str, root: Path | None = None) -> Snapshot:
    """The work tree ``folder`` is in, as a tree in our store; ``NotARepository`` or ``RuntimeError`` (git failed)."""
    began = time.monotonic()
    repo = repository(folder, root)
    store = store_of(repo, root or data_root())
    objects = objects_of(repo, root)
    objects.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.utime(store)  # the store's age is its last snapshot's (prune)
    if repo.plain and not os.path.exists(repo.index):
        _count_plain(repo, store)  # once, before its first baseline: later ones are git's own walk, by the files' stat
    with tempfile.TemporaryDirectory(prefix="snap-", dir=store) as scratch:
        index = os.path.join(scratch, "index")
        try:
            shutil.copy2(repo.index, index)  # git replaces its index by rename: a copy is whole, old or new (its time kept)
        except FileNotFoundError:
            pass  # a repository with no index yet (nothing added): ours starts empty
        env = _env(repo, objects, index)
        config = _no_filters(repo)  # before every command that may read the work tree's files
        untracked = _git(repo.top, ["config", "--get", "status.showUntrackedFiles"], env=env, check=False).stdout.strip() != "no"
        left = _left_out(repo, env, config, store) if untracked else []
        added = _git(repo.top, [*config, "add", "-A" if untracked else "-u", "--ignore-errors", "--", ".", *left], env=env, check=False)
        unreadable = sum(1 for line in added.stderr.splitlines() if line.startswith(("error:", "warning: could not")))
        if added.returncode not in (0, 1) and not unreadable:  # 1: some files could not be read (said on stderr): the rest is kept
            raise RuntimeError(f"git add: {added.stderr.strip().splitlines()[-1] if added.stderr.strip() else 'failed'}")
        tree = _git(repo.top, [*config, "write-tree"], env=env).stdout.strip()  # it may read files again: no filter either
        if repo.plain:
            os.replace(index, repo.index)  # our own index: the next snapshot reads again only the files whose stat changed
    big = sum(1 for word in left if not word.endswith(f"){_store_path(repo, store)}"))
    return Snapshot(tree=tree, repository=repo, at=time.time(), took=time.monotonic() - began, left_out=unreadable + big)


def _store_path(repo: Repository, store: Path) -> str:
    """Where headspace's stores are (the folder above them all), relative to the work tree ("../…" when outside it)."""
    return os.path.relpath(store.parent, repo.top)


def _no_filters(repo: Repository) -> list[str]:
    """``-c`` words that turn off every clean/smudge filter the user configured: git add must run no program of theirs (git-lfs, git-crypt)."""
    out = _git(repo.top, ["config", "--name-only", "--get-regexp", r"^filter\."], check=False).stdout.split()
    names = sorted({key[len("filter.") : key.rfind(".")] for key in out if key.count(".") >= 2})
    return [word for name in names for word in ("-c", f"filter.{name}.clean=", "-c", f"filter.{name}.process=", "-c", f"filter.{name}.required=false")]


def _left_out(repo: Repository, env: dict, config: list[str], store: Path) -> list[str]:
    """Pathspecs leaving out of a snapshot the untracked files over UNTRACKED_CAP, and our own store if it lies in the work tree."""
    words = []
    inside = _store_path(repo, store)
    if not inside.startswith(".."):
        words.append(f":(exclude,literal){inside}")
    listed = _git(repo.top, [*config, "ls-files", "-z", "--others", "--exclude-standard"], env=env, check=False).stdout
    for name in listed.split("\0"):
        if not name:
            continue
        try:
            info = os.lstat(os.path.join(repo.top, name))
        except OSError:
            continue
        if info.st_size > UNTRACKED_CAP:
            words.append(f":(exclude,literal){name}")
            if len(words) > 500:
                break
    return words


def diff_text(folder: str, old: str, new: str, root: Path | None = None) -> str:
    """``git diff old new`` (two trees of our store) as text, for unified.parse: at most DIFF_BYTES of it (see ``counts``)."""
    repo = repository(folder, root)
    objects = objects_of(repo, root)
    if not objects.is_dir():
        raise RuntimeError("the snapshots of this repository were removed")
    return _git(repo.top, [*DIFF_OPTIONS, old, new], env=_env(repo, objects, os.devnull), limit=DIFF_BYTES).stdout


def diff_of(folder: str, old: str, new: str, root: Path | None = None) -> Diff:
    """The diff of two trees of our store in the model: its text read up to DIFF_BYTES, its counts whole when it was cut."""
    text = diff_text(folder, old, new, root)
    diff = parse(text)
    if len(text.encode("utf-8", "replace")) < DIFF_BYTES - (1 << 16):
        return diff
    whole = counts(folder, old, new, root)
    files = tuple(replace(f, added=whole[f.path][0], removed=whole[f.path][1]) if f.path in whole else f for f in diff.files)
    shown = {f.path for f in files}
    more = sum(1 for path in whole if path not in shown)
    return Diff(files, more, sum(a for a, _ in whole.values()), sum(r for _, r in whole.values()), diff.note, diff.error)


def counts(folder: str, old: str, new: str, root: Path | None = None) -> dict[str, tuple[int, int]]:
    """Each changed file's (added, removed) lines, whole (``git diff --numstat``): what a diff cut at DIFF_BYTES still counts."""
    repo = repository(folder, root)
    objects = objects_of(repo, root)
    out = _git(repo.top, ["diff", "--no-ext-diff", "--no-textconv", "-M", "--numstat", "-z", old, new], env=_env(repo, objects, os.devnull)).stdout
    found: dict[str, tuple[int, int]] = {}
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        head = fields[i]
        if not head:
            i += 1
            continue
        parts = head.split("\t")
        added, removed = (int(parts[0]) if parts[0].isdigit() else 0), (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0)
        if len(parts) >= 3 and parts[2]:
            found[parts[2]] = (added, removed)
            i += 1
        else:  # a rename: its old and new paths follow
            found[fields[i + 2] if i + 2 < len(fields) else ""] = (added, removed)
            i += 3
    return found


def prune(root: Path | None = None, now: float | None = None, kept: float = STORE_KEPT) -> int:
    """Remove the stores no snapshot was written to for ``kept`` seconds; how many went."""
    base = root or data_root()
    gone = 0
    moment = time.time() if now is None else now
    try:
        stores = list(base.iterdir())
    except OSError:
        return 0
    for store in stores:
        try:
            if store.is_dir() and not store.is_symlink() and moment - store.stat().st_mtime > kept:
                shutil.rmtree(store)
                gone += 1
        except OSError:
            continue
    return gone


def _env(repo: Repository, objects: Path, index: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_INDEX_FILE": index,
            "GIT_OBJECT_DIRECTORY": str(objects),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": repo.objects,
            "GIT_DIR": repo.git_dir,
            "GIT_WORK_TREE": repo.top,
            "GIT_OPTIONAL_LOCKS": "0",  # no lock taken on anything of the user's to refresh it
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
        }
    )
    if repo.plain:
        del env["GIT_ALTERNATE_OBJECT_DIRECTORIES"]  # its objects are all ours
    return env


def _git(cwd: str, args: list, env: dict | None = None, check: bool = True, limit: int = 0) -> subprocess.CompletedProcess:
    base = env if env is not None else {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    if limit:
        return _git_cut(cwd, args, base, limit)
    try:
        out = subprocess.run(
            ["git", *SAFE_CONFIG, *args],
            cwd=cwd,
            env=base,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
        )
    except FileNotFoundError:
        raise NotARepository("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"git {args[0]} took longer than {GIT_TIMEOUT:g} s") from None
    result = subprocess.CompletedProcess(out.args, out.returncode, out.stdout.decode("utf-8", "replace"), out.stderr.decode("utf-8", "replace"))
    if check and result.returncode != 0:
        raise RuntimeError(f"git {args[0]}: {result.stderr.strip().splitlines()[-1] if result.stderr.strip() else 'failed'}")
    return result


def _git_cut(cwd: str, args: list, env: dict, limit: int) -> subprocess.CompletedProcess:
    """``git args``'s output, at most ``limit`` bytes of it (git is ended past that): a huge diff never sits whole in memory."""
    try:
        proc = subprocess.Popen(["git", *SAFE_CONFIG, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except FileNotFoundError:
        raise NotARepository("git is not installed") from None
    assert proc.stdout is not None
    deadline = time.monotonic() + GIT_TIMEOUT
    chunks, size, cut = [], 0, False
    try:
        while size < limit:
            if time.monotonic() > deadline:
                raise RuntimeError(f"git {args[0]} took longer than {GIT_TIMEOUT:g} s")
            chunk = proc.stdout.read(min(1 << 16, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        else:
            cut = True
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        code = proc.wait()
    if code != 0 and not cut:
        raise RuntimeError(f"git {args[0]} failed")
    text = b"".join(chunks).decode("utf-8", "replace")
    return subprocess.CompletedProcess(proc.args, 0, text[: text.rfind("\n") + 1] if cut else text, "")
