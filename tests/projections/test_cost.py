"""What sessions' model requests cost (issue 47): usage read by category, each request priced at its model's
rates (as genai-prices prices it), grouped by day, model, project or session, unknown models never zero."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.helpers.formats import SHARED_FIXTURES, needs_shared, real_session
from waybook import InMemoryJournal, Session
from waybook.model import Record
from waybook.prices import GenaiPrices
from waybook.projections import (
    Cost,
    FixedPrices,
    Rate,
    Rates,
    Tokens,
    UsageEntry,
    cost_report,
    price,
    tokens_of,
    usage_entries,
)
from waybook.projections._cost import instant

genai_prices = pytest.importorskip("genai_prices")

FLAT = FixedPrices(
    {
        "m-1": Rates(
            input=Rate(Decimal(3)),
            output=Rate(Decimal(15)),
            cache_read=Rate(Decimal("0.3")),
            cache_write=Rate(Decimal("3.75")),
            cache_write_1h=Rate(Decimal(6)),
        )
    }
)


def session_with(
    *turns: tuple[str, str | None, dict[str, int]], journal_id: str = "s1", cwd: str = "/work/shop"
) -> list[Record]:
    """A session whose assistant turns recorded (at, model, usage), after a header naming `cwd`."""
    times = iter([turns[0][0], *(turn[0] for turn in turns)])  # the header, then each turn
    session = Session.create(
        InMemoryJournal(journal_id),
        journal_id=journal_id,
        metadata={"claude_code": {"cwd": cwd}},
        clock=lambda: next(times, "2026-01-01T00:00:00Z"),
    )
    for _at, model, usage in turns:
        session.assistant("done", model=model, usage=usage)
    return list(session.journal.read())


# --- tokens by category -------------------------------------------------------------------------------


def test_anthropic_usage_counts_input_without_the_cache_and_the_hour_long_writes_apart() -> None:
    usage = {
        "input_tokens": 3,
        "output_tokens": 441,
        "cache_read_input_tokens": 12_000,
        "cache_creation_input_tokens": 8_037,
        "cache_creation.ephemeral_5m_input_tokens": 37,
        "cache_creation.ephemeral_1h_input_tokens": 8_000,
    }
    assert tokens_of(usage) == Tokens(
        input=3, output=441, cache_read=12_000, cache_write=8_037, cache_write_1h=8_000
    )


def test_a_usage_recorded_before_the_split_prices_every_cache_write_at_the_standard_rate() -> None:
    """Journals imported before the split was kept still read: no split means the 5-minute rate."""
    old = tokens_of({"input_tokens": 3, "output_tokens": 10, "cache_creation_input_tokens": 1_000_000})
    assert old == Tokens(input=3, output=10, cache_write=1_000_000)
    assert price(old, FLAT.table["m-1"]).cache_write == Decimal("3.75")


def test_openai_usage_counts_the_cached_input_once() -> None:
    codex = {
        "input_tokens": 20_292,
        "cached_input_tokens": 18_816,
        "output_tokens": 170,
        "total_tokens": 20_462,
    }
    assert tokens_of(codex) == Tokens(input=1_476, output=170, cache_read=18_816)
    chat = {"prompt_tokens": 100, "cached_tokens": 40, "completion_tokens": 7}
    assert tokens_of(chat) == Tokens(input=60, output=7, cache_read=40)


def test_pi_usage_reads_like_anthropic_usage() -> None:
    pi = {"input": 5, "output": 7, "cacheRead": 100, "cacheWrite": 20, "totalTokens": 132}
    assert tokens_of(pi) == Tokens(input=5, output=7, cache_read=100, cache_write=20)


def test_a_usage_without_a_token_count_is_none() -> None:
    assert tokens_of(None) is None
    assert tokens_of({"web_search_requests": 2}) is None


# --- prices -------------------------------------------------------------------------------------------


def test_a_long_context_request_pays_the_tier_rate_on_every_token_of_the_category() -> None:
    tiered = Rates(input=Rate(Decimal(3), ((200_000, Decimal(6)),)), output=Rate(Decimal(15)))
    short = price(Tokens(input=200_000), tiered)
    long = price(Tokens(input=200_001), tiered)
    assert short.input == Decimal("0.6")
    assert long.input == Decimal("1.200006")  # every token at 6, not only the one above 200,000


def test_a_missing_cache_rate_falls_back_to_the_broader_category() -> None:
    plain = Rates(input=Rate(Decimal(2)), output=Rate(Decimal(8)))
    cost = price(Tokens(cache_read=1_000_000, cache_write=1_000_000, cache_write_1h=500_000), plain)
    assert (cost.cache_read, cost.cache_write) == (Decimal(2), Decimal(2))


def genai_total(tokens: Tokens, model: str, at: str) -> Decimal:
    usage = genai_prices.Usage(
        input_tokens=tokens.input_with_cache,
        output_tokens=tokens.output,
        cache_read_tokens=tokens.cache_read,
        cache_write_tokens=tokens.cache_write,
        cache_write_1h_tokens=tokens.cache_write_1h,
    )
    return Decimal(genai_prices.calc_price(usage, model, genai_request_timestamp=instant(at)).total_price)


MODELS = [
    "claude-opus-4-6",
    "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5-20251001",
    "gpt-5.5",
    "gpt-5-codex",
]


@settings(max_examples=150, deadline=None)
@given(
    model=st.sampled_from(MODELS),
    tokens=st.builds(
        lambda i, o, r, w, h: Tokens(input=i, output=o, cache_read=r, cache_write=w + h, cache_write_1h=h),
        st.integers(0, 300_000),
        st.integers(0, 64_000),
        st.integers(0, 900_000),
        st.integers(0, 100_000),
        st.integers(0, 100_000),
    ),
    day=st.sampled_from(["2026-02-11", "2026-03-20"]),  # claude-opus-4-6 changed price on 2026-03-13
)
@example(
    model="claude-sonnet-4-5-20250929",
    tokens=Tokens(cache_read=230_000, cache_write=10, cache_write_1h=5),
    day="2026-02-11",
)  # past the long-context tier, with hour-long writes
def test_each_request_costs_what_genai_prices_calc_price_says(model: str, tokens: Tokens, day: str) -> None:
    at = f"{day}T12:00:00Z"
    rates = GenaiPrices().rates(model, instant(at))
    assert rates is not None
    if model.startswith("gpt"):
        tokens = Tokens(
            input=tokens.input, output=tokens.output, cache_read=tokens.cache_read
        )  # no cache writes
    assert price(tokens, rates).total == genai_total(tokens, model, at)


@needs_shared(SHARED_FIXTURES.is_dir())
def test_every_request_of_the_real_sessions_costs_what_genai_prices_says() -> None:
    files = [
        *sorted((SHARED_FIXTURES / "claude-code").rglob("*.jsonl")),
        *sorted((SHARED_FIXTURES / "codex").glob("*.jsonl")),
    ]
    prices = GenaiPrices()
    priced = 0
    for path in files:
        for entry in usage_entries(real_session(path).read(), prices=prices):
            if entry.cost is not None:
                assert entry.cost.total == genai_total(entry.tokens, entry.model, entry.at), (path, entry)
                priced += 1
    assert priced > 150


# --- the report -----------------------------------------------------------------------------------------


def test_a_model_without_a_price_is_listed_with_its_tokens_and_never_priced_as_zero() -> None:
    records = session_with(
        ("2026-02-10T10:00:00Z", "m-1", {"input_tokens": 1_000_000}),
        ("2026-02-10T11:00:00Z", "m-unknown", {"input_tokens": 7, "output_tokens": 3}),
    )
    report = cost_report(usage_entries(records, prices=FLAT), by="day", prices=FLAT.name)
    (row,) = report.rows
    assert row.unpriced == ("m-unknown",)
    assert row.cost == Cost(input=Decimal(3))  # the priced model only
    shown = report.as_json()["rows"][0]
    assert shown["unpriced_models"] == ["m-unknown"]
    unknown = next(m for m in shown["models"] if m["model"] == "m-unknown")
    assert unknown["cost_usd"] is None
    assert unknown["tokens"]["total"] == 10


def test_a_group_of_unknown_models_only_has_no_cost_at_all() -> None:
    records = session_with(("2026-02-10T10:00:00Z", "m-unknown", {"input_tokens": 7}))
    report = cost_report(usage_entries(records, prices=FLAT), by="model", prices=FLAT.name)
    assert report.total.cost is None
    assert report.as_json()["total"]["cost_usd"] is None


def test_without_a_price_table_every_cost_is_null_and_tokens_are_still_counted() -> None:
    records = session_with(("2026-02-10T10:00:00Z", "m-1", {"input_tokens": 7}))
    report = cost_report(usage_entries(records, prices=None), by="day", prices=None)
    found = report.as_json()
    assert (found["prices"], found["total"]["cost_usd"], found["total"]["tokens"]["input"]) == (None, None, 7)


def test_every_branch_counts_and_turns_without_tokens_are_left_out() -> None:
    session = Session.create(InMemoryJournal("b"), journal_id="b")
    ask = session.user("hi")
    session.assistant("a", model="m-1", usage={"input_tokens": 10})
    session.branch_from(ask.id, reason="retry")
    session.assistant("b", model="m-1", usage={"input_tokens": 20})
    session.assistant("<synthetic>", model="<synthetic>", usage={"input_tokens": 0, "output_tokens": 0})
    session.assistant("c", model="m-1")  # no usage recorded
    report = cost_report(usage_entries(session.journal.read(), prices=FLAT), by="model", prices=FLAT.name)
    assert [(row.key, row.requests, row.tokens.input) for row in report.rows] == [("m-1", 2, 30)]


def test_days_follow_the_time_zone_and_since_and_until_are_inclusive() -> None:
    records = session_with(
        ("2026-02-09T23:30:00Z", "m-1", {"input_tokens": 1}),
        ("2026-02-10T12:00:00Z", "m-1", {"input_tokens": 2}),
        ("2026-02-11T22:30:00Z", "m-1", {"input_tokens": 4}),
    )
    entries = usage_entries(records, prices=FLAT)
    utc = cost_report(entries, by="day", prices=FLAT.name)
    assert [(r.key, r.tokens.input) for r in utc.rows] == [
        ("2026-02-09", 1),
        ("2026-02-10", 2),
        ("2026-02-11", 4),
    ]
    berlin = cost_report(entries, by="day", prices=FLAT.name, timezone=ZoneInfo("Europe/Berlin"))
    assert [(r.key, r.tokens.input) for r in berlin.rows] == [("2026-02-10", 3), ("2026-02-11", 4)]
    window = cost_report(
        entries, by="day", prices=FLAT.name, since=date(2026, 2, 10), until=date(2026, 2, 10)
    )
    assert [(r.key, r.tokens.input) for r in window.rows] == [("2026-02-10", 2)]
    assert window.total.tokens.input == 2


def test_projects_come_from_the_working_folder_and_sessions_from_the_journal_id() -> None:
    shop = session_with(
        ("2026-02-10T10:00:00Z", "m-1", {"input_tokens": 1}), journal_id="s1", cwd="/work/shop"
    )
    blog = session_with(
        ("2026-02-10T11:00:00Z", "m-1", {"input_tokens": 2}), journal_id="s2", cwd="/work/blog"
    )
    entries = [*usage_entries(shop, prices=FLAT), *usage_entries(blog, prices=FLAT)]
    by_project = cost_report(entries, by="project", prices=FLAT.name)
    assert [(r.key, r.tokens.input) for r in by_project.rows] == [("/work/blog", 2), ("/work/shop", 1)]
    by_session = cost_report(entries, by="session", prices=FLAT.name)
    assert [r.key for r in by_session.rows] == ["s1", "s2"]


def test_a_request_recorded_in_a_fork_and_in_its_source_counts_once() -> None:
    session = Session.create(InMemoryJournal("source"), journal_id="source")
    session.user("hi")
    answer = session.assistant("a", model="m-1", usage={"input_tokens": 10})
    fork = session.fork(answer.id, InMemoryJournal("fork"), journal_id="fork")
    fork.assistant("b", model="m-1", usage={"input_tokens": 5})
    entries = [
        *usage_entries(session.journal.read(), prices=FLAT),
        *usage_entries(fork.journal.read(), prices=FLAT),
    ]
    report = cost_report(entries, by="session", prices=FLAT.name)
    assert report.total.tokens.input == 15
    assert [(r.key, r.tokens.input) for r in report.rows] == [("fork", 5), ("source", 10)]


def test_the_same_records_give_the_same_report_bytes() -> None:
    records = session_with(
        ("2026-02-10T10:00:00Z", "m-1", {"input_tokens": 123_457, "output_tokens": 99}),
        ("2026-02-10T11:00:00Z", "claude-opus-4-6", {"input_tokens": 3, "cache_creation_input_tokens": 77}),
    )
    runs = [
        json.dumps(cost_report(usage_entries(records, prices=GenaiPrices()), by=by, prices="p").as_json())
        for by in ("day", "day")
    ]
    assert runs[0] == runs[1]


def test_an_unknown_grouping_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="day, model, project, session"):
        cost_report([], by="week", prices=None)  # type: ignore[arg-type]


entries_strategy = st.lists(
    st.builds(
        UsageEntry,
        session=st.sampled_from(["s1", "s2", "s3"]),
        record=st.text("abc", min_size=1, max_size=3),
        at=st.sampled_from(["2026-02-09T23:59:59Z", "2026-02-10T00:00:00Z", "2026-02-11T08:00:00.5Z"]),
        model=st.sampled_from(["m-1", "m-2"]),
        project=st.sampled_from(["/a", "/b"]),
        tokens=st.builds(Tokens, input=st.integers(0, 10**7), output=st.integers(0, 10**6)),
        cost=st.one_of(st.none(), st.builds(Cost, input=st.decimals(0, 100, places=6))),
    ),
    max_size=30,
)


@settings(max_examples=100, deadline=None)
@given(entries=entries_strategy)
def test_every_grouping_splits_the_same_total(entries: list[UsageEntry]) -> None:
    totals = set()
    for by in ("day", "model", "project", "session"):
        report = cost_report(entries, by=by, prices="p")  # type: ignore[arg-type]
        rows_tokens = sum((row.tokens.total for row in report.rows), 0)
        assert rows_tokens == report.total.tokens.total
        assert sum(row.requests for row in report.rows) == report.total.requests
        totals.add((report.total.tokens, report.total.requests))
    assert len(totals) == 1
