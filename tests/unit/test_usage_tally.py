"""An agent's tokens, context and cost, folded from its transcript's turns (service/records/usage_tally.py, usage/)."""

from __future__ import annotations

import json
from pathlib import Path

from headspace_tui.detect.claude.transcript import TranscriptTail, parse_line
from headspace_tui.detect.turns import Turn
from headspace_tui.service.records.usage_tally import UsageTally
from headspace_tui.usage.model import Tokens, Usage
from headspace_tui.usage.prices import estimate, price_of, table, window_of
from headspace_tui.usage.words import usage_lines

SAMPLE = Path(__file__).parent.parent / "data" / "transcripts" / "bash_question_2.1.330.jsonl"


def reply(message_id: str, usage: tuple[int, int, int, int], model: str = "claude-sonnet-4-5", **extra) -> Turn:
    return Turn("agent", message_id=message_id, model=model, usage=usage, **extra)


def test_a_real_transcripts_sums_are_claudes_own_cost_state_counts():
    """Claude 2.1.330 writes one line per block of a reply, each repeating the reply's counts, and at the end its own sums."""
    tally = UsageTally()
    assert tally.add(TranscriptTail(SAMPLE).read_new())
    lines = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    (own,) = {json.dumps(line["modelUsage"], sort_keys=True) for line in lines if line.get("type") == "cost-state"}
    ((model, counts),) = json.loads(own).items()
    usage = tally.usage()
    assert usage.model == model
    assert usage.tokens == Tokens(counts["inputTokens"], counts["outputTokens"], counts["cacheReadInputTokens"], counts["cacheCreationInputTokens"])
    assert sum(1 for line in lines if line.get("type") == "assistant") > len({line["message"]["id"] for line in lines if line.get("type") == "assistant"})


def test_one_reply_counts_once_its_last_lines_counts_win_and_the_context_is_the_last_main_prompt():
    tally = UsageTally()
    tally.add([reply("m1", (100, 1, 5000, 300)), reply("m1", (100, 20, 5000, 300)), Turn("user", text="go on")])
    tally.add([reply("m2", (10, 5, 5400, 0)), reply("s1", (999, 9, 0, 0), sidechain=True)])
    usage = tally.usage()
    assert usage.tokens == Tokens(1109, 34, 10400, 300)  # the subagent's reply costs too
    assert usage.context_tokens == 10 + 5400 and usage.context_window == 200_000 and usage.context_pct == 2
    assert usage.cost_usd == estimate("claude-sonnet-4-5", Tokens(1109, 34, 10400, 300))


def test_an_api_errors_own_line_is_no_reply_and_reading_nothing_new_changes_nothing():
    tally = UsageTally()
    tally.add([reply("m1", (100, 20, 0, 0))])
    message = {"id": "x", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error: Request rejected (429)"}], "usage": {"input_tokens": 0, "output_tokens": 0}}
    error = parse_line({"type": "assistant", "isApiErrorMessage": True, "error": "rate_limit", "message": message})
    assert error is not None
    assert not tally.add([error])
    assert not tally.add([])
    assert tally.usage().model == "claude-sonnet-4-5" and tally.usage().context_tokens == 100


def test_a_model_the_table_does_not_list_has_no_estimate_and_says_so():
    tally = UsageTally()
    tally.add([reply("m1", (100, 20, 0, 0), model="claude-nova-9")])
    usage = tally.usage()
    assert usage.cost_usd is None and usage.context_window == 0 and usage.context_pct is None and usage.unpriced == ("claude-nova-9",)
    words = dict(usage_lines(usage))
    assert "no estimate" in words["Cost"] and "window is not known" in words["Context"]


def test_an_unlisted_model_gets_its_familys_window_marked_as_assumed():
    tally = UsageTally()
    tally.add([reply("m1", (50_000, 20, 0, 0), model="claude-nova-9")])
    usage = tally.usage(assumed=200_000)
    assert (usage.context_window, usage.window_source, usage.context_pct) == (200_000, "assumed", 25)
    assert dict(usage_lines(usage))["Context"] == "50,000 of 200,000 tokens (25%) · window assumed: the agent's default, nothing said it · claude-nova-9"


def test_the_pinned_claudes_default_model_has_its_window_and_price_from_the_table():
    tally = UsageTally()
    tally.add([reply("m1", (100, 20, 300_000, 0), model="claude-opus-5-5")])
    usage = tally.usage(assumed=200_000)
    assert (usage.context_window, usage.window_source, usage.context_pct) == (1_000_000, "table", 30)
    assert usage.cost_usd == estimate("claude-opus-5-5", Tokens(100, 20, 300_000, 0)) is not None and usage.unpriced == ()


def test_a_session_of_two_models_estimates_the_listed_one_and_names_the_other():
    tally = UsageTally()
    tally.add([reply("m1", (1_000_000, 0, 0, 0), model="claude-sonnet-4-5"), reply("m2", (500, 10, 0, 0), model="claude-nova-9")])
    usage = tally.usage()
    assert usage.cost_usd == 3.0 and usage.unpriced == ("claude-nova-9",)
    cost = dict(usage_lines(usage))["Cost"]
    assert cost.startswith("$3.00 est. (list prices as of ") and cost.endswith("; leaves out claude-nova-9: not in the price table)"), cost


def test_prices_match_dated_ids_by_their_longest_listed_name_and_the_long_context_suffix():
    assert price_of("claude-opus-4-5-20251101") == price_of("claude-opus-4-5") != price_of("claude-opus-4")
    assert price_of("gpt-5-mini-2025-08-07") == price_of("gpt-5-mini") != price_of("gpt-5") == price_of("gpt-5-2025-08-07")
    assert price_of("claude-sonnet-4-50") is None  # a name is matched whole, not by its first letters
    assert window_of("claude-sonnet-4-5[1m]") == (1_000_000, "agent") and window_of("claude-sonnet-4-5") == (200_000, "table")
    assert window_of("claude-nova-9") == (0, "") and window_of("claude-nova-9", 200_000) == (200_000, "assumed")
    assert price_of("claude-opus-5.5-20261201") == price_of("claude-opus-5-5") is not None  # a name the table knows it by
    assert estimate("claude-sonnet-4-5", Tokens(1_000_000, 0, 0, 0)) == 3.0


def test_usage_words_say_the_context_the_tokens_and_the_estimate():
    usage = Usage("claude-sonnet-4-5", Tokens(1400, 400, 12000, 800), 7200, 200_000, 0.0123, window_source="table")
    assert usage_lines(usage)[:3] == [
        ("Context", "7,200 of 200,000 tokens (3%) · window from the price table · claude-sonnet-4-5"),
        ("Tokens", "1,400 in · 400 out · 12,000 cache read · 800 cache write"),
        ("Cost", f"$0.01 est. (list prices as of {table().as_of}, {table().source})"),
    ]
