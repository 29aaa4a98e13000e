"""The options every forgetting command records (issue 46, red team): `--actor` and `--policy`, when
given, are text an auditor can read; a blank one is a usage error naming the option that writes nothing,
the same in `erase`, `hide`, `purge` and `retain` (erase refused it in the library's terms, exit 1; hide,
purge and `retain --set-policy` recorded an actor "", and `retain` planned in its dry run what the real
run then refused)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
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
