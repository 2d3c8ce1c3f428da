"""The price table: taken from the maintained genai-prices table, never typed by hand; the user's own file over it; its age said by doctor."""

from __future__ import annotations

import json
from datetime import date, timedelta
from importlib import resources

import pytest

from headspace_tui.cli.doctor import OK, WARN, check_prices
from headspace_tui.usage import prices
from headspace_tui.usage.model import Tokens
from headspace_tui.usage.table_source import generate, render


@pytest.fixture
def own_table(tmp_path, monkeypatch):
    """A private config folder whose prices.json the test writes; the table read again around the test."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    folder = tmp_path / "headspace"
    folder.mkdir()
    prices.table.cache_clear()
    yield folder / "prices.json"
    prices.table.cache_clear()


def test_the_shipped_table_is_the_pinned_genai_prices_table_as_of_its_date():
    shipped = resources.files("headspace_tui.usage").joinpath("prices.json").read_text(encoding="utf-8")
    as_of = date.fromisoformat(json.loads(shipped)["as_of"])
    assert render(generate(as_of)) == shipped, "prices.json differs from genai-prices: regenerate it (python -m headspace_tui.usage.table_source DATE)"


def test_the_pinned_claudes_default_model_is_priced_with_its_window():
    price = prices.price_of("claude-opus-5-5")
    assert price is not None and price.priced and price.window == 1_000_000
    assert prices.estimate("claude-opus-5-5", Tokens(1_000_000, 1_000_000, 0, 0)) == price.input + price.output  # type: ignore[operator]


def test_a_users_prices_json_adds_a_window_or_a_price_and_overrides_the_shipped_one(own_table):
    cheaper = {"input": 1, "output": 2, "cache_read": 0, "cache_write": 0, "window": 300_000}
    own_table.write_text(json.dumps({"models": {"acme-coder": {"window": 64_000}, "claude-sonnet-4-5": cheaper}, "aliases": {"acme": "acme-coder"}}))
    assert prices.window_of("acme-coder-latest") == (64_000, "table") and prices.window_of("acme") == (64_000, "table")
    assert prices.estimate("acme-coder", Tokens(10, 10, 0, 0)) is None  # a window alone: no price guessed
    assert prices.estimate("claude-sonnet-4-5", Tokens(1_000_000, 1_000_000, 0, 0)) == 3.0 and prices.window_of("claude-sonnet-4-5") == (300_000, "table")
    assert prices.table().words().endswith(", and your prices.json")


@pytest.mark.parametrize(
    "text, said",
    [
        ("{not json", "not read"),
        (json.dumps({"models": {"m": {"input": 1}}}), "give all four prices"),
        (json.dumps({"models": {"m": {"window": "big"}}}), "window is a whole number"),
        (json.dumps({"models": {"m": {}}}), "neither prices nor a window"),
        (json.dumps({"models": ["m"]}), "expected"),
    ],
)
def test_a_bad_prices_json_is_left_out_and_said_and_the_shipped_table_stands(own_table, text, said):
    own_table.write_text(text)
    assert prices.price_of("claude-opus-5-5") is not None
    known = prices.table()
    assert known.own == "" and said in known.problem and str(own_table) in known.problem
    checks = check_prices()
    assert checks[0].verdict == WARN and said in checks[0].detail and str(own_table) in checks[0].fix


def test_a_prices_json_that_is_not_a_regular_file_is_not_read(own_table):
    own_table.mkdir()
    assert "not a regular file" in prices.table().problem


def test_doctor_says_the_tables_date_and_warns_when_it_is_old(own_table):
    as_of = date.fromisoformat(prices.table().as_of)
    (fresh,) = check_prices(as_of + timedelta(days=10))
    assert fresh.verdict == OK and f"as of {as_of.isoformat()}" in fresh.detail and "genai-prices" in fresh.detail
    (old,) = check_prices(as_of + timedelta(days=prices.OLD_AFTER_DAYS + 1))
    assert old.verdict == WARN and f"{prices.OLD_AFTER_DAYS + 1} days old" in old.detail and "prices.json" in old.fix
