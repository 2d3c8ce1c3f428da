"""Differential oracle: GNU bash's own reading of a command text, without running it.

Why this exists
---------------
The project auto-approves shell commands with its own strict reader.  That reader is
only safe if it reads every command text *exactly* as GNU bash does.  This module asks
bash itself, so tests can compare the two readings on many (random, hostile) texts.

How bash is asked
-----------------
Each text is placed inside a function body and bash prints its parse with
``declare -f``; the function is never called.  One script file holds a batch::

    enable -n <every builtin except declare, eval and enable>
    enable -n enable
    declare -r __hs_s_<nonce>=x
    eval '__hs_f_<nonce>_0 () {
    : __hs_b_<nonce>
    <text 0, every ' written as '\''>
    : __hs_e_<nonce>
    }'
    __hs_r_<nonce>=$?
    declare -f __hs_f_<nonce>_0
    declare -p __hs_r_<nonce> __hs_s_<nonce>
    ... one such block per text ...

Why ``eval`` of a single-quoted string: the single quotes make the text inert data at
the script level (quoting is mechanical, nothing but ``'`` is special), and a syntax
error only fails that one ``eval`` -- a script-level syntax error would end bash and
an unclosed quote would swallow the following blocks.  ``eval`` parses with the same
parser as ``bash -c`` (a string, not a file).  stdout and stderr share one file, so
bash's error message for a text lands in that text's segment.

Why it is safe
--------------
A text can close the function early (a stray ``}``) and what follows it inside the
``eval`` string is then *executed*.  Independent layers make that harmless:

* restricted bash (``-r``): no output redirection, no ``cd``, no PATH change, no
  command names containing ``/``, no re-enabling of builtins;
* ``env -i PATH=/nonexistent``: no external command can be found;
* every builtin except ``declare`` and ``eval`` is disabled (``enable`` itself last),
  so escaped code cannot ``echo``, ``kill``, ``exec``, ``source``, ``read``...;
  ``eval`` adds no capability that escaped code does not already have;
* ``unshare`` user+net+ipc+uts+pid+mount namespaces (``--kill-child``, /proc
  remounted), so no outside process is visible and there is no network;
* as root, ``setpriv`` first drops to a uid/gid of its own (a fresh, unused one per
  run, far above any account's) without capabilities and with ``no_new_privs``:
  the process limit counts a user's processes machine-wide, so with one shared
  uid (nobody) a fork bomb in one run left another run, in another test worker,
  unable to fork until it timed out;
* ``prlimit``: process count, address space and file size limits (the output is a
  file, so a text printing in a loop is killed at the size limit);
* ``timeout -s KILL`` and a fresh, empty, read-only working directory.

Hostile texts are only ever *data*: Python writes them into the script file; they
never appear on a shell command line or in a heredoc.

Why the output can be trusted
-----------------------------
* Every run uses a fresh random nonce in function names, sentinels, the status
  variable and the separator, so no (non-adaptive) text can print our framing.
* The end sentinel inside the printed function proves that the text was parsed
  inside the function and executed nothing; its absence means the text escaped.
* Blocks are trusted in order up to the first block with an unexpected shape or an
  escaped text (which may have changed the shell); the rest of the batch is re-run.
* ``bash -c`` semantics at end of input are emulated: a text ending in ``&&``,
  ``||`` or ``|`` is a syntax error (in our wrapper the operator would take the end
  sentinel as its right-hand side), and a trailing backslash (literal at end of input
  for ``bash -c``) is resolved with a second query (see ``BashOracle.readings``).

Reading the printed form
------------------------
``declare -f`` prints words with their original quoting (``$'..'`` and ``$".."`` are
already converted to plain quotes by bash's parser), comments dropped, line
continuations removed, and each simple command as ``words... redirections...``.
Only flat lists of simple commands are decoded; anything else is reported as a
string.  Words are only decoded when "plain" (no expansion of any kind can apply),
so a returned reading is exact.  Redirections are mapped to the normal form that the
project's reader must produce (see ``Reading``), following bash's print_cmd.c and
redir.c semantics -- including print quirks such as ``1<> f`` printing as ``<> f``.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

__all__ = [
    "Redirect",
    "Command",
    "Reading",
    "Result",
    "BashOracle",
    "SandboxUnavailable",
    "bash_readings",
    "default_oracle",
    "is_reading",
    "normalize_reading",
    "NUL",
    "TIMEOUT",
    "NOT_SIMPLE",
    "NOT_PLAIN",
    "NOT_UNDERSTOOD",
    "SYNTAX_ERROR",
    "NOT_ENCODABLE",
    "OUTPUT_TOO_LARGE",
]

Redirect = tuple[str, str, str]
"""``(fd, op, target)``: fd is a decimal string or ``"&"`` (stdout+stderr)."""

Command = tuple[tuple[str, ...], tuple[Redirect, ...]]
"""One simple command: its words after quote removal, then its redirections in order."""

Reading = tuple[Command, ...]
"""The simple commands of a text, in order.  Separators are not part of it.

Redirect normal form:

* ``>``, ``>|``, ``>>``, ``<``, ``<>``: ``(fd, op, target)`` with the default fd
  filled in (1 for ``>``, ``>|``, ``>>``; 0 for ``<``, ``<>``);
* ``&>`` and ``>&WORD`` (fd 1, WORD not digits and not ``-``): ``("&", ">", WORD)``;
  ``&>>``: ``("&", ">>", WORD)``;
* ``N>&M`` / ``N<&M``: ``(N, ">&", M)`` / ``(N, "<&", M)`` with M canonical decimal
  (also when M was quoted, e.g. ``>&'2'``, since bash decides at run time);
  ``N<&WORD`` and ``N>&WORD`` (N not 1) with a non-number WORD: ``(N, op, WORD)``
  (bash reports "ambiguous redirect" when it runs them);
* every close (``N>&-``, ``N<&-``, ``>&'-'``...): ``(N, ">&", "-")``.  bash's parser
  turns ``<&-`` and ``>&-`` into the same instruction (it prints ``0<&-`` as
  ``0>&-``), so the direction of a close is not recoverable; use
  ``normalize_reading`` on the project's side before comparing;
* ``|&`` is bash's ``2>&1 |``: the left command gets ``("2", ">&", "1")`` appended.
"""

Result = Reading | str

# Result string prefixes.  A non-reading result is always one of these, optionally
# followed by ": detail".  Compare with ``str.startswith``.
NUL = "NUL"
TIMEOUT = "timeout"
RUN_UIDS = 1_000_000_000  # the sandbox's uids (as root): one drawn per run from [RUN_UIDS, 2 * RUN_UIDS), used by no account
NOT_SIMPLE = "not a list of simple commands"
NOT_PLAIN = "not plain"
NOT_UNDERSTOOD = "printed form not understood"
SYNTAX_ERROR = "bash: syntax error"
NOT_ENCODABLE = "not encodable"
OUTPUT_TOO_LARGE = "output too large"

_EARLY_CLOSE = SYNTAX_ERROR + ": the text closes the enclosing function body early (stray `}')"
_MERGED = NOT_UNDERSTOOD + ": end sentinel merged into the text's last line (trailing backslash?)"

# An escaped fork bomb at the sandbox's process limit: bash's own next fork fails and it says so (on a
# loaded machine the bomb fills the limit before the shell's next command). Only escaped code forks,
# and a run's uid is its own, so its limit was filled by its own processes: code ran, nothing was parsed.
_FORK_FAILED = ("fork: retry: Resource temporarily unavailable", "fork: Resource temporarily unavailable")
_RUNTIME_MESSAGES = (
    "command not found",
    "restricted",
    "No such file or directory",
    "ambiguous redirect",
    "Bad file descriptor",
    "readonly variable",
    *_FORK_FAILED,
)
_INT_MAX = 2**31 - 1
_RESERVED = frozenset("! time if then else elif fi case esac for select while until do done in function coproc { } [[ ]]".split())
# Unquoted characters that make a word subject to some expansion (or that we do not
# want to reason about): such words are reported as "not plain".
_UNQUOTED_SPECIAL = frozenset("$`*?[]{}~()")
_WORD_END = frozenset(" \t\n;&|<>()")
_REDIR_RE = re.compile(r"([0-9]*)(<<<|<<-|<<|<>|<&|<|>>|>\||>&|>)")
_ERR_AND_OUT_RE = re.compile(r"&>>?")
_VARREDIR_RE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}[<>]")
_DIGITS_RE = re.compile(r"[0-9]+")
_BUILTIN_NAME_RE = re.compile(r"^[A-Za-z0-9_.:\[\]-]+$")


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot be set up; we refuse to run bash on hostile text without it."""


def is_reading(result: Result) -> bool:
    """True when ``result`` is a reading (a tuple), not a reason string."""
    return isinstance(result, tuple)


def normalize_reading(reading: Reading) -> Reading:
    """Canonicalise closes to ``(fd, ">&", "-")``.

    Why: bash does not keep the direction of a close (``<&-`` and ``>&-`` are the same
    ``r_close_this`` instruction), so the oracle always reports ``">&"``.  Apply this
    to the project's reading before comparing it with the oracle's.
    """
    out: list[Command] = []
    for words, redirs in reading:
        out.append(
            (
                words,
                tuple((fd, ">&", "-") if op in (">&", "<&") and target == "-" else (fd, op, target) for fd, op, target in redirs),
            )
        )
    return tuple(out)


# ---------------------------------------------------------------------------
# Decoding bash's printed form
# ---------------------------------------------------------------------------


class _Bail(Exception):
    """Stop decoding: the printed body has no (exact) reading.  Carries the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _unquote(raw: str) -> str:
    """Quote removal for one printed word, or raise ``_Bail`` if it is not plain.

    Why so strict: a reading is only claimed when no expansion at all can change the
    word, so quote removal alone gives exactly the argument bash would pass.
    Handles plain characters, ``'...'``, ``"..."`` (backslash escapes only before
    ``$ ` " \\`` and newline) and backslash escapes outside quotes.
    """
    out: list[str] = []
    i, n = 0, len(raw)
    if raw.startswith("#"):
        raise _Bail(NOT_UNDERSTOOD + ": word starts with an unquoted #: " + repr(raw[:40]))
    while i < n:
        c = raw[i]
        if c == "\\":
            if i + 1 >= n:
                raise _Bail(NOT_UNDERSTOOD + ": word ends with a backslash: " + repr(raw[-40:]))
            if raw[i + 1] == "\n":
                raise _Bail(NOT_UNDERSTOOD + ": line continuation left in printed word")
            out.append(raw[i + 1])
            i += 2
        elif c == "'":
            j = raw.find("'", i + 1)
            if j < 0:
                raise _Bail(NOT_UNDERSTOOD + ": unterminated single quote in printed word")
            out.append(raw[i + 1 : j])
            i = j + 1
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    raise _Bail(NOT_UNDERSTOOD + ": unterminated double quote in printed word")
                d = raw[i]
                if d == '"':
                    i += 1
                    break
                if d in "$`":
                    raise _Bail(NOT_PLAIN + ": expansion inside double quotes: " + repr(raw[:60]))
                if d == "\\":
                    if i + 1 >= n:
                        raise _Bail(NOT_UNDERSTOOD + ": unterminated double quote in printed word")
                    e = raw[i + 1]
                    if e == "\n":
                        raise _Bail(NOT_UNDERSTOOD + ": line continuation left in printed word")
                    if e in '$`"\\':
                        out.append(e)
                    else:
                        out.append("\\" + e)
                    i += 2
                    continue
                out.append(d)
                i += 1
        elif c == "~" and i > 0 and raw[i - 1] not in "=:":
            # Bash expands a tilde only at a word's start, and after '=' or ':' in a word that may be an assignment
            # (bash expands 'x=~/y' even as an argument): anywhere else it is the character itself ('HEAD~1').
            out.append(c)
            i += 1
        elif c in _UNQUOTED_SPECIAL:
            raise _Bail(NOT_PLAIN + ": unquoted " + repr(c) + " in word " + repr(raw[:60]))
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _BodyParser:
    """Decode the printed body of one function as a flat list of simple commands.

    Why a hand-written scanner: the printed form is bash's canonical output
    (print_cmd.c), which is far more regular than input shell text; we decode it
    strictly and bail out (never guess) on anything outside the flat, plain subset.
    """

    def __init__(self, body: str) -> None:
        self.s = body
        self.i = 0
        self.n = len(body)
        # (raw printed word, our quote removal) for words and redirection targets;
        # lets tests have bash itself check the quote removal.
        self.raw_words: list[tuple[str, str]] = []

    # -- low level -----------------------------------------------------------

    def _skip_blanks(self) -> None:
        while self.i < self.n and self.s[self.i] in " \t":
            self.i += 1

    def _raw_word(self) -> str:
        """Scan one raw (still quoted) word starting at the current position."""
        s, n = self.s, self.n
        start = i = self.i
        while i < n:
            c = s[i]
            if c in _WORD_END:
                break
            if c in "$`":
                # Stop at the first expansion: its extent is not ours to scan.
                raise _Bail(NOT_PLAIN + f": {c!r} in word {s[start : i + 1][-40:]!r}")
            if c == "\\":
                if i + 1 >= n:
                    raise _Bail(NOT_UNDERSTOOD + ": printed body ends with a backslash")
                i += 2
            elif c == "'":
                j = s.find("'", i + 1)
                if j < 0:
                    raise _Bail(NOT_UNDERSTOOD + ": unterminated single quote")
                i = j + 1
            elif c == '"':
                i += 1
                while i < n and s[i] != '"':
                    if s[i] in "$`":
                        raise _Bail(NOT_PLAIN + f": {s[i]!r} inside double quotes")
                    i += 2 if s[i] == "\\" else 1
                if i >= n:
                    raise _Bail(NOT_UNDERSTOOD + ": unterminated double quote")
                i += 1
            else:
                i += 1
        if i == start:
            raise _Bail(NOT_UNDERSTOOD + f": empty word at offset {start}")
        self.i = i
        return s[start:i]

    def _after_token(self) -> None:
        """bash prints a blank, ``;``, newline or end after every word/redirection."""
        if self.i < self.n and self.s[self.i] not in " \t\n;":
            if self.s[self.i] in "()<>":
                # e.g. $(...), $((...)), <(...), >(...), a=(...) split by our scanner
                raise _Bail(NOT_PLAIN + ": parenthesis or process substitution in a word")
            raise _Bail(NOT_UNDERSTOOD + f": unexpected {self.s[self.i : self.i + 10]!r} after a token")

    # -- redirections --------------------------------------------------------

    def _redirect(self, m: re.Match[str]) -> Redirect:
        digits, op = m.group(1), m.group(2)
        self.i = m.end()
        if op in ("<<", "<<-"):
            raise _Bail(NOT_SIMPLE + ": here-document")
        if op == "<<<":
            raise _Bail(NOT_SIMPLE + ": here-string")
        if op in ("<&", ">&"):
            if self.s.startswith(("<(", ">("), self.i):
                raise _Bail(NOT_PLAIN + ": process substitution")
            if self.i >= self.n or self.s[self.i] in _WORD_END:
                raise _Bail(NOT_UNDERSTOOD + f": {op} without a glued target")
            raw = self._raw_word()
            if raw != "-" and not raw.endswith("-"):
                _unquote(raw)  # bail "not plain" before complaining about what follows
            self._after_token()
            fd = str(int(digits)) if digits else ("1" if op == ">&" else "0")
            if raw == "-":
                return (fd, ">&", "-")
            if raw.endswith("-"):
                # make_redirection turns [N]>&WORD- / [N]<&WORD- into a *move*.
                raise _Bail(NOT_SIMPLE + f": fd move redirection {op}{raw}")
            value = _unquote(raw)
            self.raw_words.append((raw, value))
            if value == "-":
                return (fd, ">&", "-")
            if value == "":
                raise _Bail(NOT_PLAIN + f": empty {op} target")
            if _DIGITS_RE.fullmatch(value):
                if int(value) > _INT_MAX:
                    raise _Bail(NOT_PLAIN + f": fd out of range in {op}{raw}")
                return (fd, op, str(int(value)))
            if op == ">&" and fd == "1":
                # redir.c: [1]>&WORD with a non-number WORD means &>WORD.
                return ("&", ">", value)
            return (fd, op, value)
        # Operators printed as "OP TARGET" with one blank.
        if digits:
            fd = str(int(digits))
        elif op == "<":
            fd = "0"
        else:
            # print_cmd.c omits fd 1 for > >| >> and -- a bash quirk -- also for <>
            # (so "<> f" means fd 1, while the default fd 0 prints as "0<> f").
            fd = "1"
        return (fd, op, self._target())

    def _target(self) -> str:
        if self.i < self.n and self.s[self.i] == "(":
            raise _Bail(NOT_PLAIN + ": process substitution")
        if self.i >= self.n or self.s[self.i] != " ":
            raise _Bail(NOT_UNDERSTOOD + ": no blank before redirection target")
        self.i += 1
        if self.s.startswith(("<(", ">("), self.i):
            raise _Bail(NOT_PLAIN + ": process substitution")
        if self.i >= self.n or self.s[self.i] in _WORD_END:
            raise _Bail(NOT_UNDERSTOOD + ": missing redirection target")
        raw = self._raw_word()
        value = _unquote(raw)
        self._after_token()
        self.raw_words.append((raw, value))
        return value

    # -- commands ------------------------------------------------------------

    def parse(self) -> tuple[list[Command], list[str]]:
        """Return (commands, connectors between them); raise ``_Bail`` if not flat/plain."""
        commands: list[Command] = []
        connectors: list[str] = []
        words: list[str] = []
        redirs: list[Redirect] = []
        pending: str | None = None  # connector seen since the last command

        def finish(connector: str) -> None:
            nonlocal words, redirs, pending
            if not words and not redirs:
                raise _Bail(NOT_UNDERSTOOD + f": empty command before {connector!r}")
            commands.append((tuple(words), tuple(redirs)))
            words, redirs = [], []
            pending = connector

        s = self.s
        while True:
            self._skip_blanks()
            if self.i >= self.n:
                break
            c = s[self.i]
            start_of_command = not words and not redirs
            if c == "\n":
                self.i += 1
                if start_of_command:
                    if pending != ";":
                        raise _Bail(NOT_UNDERSTOOD + ": unexpected newline")
                    continue
                if s[self.i :].strip(" \t\n"):
                    raise _Bail(NOT_UNDERSTOOD + ": newline without ';' (here-document?)")
                continue
            if start_of_command and pending is not None:
                connectors.append(pending)
                pending = None
            if c == ";":
                if s.startswith(";;", self.i) or s.startswith(";&", self.i):
                    raise _Bail(NOT_SIMPLE + ": case terminator")
                self.i += 1
                finish(";")
                continue
            if c == "&":
                if s.startswith("&&", self.i):
                    self.i += 2
                    finish("&&")
                    continue
                m = _ERR_AND_OUT_RE.match(s, self.i)
                if m:
                    op = m.group(0)[1:]
                    self.i = m.end()
                    redirs.append(("&", op, self._target()))
                    continue
                self.i += 1
                finish("&")
                continue
            if c == "|":
                if s.startswith("||", self.i):
                    self.i += 2
                    finish("||")
                    continue
                if s.startswith("|&", self.i):
                    raise _Bail(NOT_UNDERSTOOD + ": '|&' in printed form")
                self.i += 1
                finish("|")
                continue
            if c in "()":
                raise _Bail(NOT_SIMPLE + ": parenthesis (subshell, arithmetic, array or function)")
            m = _REDIR_RE.match(s, self.i)
            if m and (m.group(1) or c in "<>"):
                redirs.append(self._redirect(m))
                continue
            if _VARREDIR_RE.match(s, self.i):
                raise _Bail(NOT_SIMPLE + ": {varname} redirection")
            if redirs:
                raise _Bail(NOT_UNDERSTOOD + ": word after redirections")
            raw = self._raw_word()
            if start_of_command and raw in _RESERVED:
                raise _Bail(NOT_SIMPLE + f": reserved word {raw!r}")
            value = _unquote(raw)
            self._after_token()
            self.raw_words.append((raw, value))
            words.append(value)
        if words or redirs:
            commands.append((tuple(words), tuple(redirs)))
            if pending is not None:
                raise _Bail(NOT_UNDERSTOOD + ": connector lost")
        elif pending is not None:
            if pending != "&":
                raise _Bail(NOT_UNDERSTOOD + f": body ends with {pending!r}")
            connectors.append("&")  # trailing '&' of the last command
        return commands, connectors


def _decode_body(body: str, nonce: str) -> Result:
    """Turn the printed function body (with our sentinels) into a reading or a reason."""
    try:
        commands, connectors = _BodyParser(body).parse()
    except _Bail as bail:
        # Keep results deterministic: never leak this run's nonce into a reason.
        return bail.reason.replace(nonce, "<nonce>")
    begin: Command = ((":", "__hs_b_" + nonce), ())
    end: Command = ((":", "__hs_e_" + nonce), ())
    if len(commands) < 2 or commands[0] != begin or not connectors or connectors[0] != ";":
        return NOT_UNDERSTOOD + ": start sentinel not found as its own command"
    if commands[-1] != end:
        return _MERGED
    before_end = connectors[len(commands) - 2]
    if before_end in ("&&", "||", "|"):
        # bash -c would hit end of input here; in our script the operator took our
        # end sentinel as its right-hand side.
        return SYNTAX_ERROR + f": unexpected end of file (text ends with {before_end!r})"
    if before_end not in (";", "&"):
        return NOT_UNDERSTOOD + f": connector {before_end!r} before end sentinel"
    if len(connectors) > len(commands) - 1:
        return NOT_UNDERSTOOD + ": trailing connector after end sentinel"
    return tuple(commands[1:-1])


# ---------------------------------------------------------------------------
# Running bash in the sandbox
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    """What one sandboxed bash run produced (stdout and stderr share one file, in order)."""

    output: str
    returncode: int
    timed_out: bool


class BashOracle:
    """Ask GNU bash (sandboxed) how it reads command texts.  See module docstring.

    Why batches: one sandboxed bash start costs ~30 ms, parsing a text costs
    microseconds, so many texts share one run.  Each text is parsed by its own
    ``eval`` of a single-quoted function definition, so a syntax error only fails that
    ``eval`` (bash continues with the next block) and cannot swallow the script lines
    after it.  A batch is trusted block by block, in order, up to the first block that
    did not come out in one of the expected shapes, or whose text escaped the function
    body (it may have run code that changes the shell); the texts after it are re-run
    as a new batch, and a text that fails on its own is classified from its output.
    """

    def __init__(
        self,
        *,
        bash: str = "/bin/bash",
        batch_size: int = 200,
        timeout: float = 5.0,
        workers: int | None = None,
        locale: str = "C.UTF-8",
        max_output_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.bash = bash
        self.batch_size = max(1, batch_size)
        self.timeout = timeout
        self.workers = workers if workers is not None else max(1, min(4, os.cpu_count() or 1))
        self.locale = locale
        self.max_output_bytes = max_output_bytes
        self.runs = 0  # number of bash runs so far (for measurements)
        self._lock = threading.Lock()
        self._sandbox = self._sandbox_prefix()
        self.builtins: tuple[str, ...] = ()
        self.bash_version = ""
        self._probe()

    # -- sandbox -------------------------------------------------------------

    def _sandbox_prefix(self) -> list[str]:
        """The command prefix that confines bash; raise if it cannot be built."""
        need = ["unshare", "timeout", "prlimit", "env"]
        root = os.geteuid() == 0
        if root:
            need.append("setpriv")
        missing = [t for t in need if shutil.which(t) is None]
        if missing:
            raise SandboxUnavailable("required sandbox tools not found: {} (refusing to run bash unsandboxed)".format(", ".join(missing)))
        if not os.access(self.bash, os.X_OK):
            raise SandboxUnavailable("bash not executable: " + self.bash)
        prefix = [
            "timeout",
            "-s",
            "KILL",
            f"{self.timeout:g}",
            "prlimit",
            "--nproc=256",
            f"--as={2 * 1024**3}",
            f"--fsize={self.max_output_bytes}",
            "--core=0",
            "--",
        ]
        if root:
            prefix += [
                "setpriv",
                "--reuid={uid}",
                "--regid={uid}",
                "--clear-groups",
                "--no-new-privs",
                "--inh-caps=-all",
                "--bounding-set=-all",
            ]
        prefix += [
            "unshare",
            "--user",
            "--map-root-user",
            "--net",
            "--ipc",
            "--uts",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
        ]
        env = ["env", "-i", "PATH=/nonexistent"]
        if self.locale:
            env.append("LC_ALL=" + self.locale)
        return prefix + env + [self.bash, "--norc", "--noprofile", "-r"]

    def _for_this_run(self) -> list[str]:
        """The sandbox's command, with a uid of this run's own (as root): no other run's processes count against its limit."""
        uid = str(RUN_UIDS + secrets.randbelow(RUN_UIDS))
        return [word.replace("{uid}", uid) for word in self._sandbox]

    def _run_script(self, script: bytes) -> _Run:
        """Run one script file in the sandbox; stdout+stderr go to one size-limited file."""
        with self._lock:
            self.runs += 1
        top = tempfile.mkdtemp(prefix="hs-oracle-")
        try:
            os.chmod(top, 0o711)
            cwd = os.path.join(top, "cwd")
            os.mkdir(cwd)
            os.chmod(cwd, 0o555)  # empty and not writable by the sandboxed user
            path = os.path.join(top, "script.sh")
            with open(path, "wb") as f:
                f.write(script)
            os.chmod(path, 0o644)
            out_path = os.path.join(top, "out")
            with open(out_path, "wb") as out:
                try:
                    proc = subprocess.run(
                        [*self._for_this_run(), path],
                        stdin=subprocess.DEVNULL,
                        stdout=out,
                        stderr=out,  # same open file: bash's messages stay in order
                        cwd=cwd,
                        timeout=self.timeout + 10,
                        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                    )
                    rc = proc.returncode
                    timed_out = rc in (124, 137, -9)
                except subprocess.TimeoutExpired:
                    rc, timed_out = -9, True
            with open(out_path, "rb") as f:
                output = f.read(self.max_output_bytes + 1).decode("utf-8", "surrogateescape")
            return _Run(output, rc, timed_out)
        finally:
            shutil.rmtree(top, ignore_errors=True)

    def _prologue(self, nonce: str) -> str:
        keep = ("declare", "eval", "enable")
        names = " ".join(f"'{b}'" for b in self.builtins if b not in keep)
        return f"enable -n {names}\nenable -n enable\ndeclare -r __hs_s_{nonce}=x\n"

    def _probe(self) -> None:
        """Learn the builtin list and check that the sandbox really confines bash."""
        run = self._run_script(b"enable -a\n")
        if run.returncode != 0 or not run.output.startswith("enable "):
            raise SandboxUnavailable(f"sandboxed bash does not start (rc={run.returncode}): {run.output.strip()[:500]}")
        names = []
        for line in run.output.splitlines():
            parts = line.split()
            if len(parts) not in (2, 3) or parts[0] != "enable" or not _BUILTIN_NAME_RE.match(parts[-1]):
                raise SandboxUnavailable(f"unexpected `enable -a` line: {line!r}")
            names.append(parts[-1])
        if not {"declare", "eval", "enable"} <= set(names):
            raise SandboxUnavailable(f"builtin list lacks declare/eval/enable: {names!r}")
        self.builtins = tuple(names)
        nonce = secrets.token_hex(8)
        script = self._prologue(nonce) + f"declare -p __hs_s_{nonce}\n" + 'declare -- __hs_m="$-"\ndeclare -p __hs_m\n' + "declare -p BASH_VERSION\n" + "enable -a\necho leaked\n"
        run = self._run_script(script.encode())
        lines = [line for line in run.output.splitlines() if "command not found" not in line]
        if (
            len(lines) != 3
            or lines[0] != self._separator(nonce).rstrip("\n")
            or not lines[1].startswith('declare -- __hs_m="')
            or "r" not in lines[1].split("=", 1)[1]
            or not lines[2].startswith('declare -- BASH_VERSION="')
            or "enable: command not found" not in run.output
            or "echo: command not found" not in run.output
        ):
            raise SandboxUnavailable(f"sandbox self-check failed: {run.output[:800]!r}")
        self.bash_version = lines[2].split('"')[1]

    @staticmethod
    def _separator(nonce: str) -> str:
        return f'declare -r __hs_s_{nonce}="x"\n'

    # -- batches -------------------------------------------------------------

    def _script(self, texts: Sequence[bytes], nonce: str) -> bytes:
        """The batch script: one single-quoted ``eval`` per text, then its printout."""
        parts = [self._prologue(nonce).encode()]
        for i, t in enumerate(texts):
            body = f"__hs_f_{nonce}_{i} () {{\n: __hs_b_{nonce}\n".encode() + t + f"\n: __hs_e_{nonce}\n}}".encode()
            parts.append(b"eval '" + body.replace(b"'", b"'\\''") + b"'\n")
            parts.append(f"__hs_r_{nonce}=$?\ndeclare -f __hs_f_{nonce}_{i}\ndeclare -p __hs_r_{nonce} __hs_s_{nonce}\n".encode())
        return b"".join(parts)

    def _run_batch(self, texts: Sequence[bytes]) -> tuple[list[Result], _Run]:
        """One bash run; results for the trusted prefix of ``texts`` (maybe all)."""
        nonce = secrets.token_hex(8)
        run = self._run_script(self._script(texts, nonce))
        segments = run.output.split(self._separator(nonce))[:-1]
        status_re = re.compile(rf'declare -- __hs_r_{nonce}="(\d+)"\n\Z')
        head = f"__hs_f_{nonce}_%d () \n{{ \n"
        end = "__hs_e_" + nonce
        results: list[Result] = []
        for i, seg in enumerate(segments[: len(texts)]):
            m = status_re.search(seg)
            if not m:
                break  # unexpected shape: stop trusting here
            status = int(m.group(1))
            seg = seg[: m.start()]
            h = head % i
            pos = seg.find(h)
            if pos < 0:
                # The function was not defined.  Its definition is the first command
                # of the eval string, so its parse failed and nothing of it ran.
                if status == 0:
                    break
                results.append(_parse_failure(seg))
                continue
            piece = seg[pos:]
            if end in piece:
                # Our end sentinel line is inside the printed function, so the text
                # ran nothing: either the function is ours, closed by our "}" (the
                # decoder checks that the sentinels are separate commands), or the
                # text's "}" closed it with a here-document that swallowed our lines.
                if piece.endswith("\n}\n"):
                    results.append(_decode_body(piece[len(h) : -2], nonce))
                else:
                    results.append(_EARLY_CLOSE)
                continue
            # The text closed the function early; what followed was executed
            # (harmlessly, in the sandbox) and may have changed the shell, so nothing
            # after this block is trusted.
            results.append(_EARLY_CLOSE)
            break
        # Keep results deterministic: never leak this run's nonce into a reason.
        results = [r.replace(nonce, "<nonce>") if isinstance(r, str) else r for r in results]
        return results, _Run(run.output.replace(nonce, "<nonce>"), run.returncode, run.timed_out)

    def _resolve(self, texts: Sequence[bytes]) -> list[Result]:
        """Results for ``texts`` (no NULs): batch, then re-run after the trusted prefix."""
        results: list[Result | None] = [None] * len(texts)
        todo = list(range(len(texts)))
        while todo:
            got, run = self._run_batch([texts[i] for i in todo])
            for j, r in enumerate(got):
                results[todo[j]] = r
            if len(got) == len(todo):
                break
            if got:
                todo = todo[len(got) :]
                continue
            # Not even the first block came out: resolve it alone, then go on.
            first = todo[0]
            if len(todo) > 1:
                got, run = self._run_batch([texts[first]])
            results[first] = got[0] if got else _run_failure(run)
            todo = todo[1:]
        return [r if r is not None else NOT_UNDERSTOOD + ": unresolved" for r in results]

    # -- public --------------------------------------------------------------

    def readings(self, texts: Iterable[str]) -> list[Result]:
        """bash's reading of each text, or a one-line reason string.

        Texts with NUL are reported as ``"NUL"`` (bash cannot be given them).  A text
        ending in a backslash is asked twice: as is and with the backslash doubled.
        Why: ``bash -c`` keeps a backslash at end of input literally, but in our script
        a newline follows it, turning it into a line continuation.  If the two answers
        differ (or the first merged into our end sentinel), the backslash was live and
        the doubled text's reading is bash -c's reading.
        """
        texts = list(texts)
        queries: dict[str, bytes] = {}
        encoded: list[bytes | str] = []
        for t in texts:
            if "\x00" in t:
                encoded.append(NUL)
                continue
            try:
                b = t.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError as e:
                encoded.append(NOT_ENCODABLE + ": " + str(e)[:100])
                continue
            encoded.append(b)
            queries.setdefault(t, b)
            if t.endswith("\\"):
                queries.setdefault(t + "\\", b + b"\\")
        keys = list(queries)
        chunks = [keys[i : i + self.batch_size] for i in range(0, len(keys), self.batch_size)]
        answers: dict[str, Result] = {}

        def work(chunk: list[str]) -> None:
            for key, res in zip(chunk, self._resolve([queries[k] for k in chunk]), strict=True):
                answers[key] = res

        if self.workers > 1 and len(chunks) > 1:
            with ThreadPoolExecutor(self.workers) as pool:
                list(pool.map(work, chunks))
        else:
            for chunk in chunks:
                work(chunk)

        out: list[Result] = []
        for t, enc in zip(texts, encoded, strict=True):
            if isinstance(enc, str):
                out.append(enc)
                continue
            r1 = answers[t]
            if not t.endswith("\\"):
                out.append(r1)
                continue
            r2 = answers[t + "\\"]
            if is_reading(r2) and (not is_reading(r1) or r1 != r2):
                out.append(r2)  # the final backslash was live: literal at end of input
            elif r1 == _MERGED:
                out.append(r2)
            else:
                out.append(r1)
        return out


def _strip_location(line: str) -> str:
    """Drop bash's ``/path/script: [eval: ]line N: `` prefix from a message line."""
    m = re.match(r"^.*?: line \d+: (.*)$", line)
    return m.group(1) if m else line


def _error_message(output: str) -> str | None:
    """bash's parse error in ``output`` as a result string, if there is one."""
    lines = [_strip_location(line) for line in output.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("warning: here-document") and "delimited by end-of-file" in line:
            # bash -c would accept the text (the here-document ends at end of input).
            return NOT_SIMPLE + ": here-document not terminated"
    for line in lines:
        if line.startswith("syntax error"):
            return "bash: " + line
    for line in lines:
        if line.startswith(("warning:", "`")) or any(r in line for r in _RUNTIME_MESSAGES):
            continue  # warnings, the echo of the offending line, escaped code's errors
        # e.g. "unexpected EOF while looking for matching `''",
        # "unexpected token `;;&' in conditional command"
        return SYNTAX_ERROR + ": " + line
    return None


def _parse_failure(seg: str) -> str:
    """Reason for a text whose function definition did not parse (its eval failed)."""
    msg = _error_message(seg)
    return msg if msg is not None else NOT_UNDERSTOOD + ": function not defined, no message"


def _run_failure(run: _Run) -> str:
    """Reason for a text that did not produce even one expected block on its own."""
    if run.timed_out:
        return TIMEOUT
    if run.returncode == 128 + 25:
        return OUTPUT_TOO_LARGE
    msg = _error_message(run.output)
    if msg is not None and msg.startswith("bash: "):
        # Some parse errors (e.g. an unclosed "$(") make bash exit even inside eval.
        return msg
    if "command not found" in run.output or any(failed in run.output for failed in _FORK_FAILED):
        # Something ran (or forked), and nothing inside our function can run: the text escaped
        # (and e.g. shadowed ``declare``, so its block could not be printed).
        return _EARLY_CLOSE + "; its code ran and no block was printed"
    first = run.output.strip().splitlines()[0] if run.output.strip() else "no output"
    return NOT_UNDERSTOOD + f": no block printed (rc={run.returncode}; {_strip_location(first)[:200]})"


_default: BashOracle | None = None
_default_lock = threading.Lock()


def default_oracle() -> BashOracle:
    """A shared oracle (probing the sandbox once per process)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = BashOracle()
        return _default


def bash_readings(texts: list[str]) -> list[Result]:
    """bash's reading of each text (see ``Reading``) or a one-line reason string.

    Reason strings start with one of: ``"bash: syntax error"``, ``"not a list of simple
    commands"``, ``"not plain"``, ``"printed form not understood"``, ``"timeout"``,
    ``"NUL"``, ``"not encodable"``, ``"output too large"``.
    """
    return default_oracle().readings(texts)


def _bench(n: int = 4000, seed: int = 1) -> None:
    """Print throughput (texts/second) for plain and for generated hostile texts."""
    import random

    try:
        import shell_text
    except ImportError:  # pragma: no cover
        print("shell_text.py not importable; put it next to bash_oracle.py")
        return
    rng = random.Random(seed)
    plain = [f"{shell_text.plain_list(rng)} # {i}" for i in range(n)]  # all distinct
    hostile = shell_text.generate(random.Random(seed), n)
    rows = [("plain", 1, 1, plain[:200])]
    rows += [("plain", bs, 1, plain) for bs in (20, 100, 200, 500, 1000)]
    rows += [("plain", 200, w, plain) for w in (2, 4)]
    rows += [("hostile", bs, w, hostile) for bs, w in ((200, 1), (200, 2), (500, 2))]
    for kind, bs, workers, sample in rows:
        o = BashOracle(batch_size=bs, workers=workers)
        o.runs = 0
        t0 = time.perf_counter()
        res = o.readings(sample)
        dt = time.perf_counter() - t0
        print(f"{kind:<7} batch={bs:4d} workers={workers}: {len(sample):5d} texts in {dt:6.2f}s = {len(sample) / dt:6.0f} texts/s  ({sum(map(is_reading, res))} readings, {o.runs} bash runs)")


if __name__ == "__main__":
    _bench()
