"""Intent detection (PRD FR5) against a labelled set of real-shaped agent turns.

``tests/data/intent_labelled.jsonl`` holds 161 labelled turns:

* 34 transcript-derived: assistant text turns read back from the transcripts
  the real Claude Code binary wrote (``python -m tests.data.make_intent_transcripts``,
  14 scripted sessions), labelled by hand;
* 127 hand-labelled: 119 hand-written agent turns in the style of real
  Claude Code replies (multi-paragraph, code blocks, lists, "Let me…",
  "Would you like me to…", negations, quoted dialogs) and 8 user turns.
  30 of the agent turns (``"batch": "holdout"``) were written after the
  detector was frozen; it scored 27/30 on them before two general fixes.

The PRD asks for more than 90 % accuracy; the test prints the score per class.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from headspace_tui.state.intent import IntentResult, TurnIntent, detect_intent, normalize_actor
from headspace_tui.state.machine import CommandState

DATA = Path(__file__).resolve().parents[1] / "data" / "intent_labelled.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def score(rows):
    per_class: dict[str, list[int]] = {}
    misses = []
    for row in rows:
        got = detect_intent(row["actor"], row["text"], row["state"]).intent.value
        hits = per_class.setdefault(row["intent"], [0, 0])
        hits[1] += 1
        if got == row["intent"]:
            hits[0] += 1
        else:
            misses.append((row["intent"], got, row["text"][:100]))
    return per_class, misses


# --------------------------------------------------------------------------
# The labelled set


def test_the_labelled_set_is_well_formed_and_mixed():
    sources = Counter((row["source"], row["actor"]) for row in ROWS)
    assert sources[("transcript", "agent")] == 34
    assert sources[("hand", "agent")] >= 60
    assert sum(sources.values()) == len(ROWS) == 161
    for row in ROWS:
        assert set(row) >= {"actor", "text", "state", "intent", "source"}
        assert row["source"] in ("transcript", "hand")
        assert row["state"] in {s.value for s in CommandState}
        assert TurnIntent(row["intent"])
        allowed = ("command", "answer") if row["actor"] == "user" else ("question", "progress", "completion")
        assert row["intent"] in allowed, row
    labels = Counter(row["intent"] for row in ROWS if row["actor"] == "agent")
    assert min(labels.values()) >= 30, labels


def test_transcript_rows_are_what_the_real_sessions_produced():
    """Each transcript row is a scripted reply, read back whole from Claude's own transcript."""
    from tests.data.make_intent_transcripts import CONVERSATIONS

    scripted = {step.text for c in CONVERSATIONS for p in c.prompts for step in p.steps if step.text}
    names = {c.name for c in CONVERSATIONS}
    rows = [row for row in ROWS if row["source"] == "transcript"]
    assert {row["session"] for row in rows} == names
    for row in rows:
        assert row["text"] in scripted, row["text"][:80]


def test_accuracy_is_above_ninety_percent_overall_and_per_class(capsys):
    per_class, misses = score(ROWS)
    total = sum(n for n, _ in per_class.values()) / sum(m for _, m in per_class.values())
    lines = [f"{name:<11} {hit}/{of} = {hit / of:.1%}" for name, (hit, of) in sorted(per_class.items())]
    report = "\n".join([f"overall {total:.1%} over {len(ROWS)} turns", *lines, *(f"miss: {m}" for m in misses)])
    with capsys.disabled():
        print("\n" + report)
    assert total >= 0.90, report
    for name, (hit, of) in per_class.items():
        assert hit / of >= 0.85, f"{name}: {report}"


@pytest.mark.parametrize("source", ["transcript", "hand"])
def test_accuracy_holds_for_each_source(source):
    per_class, misses = score([row for row in ROWS if row["source"] == source])
    total = sum(n for n, _ in per_class.values()) / sum(m for _, m in per_class.values())
    assert total >= 0.90, misses


def test_held_out_batch_stays_above_ninety_percent():
    held_out = [row for row in ROWS if row.get("batch") == "holdout"]
    assert len(held_out) == 30
    per_class, misses = score(held_out)
    assert sum(n for n, _ in per_class.values()) / len(held_out) >= 0.90, misses


# --------------------------------------------------------------------------
# The rules, one by one


@pytest.mark.parametrize("state", [s.value for s in CommandState if s is not CommandState.AWAITING_INPUT] + [None])
def test_user_turns_are_commands_unless_the_agent_waits(state):
    result = detect_intent("user", "please fix the build", state)
    assert result == IntentResult(TurnIntent.COMMAND, 1.0, "", "user-otherwise")


def test_a_user_turn_while_awaiting_input_is_an_answer():
    assert detect_intent("user", "yes", CommandState.AWAITING_INPUT).intent is TurnIntent.ANSWER
    assert detect_intent("human", "", "awaiting_input").intent is TurnIntent.ANSWER


@pytest.mark.parametrize("text", [None, "", "   \n\n  ", "```\nprint('hi?')\n```"])
def test_missing_or_code_only_text_is_progress(text):
    result = detect_intent("agent", text, "processing")
    assert result.intent is TurnIntent.PROGRESS and result.confidence < 1.0


def test_unknown_actor_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="unknown actor 'robot'"):
        detect_intent("robot", "hi")
    assert normalize_actor("assistant") == "agent"


CASES = [
    # The ending decides, not a question half-way.
    ("Should I use Postgres? Looking at `settings.py`, SQLite is already configured, so I'll stick with it. Done — the model is in place.", "completion"),
    ("I've fixed the parser and all tests pass. Would you like me to open a PR?", "question"),
    ("Tests pass. Want me to also add a changelog entry?", "question"),
    ("Should I also update the docs? If so, I'll follow the existing format.", "question"),
    ("Which approach do you want?\n\n1. Keep it in memory\n2. Persist it to SQLite", "question"),
    ("Which Python version do you need? The rewrite uses `match`, which needs 3.10.", "question"),
    ("Let me know which option you prefer.", "question"),
    ("Done — the build is green.", "completion"),
    ("Done! 🎉", "completion"),
    ("I've fixed the import. Let me run the tests again.", "progress"),
    ("Fixed the first error — now running the full suite.", "progress"),
    ("Not done yet: the API is updated but the frontend still calls the old endpoint.", "progress"),
    ("The migration isn't complete; two tests still fail.", "progress"),
    ("Almost done — just the changelog left.", "progress"),
    ("Once the build is green I'll tag the release.", "progress"),
    ("Running the tests…", "progress"),
    ("Now I'll update the fixtures:", "progress"),
    ("I've updated the README. Let me know if you'd like any changes!", "completion"),
    ("Ready for review.", "completion"),
    ("The endpoint now returns 404 for unknown ids.", "completion"),
]


@pytest.mark.parametrize("text,intent", CASES, ids=[c[0][:40] for c in CASES])
def test_rules(text, intent):
    result = detect_intent("agent", text, "processing")
    assert result.intent.value == intent, result


QUOTED = [
    "It shows a dialog like this:\n\n  Do you want to proceed?\n  ❯ 1. Yes\n\nNothing is waiting for you now.",
    'The error message is "Are you sure you want to continue?". I removed the prompt from `deploy.sh`.',
    "> Should I rebase first?\n\nThat was the question in the ticket; the rebase is done and the branch is pushed.",
    "Here's the check I added:\n\n```python\nif not confirm('Delete?'):\n    return\n```\n\nIt asks before deleting and is covered by `test_delete_confirms`.",
    "| option | safe? |\n|---|---|\n| A | yes |\n\nI went with A.",
    "The function is called `should_i_retry?` in Ruby. It now retries twice.",
]


@pytest.mark.parametrize("text", QUOTED, ids=[q[:30] for q in QUOTED])
def test_quoted_or_fenced_questions_are_not_the_agent_asking(text):
    assert detect_intent("agent", text, "processing").intent is not TurnIntent.QUESTION


def test_results_explain_themselves():
    result = detect_intent("agent", "I've fixed the race. Should I also add a regression test?", "processing")
    assert result.rule == "ends-with-?" and "regression test" in result.matched and result.confidence == 1.0
    result = detect_intent("agent", "Now let me check the logs.", "processing")
    assert result.rule == "look-ahead" and result.matched.lower().startswith("now let me")


# --------------------------------------------------------------------------
# Hostile sizes.  How fast (the PRD allows 10 ms per turn) is measured by
# ``python benchmarks/intent_speed.py``, not here: a timed unit test fails on
# a busy machine and proves nothing on an idle one.

HOSTILE = [
    "\n\n".join(row["text"] for row in ROWS) * 5,  # ~100 KB of real-looking prose
    "x" * 200_000,
    "now " * 50_000,
    '"' * 100_000,
    "a\n" * 100_000,
    "```\n" * 30_000,
    "I've fixed it, but it's not done yet. " * 3_000,
]
HOSTILE_IDS = ["prose-100k", "one-word", "fillers", "quotes", "lines", "fences", "negations"]


@pytest.mark.parametrize("text", HOSTILE, ids=HOSTILE_IDS)
def test_huge_or_hostile_turns_get_an_answer(text):
    result = detect_intent("agent", text, "processing")
    assert isinstance(result, IntentResult) and isinstance(result.intent, TurnIntent)
