"""The options every forgetting command records (issue 46, red team): `--actor` and `--policy`, when
given, are text an auditor can read; a blank one is a usage error naming the option that writes nothing,
the same in `erase`, `hide`, `purge` and `retain` (erase refused it in the library's terms, exit 1; hide,
purge and `retain --set-policy` recorded an actor "", and `retain` planned in its dry run what the real
run then refused)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.store_damage import alter_record
from waybook import Session
from waybook.stores import open_store


def old_clock() -> Callable[[], str]:
    ticks = itertools.count()
    return lambda: f"2020-01-01T09:00:{next(ticks):02d}.000Z"


def store_bytes(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("blank", ["", "  ", "\t"], ids=["empty", "spaces", "a tab"])
@pytest.mark.parametrize(
    ("command", "flag"),
    [
        (["erase", "--store", "{url}", "chat", "--seq", "2", "--reason", "asked"], "--actor"),
        (["erase", "--store", "{url}", "chat", "--seq", "2", "--reason", "asked"], "--policy"),
        (["hide", "--store", "{url}", "chat", "--reason", "asked"], "--actor"),
        (["purge", "--store", "{url}", "chat", "--reason", "asked"], "--actor"),
        (["purge", "--store", "{url}", "chat", "--reason", "asked", "--dry-run"], "--actor"),
        (["retain", "--store", "{url}", "--older-than", "90d"], "--actor"),
        (["retain", "--store", "{url}", "--older-than", "90d", "--dry-run"], "--actor"),
        (["retain", "--store", "{url}", "--older-than", "90d", "--set-policy"], "--actor"),
    ],
    ids=lambda value: (
        " ".join(value[:1] + [v for v in value if v.startswith("--") and v != "--store"])
        if isinstance(value, list)
        else value
    ),
)
def test_a_blank_actor_or_policy_is_a_usage_error_naming_it_that_writes_nothing(
    tmp_path: Path, command: list[str], flag: str, blank: str
) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store, store.create("chat") as journal:
        Session(journal, clock=old_clock()).user("my name is Ada")
    before = store_bytes(tmp_path)
    ran = waybook(*[part.format(url=url) for part in command], flag, blank)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.startswith(f"waybook: {flag} ")
    assert ran.stdout == ""
    assert store_bytes(tmp_path) == before


@pytest.mark.parametrize(
    "url_of",
    [
        pytest.param(lambda tmp: f"file:{tmp}/store", id="directory"),
        pytest.param(lambda tmp: f"file:{tmp}/store?snapshot_tail=0", id="indexed directory"),
        pytest.param(lambda tmp: f"sqlite:{tmp}/store.db", id="sqlite"),
    ],
)
def test_a_damaged_journal_can_still_be_purged_and_its_receipt_names_the_committed_head(
    tmp_path: Path, url_of: Callable[[Path], str]
) -> None:
    """A directory store refused to purge a journal whose bytes were damaged ("corrupt record ... restore
    the file from a copy", exit 1), while SQLite purged it: an erasure request for a damaged journal could
    never be met there."""
    url = url_of(tmp_path)
    with open_store(url) as store, store.create("chat") as journal:
        session = Session(journal)
        session.user("my name is Ada")
        session.user("I live at 4 Privet Drive")
        head = journal.head()
    alter_record(url, "chat", 2)
    ran = waybook("purge", "--store", url, "chat", "--reason", "erasure request 118", "--json")
    assert ran.returncode == 0, ran.stderr
    receipt = json.loads(ran.stdout)
    assert (receipt["head"]["seq"], receipt["head"]["digest"]) == (head.seq, head.digest)
    raw = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert b"Privet Drive" not in raw
    assert waybook("ls", "--store", url, "--hidden", "--json").stdout.count('"chat"') == 0


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["hide", "--reason", "test run"], id="hide"),
        pytest.param(["purge", "--reason", "asked", "--dry-run"], id="purge --dry-run"),
        pytest.param(["purge", "--reason", "asked"], id="purge"),
    ],
)
def test_a_journal_id_is_printed_as_it_is_never_as_an_emoji(tmp_path: Path, args: list[str]) -> None:
    """Rich read `x:smile:` (a valid id: letters, digits, ':') as an emoji code: `hid x😄`, `erased y❌`,
    a receipt naming a journal no store holds."""
    url = f"file:{tmp_path}/store"
    with open_store(url) as store, store.create("x:smile:") as journal:
        Session(journal).user("hello")
    command, *options = args
    ran = waybook(command, "--store", url, "x:smile:", *options)
    assert ran.returncode == 0, ran.stderr
    assert " x:smile:" in ran.stdout
    assert "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}" not in ran.stdout
