"""`waybook stats --by day|model|project|session` (issue 47): tokens and cost of the real Claude Code and
Codex sessions, per journal and over a whole store, the options refused in CLI terms, and without
genai-prices a report whose costs are null and a warning naming the extra."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli_runner import installed_env, on_terminal, waybook
from tests.helpers.formats import SHARED_FIXTURES
from waybook import JsonlJournal, Session

pytest.importorskip("genai_prices")

CLAUDE = SHARED_FIXTURES / "claude-code"
CODEX = SHARED_FIXTURES / "codex"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Every shared Claude Code and Codex session, imported into one directory store as folders."""
    if not CLAUDE.is_dir() or not CODEX.is_dir():
        pytest.skip("the shared fixtures are not on this machine")
    url = f"file:{tmp_path_factory.mktemp('cost')}/store"
    assert waybook("import", "claude-code", CLAUDE, "--store", url).returncode == 0
    assert waybook("import", "codex", CODEX, "--store", url).returncode == 0
    return url


def report(*args: str | Path) -> dict[str, Any]:
    ran = waybook("stats", *args, "--json")
    assert ran.returncode == 0, ran.stderr
    found: dict[str, Any] = json.loads(ran.stdout)
    return found


def cell(found: dict[str, Any], key: str, model: str) -> dict[str, Any]:
    row = next(r for r in found["rows"] if r[found["by"]] == key)
    return next(m for m in row["models"] if m["model"] == model)


def test_the_store_wide_daily_report_has_tokens_and_cost_per_day_and_model(store: str) -> None:
    daily = report("--store", store, "--by", "day")
    assert daily["prices"].startswith("genai-prices ")
    assert [row["day"] for row in daily["rows"]] == ["2025-12-10", "2026-02-10", "2026-02-11", "2026-05-11"]
    opus = cell(daily, "2026-02-10", "claude-opus-4-6")
    assert opus["tokens"] == {
        "input": 1_633,
        "output": 1_811,
        "cache_write": 57_373,
        "cache_write_1h": 57_373,
        "cache_read": 527_032,
        "total": 587_849,
    }
    assert opus["cost_usd"]["total"] == pytest.approx(0.890686)  # what ccusage 20.0.24 reports for the day
    codex = cell(daily, "2026-05-11", "gpt-5.5")
    assert (codex["tokens"]["input"], codex["tokens"]["cache_read"], codex["tokens"]["output"]) == (
        1_126_300,
        4_929_536,
        9_118,
    )
    assert codex["cost_usd"]["total"] == pytest.approx(8.369808)
    costs = [row["cost_usd"]["total"] for row in daily["rows"]]
    assert daily["total"]["cost_usd"]["total"] == pytest.approx(sum(costs))


def test_an_unknown_model_is_listed_with_its_tokens_and_no_cost(store: str) -> None:
    daily = report("--store", store, "--by", "day")
    first = daily["rows"][0]
    unknown = "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert first["unpriced_models"] == [unknown]
    assert cell(daily, "2025-12-10", unknown)["cost_usd"] is None
    assert cell(daily, "2025-12-10", unknown)["tokens"]["total"] > 0
    assert daily["total"]["unpriced_models"] == [unknown]


def test_every_grouping_reports_the_same_total(store: str) -> None:
    totals = [report("--store", store, "--by", by)["total"] for by in ("day", "model", "project", "session")]
    assert all(total == totals[0] for total in totals)
    projects = [row["project"] for row in report("--store", store, "--by", "project")["rows"]]
    assert "/Users/Sample_User/repos/codemie-ai/codemie-code" in projects  # the Codex session's folder


def test_the_store_report_is_the_sum_of_its_journals_reports(store: str) -> None:
    listed = json.loads(waybook("ls", "--store", store, "--json").stdout)["journals"]
    whole = report("--store", store, "--by", "model")["total"]
    each = [report("--store", store, journal["id"], "--by", "model")["total"] for journal in listed]
    assert sum(t["tokens"]["total"] for t in each) == whole["tokens"]["total"]
    priced = [t["cost_usd"]["total"] for t in each if t["cost_usd"] is not None]
    assert sum(priced) == pytest.approx(whole["cost_usd"]["total"])


def test_since_and_until_keep_the_days_between_them_inclusive(store: str) -> None:
    window = report("--store", store, "--by", "day", "--since", "2026-02-10", "--until", "20260211")
    assert [row["day"] for row in window["rows"]] == ["2026-02-10", "2026-02-11"]
    assert (window["since"], window["until"]) == ("2026-02-10", "2026-02-11")


def test_a_file_journal_reports_its_own_requests(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="s")
        session.user("hi")
        session.assistant("hello", model="claude-opus-4-6", usage={"input_tokens": 1_000_000})
    found = report(path, "--by", "model")
    assert [row["model"] for row in found["rows"]] == ["claude-opus-4-6"]
    assert found["total"]["cost_usd"]["input"] == pytest.approx(5.0)  # $5 per million input tokens


def test_the_summary_shows_each_models_cost(store: str) -> None:
    listed = json.loads(waybook("ls", "--store", store, "--json").stdout)["journals"]
    codex = next(j["id"] for j in listed if j["id"].startswith("019e1625"))
    summary = json.loads(waybook("stats", "--store", store, codex, "--json").stdout)
    (found,) = summary.values()
    assert found["cost"]["total"]["cost_usd"]["total"] == pytest.approx(8.369808)
    text = waybook("stats", "--store", store, codex).stdout
    assert "gpt-5.5:" in text
    assert "($8.3698)" in text


def test_the_daily_report_fits_80_columns_and_names_what_it_leaves_unpriced(store: str) -> None:
    status, raw = on_terminal("stats", "--store", store, "--by", "day", columns=80)
    assert status == 0
    lines = ANSI.sub("", raw.decode()).replace("\r", "").splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    text = "\n".join(lines)
    for column in ("DAY", "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "COST"):
        assert column in text
    assert "$8.37" in text
    assert "not priced (genai-prices" in text


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--since", "2026-02-10"], "--since filter a cost report: add --by day|model|project|session"),
        (
            ["--by", "day", "--since", "2026-02-12", "--until", "2026-02-10"],
            "--since 2026-02-12 is after --until",
        ),
    ],
)
def test_options_that_cannot_work_are_refused_in_cli_terms(store: str, args: list[str], says: str) -> None:
    ran = waybook("stats", "--store", store, *args)
    assert ran.returncode == 2
    assert says in ran.stderr
    assert ran.stdout == ""


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--by", "week"], "invalid choice: 'week'"),
        (["--by", "day", "--since", "10.02.2026"], "is not a day; give YYYY-MM-DD"),
        (["--by", "day", "--since", "2026-02-30"], "is not a day; give YYYY-MM-DD"),
        (["--by", "day", "--timezone", "Mars/Olympus"], "is not a time zone this system knows"),
    ],
)
def test_bad_values_are_refused_with_what_to_give(store: str, args: list[str], says: str) -> None:
    ran = waybook("stats", "--store", store, *args)
    assert ran.returncode == 2
    assert says in ran.stderr


def test_without_genai_prices_costs_are_null_and_the_warning_names_the_extra(store: str) -> None:
    """genai-prices made unimportable for real, in a process of its own."""
    code = (
        "import sys; sys.modules['genai_prices'] = None\n"
        "from waybook.cli import main\n"
        f"sys.exit(main(['stats', '--store', {store!r}, '--by', 'day', '--json']))"
    )
    ran = subprocess.run([sys.executable, "-c", code], env=installed_env(), capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert "pip install 'waybook[prices]'" in ran.stderr
    found = json.loads(ran.stdout)
    assert found["prices"] is None
    assert found["total"]["cost_usd"] is None
    assert found["total"]["tokens"]["total"] > 0
