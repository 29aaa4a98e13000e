"""`waybook retain` (issue 46): retention from the command line: what is older than --older-than is
erased (or purged) with receipts, what is younger stays, a dry run writes nothing, the store keeps a
policy that a bare `waybook retain --store URL` applies, and a mistake in the command line changes
nothing. (The cut against a fake clock is tests/stores/test_retention.py; here old records are dated
2020 and young ones now.)"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from waybook import Session
from waybook.stores import open_store

SECRET = "the-patient-name-Zebulon-Quartermaine"


def old_clock() -> object:
    ticks = itertools.count()
    return lambda: f"2020-01-01T09:00:{next(ticks):02d}.000Z"


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    url = f"file:{tmp_path}/store" if request.param == "file" else f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        journal = store.create("s1", metadata={"env": "prod"})
        Session(journal, clock=old_clock()).user(f"my name is {SECRET}")  # type: ignore[arg-type]
        journal.close()
        journal = store.create("s2", metadata={"env": "test"})
        Session(journal).user("a session of today")
        journal.close()
    return url


def store_bytes(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file())


def test_retain_erases_old_content_prints_the_receipts_and_a_second_run_is_a_no_op(
    url: str, tmp_path: Path
) -> None:
    run = waybook("retain", "--store", url, "--older-than", "90d", "--actor", "cron", "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    (receipt,) = report["erased"]
    assert (receipt["journal"], receipt["policy"], receipt["actor"]) == ("s1", "retain-90d", "cron")
    assert [entry["seq"] for entry in receipt["erased"]] == [2]
    if url.startswith("file:"):
        assert SECRET.encode() not in store_bytes(tmp_path)
    assert waybook("verify", "--store", url, "s1").returncode == 0
    again = json.loads(waybook("retain", "--store", url, "--older-than", "90d", "--json").stdout)
    assert again["erased"] == []
    assert again["planned"] == []


def test_a_dry_run_lists_what_would_go_and_writes_nothing(url: str, tmp_path: Path) -> None:
    before = store_bytes(tmp_path)
    run = waybook("retain", "--store", url, "--older-than", "90d", "--purge", "--dry-run")
    assert run.returncode == 0, run.stderr
    assert "would purge s1" in run.stdout
    assert "s2" not in run.stdout
    assert store_bytes(tmp_path) == before


def test_purge_with_a_metadata_filter_takes_only_the_matching_old_journals(url: str) -> None:
    run = waybook("retain", "--store", url, "--older-than", "1d", "--meta", "env=test", "--purge", "--json")
    assert json.loads(run.stdout)["purged"] == []  # s2 is young
    run = waybook("retain", "--store", url, "--older-than", "1d", "--meta", "env=prod", "--purge", "--json")
    (receipt,) = json.loads(run.stdout)["purged"]
    assert receipt["journal"] == "s1"
    with open_store(url) as store:
        assert not store.exists("s1")
        assert store.exists("s2")


def test_the_store_policy_is_recorded_shown_and_applied_by_a_bare_retain(url: str) -> None:
    bare = waybook("retain", "--store", url)
    assert bare.returncode == 2
    assert "--set-policy" in bare.stderr
    recorded = waybook("retain", "--store", url, "--older-than", "30d", "--name", "gdpr-30d", "--set-policy")
    assert recorded.returncode == 0, recorded.stderr
    shown = json.loads(waybook("retain", "--store", url, "--show-policy", "--json").stdout)
    assert shown["policy"]["name"] == "gdpr-30d"
    assert shown["policy"]["older_than"] == "30d"
    applied = json.loads(waybook("retain", "--store", url, "--json").stdout)
    assert [r["policy"] for r in applied["erased"]] == ["gdpr-30d"]
    assert waybook("retain", "--store", url, "--clear-policy").returncode == 0
    assert json.loads(waybook("retain", "--store", url, "--show-policy", "--json").stdout)["policy"] is None


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--older-than", "ninety"], "--older-than 'ninety'"),
        (["--older-than", "90d", "--meta", "env"], "--meta 'env'"),
        (["--purge"], "give --older-than too"),
        (["--set-policy"], "give --older-than"),
        (["--older-than", "90d", "--reason", " "], "--reason"),
        (["--show-policy", "--older-than", "9d"], "take no policy options"),
    ],
)
def test_a_mistake_is_a_usage_error_that_names_the_flag_and_writes_nothing(
    url: str, tmp_path: Path, argv: list[str], says: str
) -> None:
    before = store_bytes(tmp_path)
    run = waybook("retain", "--store", url, *argv)
    assert run.returncode == 2
    assert says in run.stderr
    assert store_bytes(tmp_path) == before
