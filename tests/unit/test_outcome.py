"""Outcome analysis on real-looking tool output (pytest, cargo, git, gh, tsc ...)."""

from __future__ import annotations

import random

import pytest

from headspace_tui.detect import outcome
from headspace_tui.detect.outcome import Outcome, analyze, last_outcome

CASES = [
    ("============================= 42 passed in 3.21s ==============================", "tests_passed", "42 passed"),
    ("=========== 2 failed, 40 passed in 3.00s ===========\nFAILED tests/test_x.py::test_a", "tests_failed", "2 failed"),
    ("Ran 12 tests in 0.004s\n\nOK", "tests_passed", "OK"),
    ("Test Suites: 3 passed, 3 total\nTests:       17 passed, 17 total", "tests_passed", "3 passed"),
    ("   Compiling demo v0.1.0\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 2.3s", "build_succeeded", "Finished `dev` profile"),
    ("vite v5.0.0 building for production...\n✓ 31 modules transformed.\n✓ built in 812ms", "build_succeeded", "built in 812ms"),
    ("[main 3f2a9c1] Fix the parser for empty input\n 2 files changed, 10 insertions(+)", "commit", "3f2a9c1 Fix the parser for empty input"),
    ("[feature/x (root-commit) 0123456789abcdef] Initial commit", "commit", "0123456789 Initial commit"),
    ("Creating pull request for fix into main\n\nhttps://github.com/acme/widget/pull/128", "pr", "https://github.com/acme/widget/pull/128"),
    ("src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.", "error", "src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'."),
    ("Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'yaml'", "error", "ModuleNotFoundError: No module named 'yaml'"),
    ("bash: line 1: pnpm: command not found", "error", "bash: line 1: pnpm: command not found"),
    ("cp: cannot create regular file '/etc/x': Permission denied", "error", "cp: cannot create regular file '/etc/x': Permission denied"),
]


@pytest.mark.parametrize("text,kind,detail", CASES, ids=[c[1] + str(i) for i, c in enumerate(CASES)])
def test_outcome_kind_and_detail(text, kind, detail):
    first = analyze(text)[0]
    assert first.kind == kind
    assert first.detail.startswith(detail)


def test_failures_win_over_an_earlier_pass_and_no_pass_is_claimed():
    outcomes = analyze("3 passed\n...\n1 failed, 3 passed")
    assert outcomes[0].kind == "tests_failed"
    assert all(o.kind != "tests_passed" for o in outcomes)


@pytest.mark.parametrize(
    "text",
    ["I will run the tests next.", "The build script lives in tools/.", "0 failed is what we want", "Let me commit this."],
)
def test_plain_talk_proves_nothing(text):
    assert analyze(text) == []


def test_last_outcome_is_from_the_newest_text_that_proves_something():
    assert last_outcome(["42 passed", "Now editing", "[main abc1234] Add docs"]).kind == "commit"
    assert last_outcome(["Now editing"]) is None
    assert last_outcome(["1 failed", "nothing here"]).describe() == "tests failed: 1 failed"


def _ungated(text: str) -> list[Outcome]:
    """analyze() as it was before its patterns were gated by words: every pattern run on the text."""
    found: list[Outcome] = []
    failed = next((m for p, _ in outcome._TESTS_FAILED if (m := p.search(text))), None)
    if failed is not None:
        found.append(Outcome("tests_failed", outcome._clip(failed.group(0))))
    for error_type, pattern, _ in outcome._ERRORS:
        if match := pattern.search(text):
            found.append(Outcome("error", outcome._clip(match.group(0).strip()), error_type))
            break
    if failed is None:
        passed = next((m for p, _ in outcome._TESTS_PASSED if (m := p.search(text))), None)
        if passed is not None:
            count = passed.groupdict().get("n")
            found.append(Outcome("tests_passed", f"{count.strip()} passed" if count else outcome._clip(passed.group(0))))
    build = next((m for p, _ in outcome._BUILD if (m := p.search(text))), None)
    if build is not None:
        found.append(Outcome("build_succeeded", outcome._clip(build.group(0))))
    for commit in outcome._COMMIT.finditer(text):
        found.append(Outcome("commit", f"{commit.group('sha')[:10]} {outcome._clip(commit.group('subject'), 60)}"))
    for url in dict.fromkeys(outcome._PR.findall(text)):
        found.append(Outcome("pr", url))
    return found


FRAGMENTS = [c[0] for c in CASES] + [
    "OK",
    "ok (3 tests)",
    "Tests failed",
    "ALL 3 TESTS PASSED",
    "error: linker `cc` not found",
    "SyntaxError: invalid syntax",
    "AssertionError",
    "fatal: not a git repository",
    "panic: runtime error",
    "ENOENT: no such file",
    "Segmentation fault (core dumped)",
    "EACCES",
    "Build Complete",
    "Compiled successfully",
    "Successfully built abc",
    "3 pass, 0 fail",
    "I will run the tests next.",
    "plain words",
    "",
]


def test_the_word_gates_never_change_a_result():
    """Every pattern's gate words must be in any text it matches: compare with running every pattern."""
    rng = random.Random(7)
    for _ in range(3000):
        parts = rng.sample(FRAGMENTS, rng.randint(1, 4))
        text = rng.choice(["\n", " ", "\n\n"]).join(p.upper() if rng.random() < 0.2 else p for p in parts)
        assert analyze(text) == _ungated(text), text


def test_only_the_end_of_a_huge_output_is_analysed():
    filler = ("lorem ipsum dolor sit amet " * 3 + "\n") * (outcome.TAIL // 80)
    assert analyze("error: at the start\n" + filler + "=== 42 passed in 9s ===")[0].detail == "42 passed"
    assert [o.kind for o in analyze("error: far back\n" + filler + filler)] == []
    assert analyze(filler + "bash: x: command not found")[0].detail == "bash: x: command not found"
