"""`waybook purge` and `waybook hide` (issue 46): a store forgets a journal from the command line, with a
receipt an auditor can check, and a mistake in the command line changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from waybook import Session
from waybook.stores import open_store

SECRET = "the-patient-name-Zebulon-Quartermaine"


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    url = f"file:{tmp_path}/store" if request.param == "file" else f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        session = Session(store.create("s1"))
        session.user(f"my name is {SECRET}")
        session.assistant("noted")
        Session(store.create("s2")).user("another session")
    return url


def store_bytes(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file())


def test_purge_erases_the_journal_and_prints_a_receipt_the_catalog_holds(url: str, tmp_path: Path) -> None:
    run = waybook(
        "purge", "--store", url, "s1", "--reason", "erasure request 118", "--actor", "dpo", "--json"
    )
    assert run.returncode == 0, run.stderr
    receipt = json.loads(run.stdout)
    assert receipt["journal"] == "s1"
    assert receipt["records"] == 3
    assert (receipt["reason"], receipt["actor"]) == ("erasure request 118", "dpo")
    with open_store(url) as store:
        assert not store.exists("s1")
        assert store.exists("s2")
        kept = store.purge("s1", reason="again")  # the catalog's receipt is the one printed
    assert kept.digest == receipt["receipt_digest"]
    assert kept.head.digest == receipt["head"]["digest"]
    if url.startswith("file:"):  # a database keeps freed pages until it is vacuumed (docs/cli.md)
        assert SECRET.encode() not in store_bytes(tmp_path)


def test_purge_again_prints_the_first_receipt(url: str) -> None:
    first = json.loads(waybook("purge", "--store", url, "s1", "--reason", "one", "--json").stdout)
    again = waybook("purge", "--store", url, "s1", "--reason", "two", "--json")
    assert again.returncode == 0
    assert json.loads(again.stdout) == first


def test_purge_dry_run_says_what_it_would_erase_and_writes_nothing(url: str, tmp_path: Path) -> None:
    before = store_bytes(tmp_path)
    run = waybook("purge", "--store", url, "s1", "--reason", "r", "--dry-run", "--json")
    assert run.returncode == 0, run.stderr
    plan = json.loads(run.stdout)
    assert (plan["journal"], plan["records"], plan["dry_run"]) == ("s1", 3, True)
    assert store_bytes(tmp_path) == before


def test_hide_leaves_a_journal_out_of_ls_and_ls_hidden_lists_it(url: str) -> None:
    run = waybook("hide", "--store", url, "s2", "--reason", "a test run", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["hidden"] is True
    listed = waybook("ls", "--store", url, "--json").stdout
    hidden = waybook("ls", "--store", url, "--hidden", "--json").stdout
    assert "s2" not in listed
    assert "s2" in hidden
    assert waybook("show", "--store", url, "s2").returncode == 0  # hidden, not erased


@pytest.mark.parametrize("command", ["purge", "hide"])
@pytest.mark.parametrize(
    ("arguments", "code", "says"),
    [
        (["s1", "--reason", "  "], 2, "--reason must say why"),
        (["../s1", "--reason", "r"], 2, "journal id '../s1' is not valid"),
        (["nobody", "--reason", "r"], 1, "no journal 'nobody' in --store"),
        (["s1"], 2, "--reason"),
    ],
)
def test_a_mistake_is_one_line_naming_what_to_fix_and_changes_nothing(
    url: str, tmp_path: Path, command: str, arguments: list[str], code: int, says: str
) -> None:
    before = store_bytes(tmp_path)
    run = waybook(command, "--store", url, *arguments)
    assert run.returncode == code
    assert says in run.stderr
    assert "Traceback" not in run.stderr
    assert store_bytes(tmp_path) == before


def test_a_store_that_is_not_there_is_not_created(tmp_path: Path) -> None:
    run = waybook("purge", "--store", f"file:{tmp_path}/nowhere", "s1", "--reason", "r")
    assert run.returncode == 2
    assert "--store" in run.stderr
    assert not (tmp_path / "nowhere").exists()


def test_hide_of_a_purged_journal_says_there_is_nothing_left(url: str) -> None:
    assert waybook("purge", "--store", url, "s1", "--reason", "r").returncode == 0
    run = waybook("hide", "--store", url, "s1", "--reason", "r")
    assert run.returncode == 2
    assert "was purged" in run.stderr
