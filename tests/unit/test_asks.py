"""A question typed in a reply is found wherever its question mark sits; a statement that contains one is not a question (issue 37).

The real screens of every kind below are in the corpus
(``snapshots/panes/claude-*/*/*/input_question_*`` and ``idle_question_*``,
``idle_quoted_question``) and read by ``test_classify_corpus.py``; these are
the reader's rules on their own, with the variants the corpus does not draw.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from headspace_tui.detect.asks import asked
from headspace_tui.model import AgentState

PANES_DIR = Path(__file__).resolve().parents[2] / "snapshots" / "panes"


def lines(text: str) -> list[str]:
    return text.split("\n")


@pytest.mark.parametrize(
    "reply,how,paragraph",
    [
        ("Done. Should I go on?", "ends-with-question", "Done. Should I go on?"),
        # Before the choices it offers: a list, wrapped items, a lead-in ending in ":".
        (
            "I found three failing tests. Which one should I look at first?\n\n1. test_parser fails on an empty\n   config file\n2. test_cache",
            "question-before-choices",
            "I found three failing tests. Which one should I look at first?",
        ),
        ("Do you want me to fix one of these? Here they are:\n\n- the parser\n- the cache", "question-before-choices", None),
        # Before a code block (Claude draws it without its fences), a short remark under it allowed.
        ("Should I apply this with a 0.5 s floor?\n\ndef backoff(n):\n    return min(30, 0.5 * 2 ** n)\n\nThe tests pass either way.", "question-before-choices", None),
        # In a final short paragraph, a short remark after it.
        ("The parser is done.\n\nWant me to update the changelog too? It still describes the old behaviour.", "question-then-remark", None),
        ("Would you like the same for the tokenizer? Just say the word.", "question-then-remark", None),
        # A shell command or a table as what is offered, and a heading over the list.
        ("Should I run this for you?\n\ngit commit -am 'parser: read one rune at a time' && git push origin main --force-with-lease", "question-before-choices", None),
        ("Which of these would you like me to fix first?\n\n┌──────┬──────┐\n│ test │ time │\n└──────┴──────┘", "question-before-choices", None),
        ("Should I start with one of them?\n\nFailing tests\n\n1. test_parser\n2. test_cache", "question-before-choices", None),
    ],
)
def test_a_question_to_you_is_found_wherever_it_sits(reply, how, paragraph):
    found = asked(lines(reply))
    assert found is not None and found.how == how
    if paragraph is not None:
        assert found.paragraph == paragraph


@pytest.mark.parametrize(
    "reply",
    [
        "All done; the build is green.",
        # Rhetorical, answered in the same reply (short or long).
        "Why did the build fail? The cache was stale.",
        # Asked and answered by the reply itself, even in words that would ask you.
        "Should I worry about the cache? No, it is rebuilt on every start.",
        "Why did the build fail? The cache held a stale lockfile, so the install step pulled old versions. I cleared the cache.",
        # Someone else's question, quoted or in inline code.
        'The health check printed "Is the server running?" and exited. I restarted it.',
        "The prompt `Overwrite existing file?` no longer blocks the script.",
        # A question heading a list of what was done, not a question to you.
        "What changed in this pass?\n\n- the tokenizer reads one rune at a time\n- the parser reports every error",
        # A question to you, but long prose follows it: the reply went on and settled it.
        "Should I keep the old flag? I looked at every caller and none of them passes it any more, so I removed it along with its tests and its docs.",
        # A question to you, then two paragraphs of prose: not the end of what was said.
        "Should I keep the old flag?\n\nNo caller passes it.\n\nI removed it.",
        "",
    ],
)
def test_a_statement_that_merely_contains_a_question_is_not_one(reply):
    assert asked(lines(reply)) is None


def test_the_corpus_holds_real_text_questions_before_a_list_from_three_versions_read_input():
    """Issue 37's bar: real screens of a question followed by its list, from several versions, 80x24 and wide, all ``input``."""
    import json

    from headspace_tui.detect.claude import classify_capture
    from tests.harness.record import PANES

    screens = sorted(PANES.glob("claude-*/*/*/input_question_before_list.json"))
    versions = {json.loads(p.read_text())["claude_version"] for p in screens}
    sizes = {p.parent.name for p in screens}
    assert len(versions) >= 3 and {"80x24", "200x50"} <= sizes, (versions, sizes)
    for path in screens:
        observation = classify_capture(path.with_suffix(".ansi").read_text())
        assert observation.state is AgentState.INPUT, path
        assert observation.question == "I found three failing tests. Which one should I look at first?"


def test_the_sentence_that_asks_is_named_too():
    assert asked(lines("Done. Should I go on?")).question == "Should I go on?"
    assert asked(lines("I found three. Which one should I look at first?\n\n1. a\n2. b")).question == "Which one should I look at first?"
    assert asked(lines("Want me to update it too? It is old.")).question == "Want me to update it too?"


# -- the other families' readers hand their last reply to the same rules -------------
def test_opencode_a_question_before_a_tool_ran_is_not_the_turns_last_word():
    """A real opencode screen of a question before its list, with the list swapped for a tool's row: what ran after it settled the turn."""
    from headspace_tui.detect.opencode import classify

    text = (PANES_DIR / "opencode-1.18.33" / "alt" / "80x24" / "input_question_before_list.txt").read_text()
    assert classify(text, command="opencode").state is AgentState.INPUT
    rows = text.split("\n")
    listed = [k for k, row in enumerate(rows) if row.lstrip().startswith(("1. ", "2. ", "3. "))]
    assert len(listed) == 3
    rows[listed[0]] = "     $ pytest tests/test_parser.py"
    for k in listed[1:]:
        rows[k] = ""
    assert classify("\n".join(rows), command="opencode").state is AgentState.IDLE


@pytest.mark.parametrize("family", ["codex-0.169.0", "gemini-0.61.0", "opencode-1.18.33"])
def test_the_other_families_corpora_hold_the_same_text_questions(family):
    found = {p.stem for p in (PANES_DIR / family).glob("*/*/*.json")}
    assert {"input_question_before_list", "input_question_before_code", "input_question_short_last_paragraph"} <= found
    assert {"idle_question_answered_in_reply", "idle_quoted_question", "idle_question_heading_a_list"} <= found
