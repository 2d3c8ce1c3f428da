"""What a turn achieved: tests passed, build succeeded, a commit, a PR, or an error.

Pure regex analysis of text the agent produced or ran (tool results from the
transcript, the agent's own words, a screen).  The result is shown on the
agent's row as its last outcome, so it must be short and must not cry wolf:
a failing test count beats a "passed" somewhere earlier, and an error is only
reported with the line that says it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The most specific patterns first; each names the outcome kind it proves.  Each
# pattern comes with the words it cannot match without (lower case, any one of
# them): a leading ``\b`` defeats the regex engine's literal search, so a
# pattern costs about 15 ms per megabyte of text, while looking for a word in
# the lowered text once costs a fraction of that.  Most tool output holds none.
Gated = tuple[re.Pattern[str], tuple[str, ...]]

_TESTS_FAILED: tuple[Gated, ...] = (
    (re.compile(r"\b(?P<n>[1-9]\d*) (?:tests? )?fail(?:ed|ing|ures?)?\b", re.I), ("fail",)),
    (re.compile(r"^FAILED\b.*", re.M), ("failed",)),
    (re.compile(r"\bTests? failed\b", re.I), ("failed",)),
)
_TESTS_PASSED: tuple[Gated, ...] = (
    (re.compile(r"\b(?P<n>\d+) passed(?:, 0 failed)?\b(?!.*\b[1-9]\d* failed)", re.I), (" passed",)),
    (re.compile(r"\b(?P<n>\d+) pass(?:ed|ing)?,?\s*0 fail", re.I), (" pass",)),
    (re.compile(r"\ball (?P<n>\d+ )?tests? pass(?:ed)?\b", re.I), ("all ",)),
    (re.compile(r"\btest suites?: .*\bpassed\b", re.I), ("test suite",)),
    (re.compile(r"^OK(?: \(.*\))?$", re.M), ("ok",)),  # unittest
)
_BUILD: tuple[Gated, ...] = (
    (re.compile(r"\bbuild (?:succeeded|successful|complete[d]?)\b", re.I), ("build ",)),
    (re.compile(r"\bcompiled successfully\b", re.I), ("compiled successfully",)),
    (re.compile(r"\bFinished `?(?:dev|release|test)`? profile\b"), ("finished",)),  # cargo
    (re.compile(r"\bSuccessfully built\b"), ("successfully built",)),
    (re.compile(r"\bbuilt in \d+(?:\.\d+)?m?s\b", re.I), ("built in ",)),  # vite
)
_COMMIT = re.compile(r"^\[(?P<branch>[\w./-]+)(?: \(root-commit\))? (?P<sha>[0-9a-f]{7,40})\] (?P<subject>.+)$", re.M)
_PR = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/pull/\d+")
_ERRORS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("compile", re.compile(r"^.*\berror(?: TS\d+|\[E\d+\])?:.*$", re.M), ("error",)),
    ("compile", re.compile(r"^.*\b(?:SyntaxError|ModuleNotFoundError|ImportError):.*$", re.M), ("error:",)),
    ("test", re.compile(r"^.*\bAssertionError\b.*$", re.M), ("assertionerror",)),
    (
        "runtime",
        re.compile(r"^.*\b(?:Traceback \(most recent call last\)|Exception:|fatal:|panic:|ENOENT|Segmentation fault).*$", re.M),
        ("traceback (most recent call last)", "exception:", "fatal:", "panic:", "enoent", "segmentation fault"),
    ),
    ("permission", re.compile(r"^.*\b(?:[Pp]ermission denied|EACCES)\b.*$", re.M), ("permission denied", "eacces")),
    ("command", re.compile(r"^.*\bcommand not found\b.*$", re.M), ("command not found",)),
)
# Only this much of the end of a text is analysed.  A run's verdict (the test
# summary, the build line, the last error) is at the end of its output; a tool
# result of many megabytes would otherwise hold the event loop (and, in the
# history replay's thread, the interpreter) for a second.
TAIL = 256 * 1024


@dataclass(frozen=True)
class Outcome:
    """One thing a turn achieved or hit.  ``kind`` is what the row shows first."""

    kind: str  # tests_passed | tests_failed | build_succeeded | commit | pr | error
    detail: str  # "42 passed", the sha and subject, the URL, the error line
    error_type: str = ""  # compile | test | runtime | permission | command

    @property
    def is_error(self) -> bool:
        return self.kind in ("error", "tests_failed")

    def describe(self) -> str:
        label = {
            "tests_passed": "tests passed",
            "tests_failed": "tests failed",
            "build_succeeded": "build ok",
            "commit": "committed",
            "pr": "PR",
            "error": f"{self.error_type} error" if self.error_type else "error",
        }[self.kind]
        return f"{label}: {self.detail}" if self.detail else label


def analyze(text: str) -> list[Outcome]:
    """Every outcome the last ``TAIL`` characters of the text prove, most important first (errors, then successes)."""
    text = text[-TAIL:]
    lowered = text.lower()
    found: list[Outcome] = []
    failed = _first(_TESTS_FAILED, text, lowered)
    if failed is not None:
        found.append(Outcome("tests_failed", _clip(failed.group(0))))
    for error_type, pattern, words in _ERRORS:
        match = pattern.search(text) if _any_in(words, lowered) else None
        if match:
            found.append(Outcome("error", _clip(match.group(0).strip()), error_type))
            break
    if failed is None:
        passed = _first(_TESTS_PASSED, text, lowered)
        if passed is not None:
            count = passed.groupdict().get("n")
            found.append(Outcome("tests_passed", f"{count.strip()} passed" if count else _clip(passed.group(0))))
    build = _first(_BUILD, text, lowered)
    if build is not None:
        found.append(Outcome("build_succeeded", _clip(build.group(0))))
    if "] " in text:
        for commit in _COMMIT.finditer(text):
            found.append(Outcome("commit", f"{commit.group('sha')[:10]} {_clip(commit.group('subject'), 60)}"))
    for url in dict.fromkeys(_PR.findall(text)):
        found.append(Outcome("pr", url))
    return found


def last_outcome(texts: list[str]) -> Outcome | None:
    """The outcome to show for an agent: from the newest text that proves anything."""
    for text in reversed(texts):
        outcomes = analyze(text)
        if outcomes:
            return outcomes[0]
    return None


def _any_in(words: tuple[str, ...], lowered: str) -> bool:
    return any(word in lowered for word in words)


def _first(patterns: tuple[Gated, ...], text: str, lowered: str) -> re.Match[str] | None:
    for pattern, words in patterns:
        match = pattern.search(text) if _any_in(words, lowered) else None
        if match:
            return match
    return None


def _clip(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
