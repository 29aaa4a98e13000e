"""`waybook migrate` attacked (issue 46, red team): a journal it cannot copy faithfully is refused before
anything is created (no empty journal or file left behind to block the retry), and a journal that is
already sealed is refused rather than copied into one whose erasures can never finish."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from waybook import JsonlJournal, Session
from waybook.stores import open_store

SECRET = "migrated-red-team-secret-77"


def sealed_chat(path: Path) -> None:
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="chat")
        session.user("hello")
        session.user(SECRET)


def misname(line: bytes) -> bytes:
    """An erased record's line whose marker names record 3 instead of erasure 4: the chain holds (the
    marker is not in the digest), but `verify` finds absent content no erasure explains."""
    assert line.startswith(b'{"erased":[4,')
    return b'{"erased":[3,' + line[len(b'{"erased":[4,') :]


def misnamed_erasure(path: Path) -> None:
    sealed_chat(path)
    assert waybook("erase", path, "--seq", "2", "--reason", "asked").returncode == 0
    lines = path.read_bytes().split(b"\n")
    lines[1] = misname(lines[1])
    path.write_bytes(b"\n".join(lines))
    Path(f"{path}.checkpoint").unlink(missing_ok=True)
    assert waybook("verify", path).returncode == 1


def test_a_journal_that_does_not_verify_leaves_no_output_file(tmp_path: Path) -> None:
    """It left an empty NEW.jsonl, which the retry then refused as existing."""
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    misnamed_erasure(old)
    ran = waybook("migrate", old, "-o", new)
    assert ran.returncode == 1
    assert "does not verify" in ran.stderr
    assert not new.exists()
    assert not Path(f"{new}.checkpoint").exists()


@pytest.mark.parametrize("kind", ["file", "sqlite"])
def test_a_journal_that_does_not_verify_leaves_no_journal_in_the_store(tmp_path: Path, kind: str) -> None:
    """It left an empty journal NEW_ID in the store, listed by `ls`, its id taken for the retry."""
    url = f"file:{tmp_path}/store" if kind == "file" else f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store, store.create("chat") as journal:
        session = Session(journal)
        session.user("hello")
        session.user(SECRET)
    assert waybook("erase", "--store", url, "chat", "--seq", "2", "--reason", "asked").returncode == 0
    if kind == "file":
        path = tmp_path / "store" / "journals" / "chat.jsonl"
        lines = path.read_bytes().split(b"\n")
        lines[1] = misname(lines[1])
        path.write_bytes(b"\n".join(lines))
        Path(f"{path}.checkpoint").unlink(missing_ok=True)
    else:
        with sqlite3.connect(tmp_path / "store.db") as conn:
            (line,) = conn.execute(
                "SELECT line FROM records WHERE journal_id = 'chat' AND seq = 2"
            ).fetchone()
            conn.execute(
                "UPDATE records SET line = ? WHERE journal_id = 'chat' AND seq = 2", (misname(bytes(line)),)
            )
    assert waybook("verify", "--store", url, "chat").returncode == 1
    ran = waybook("migrate", "--store", url, "chat", "--to", "chat-sealed")
    assert ran.returncode == 1
    assert "does not verify" in ran.stderr
    with open_store(url) as store:
        assert not store.exists("chat-sealed")


def test_a_sealed_journal_holding_an_erasure_is_refused_naming_erase(tmp_path: Path) -> None:
    """A sealed journal with an erasure was copied with its erased record as an ordinary empty one: the
    copy showed no placeholder, verify called the erasure pending, and `erase --resume` always failed."""
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    sealed_chat(old)
    assert waybook("erase", old, "--seq", "3", "--reason", "asked").returncode == 0
    before = old.read_bytes()
    ran = waybook("migrate", old, "-o", new)
    assert ran.returncode == 2
    assert "cannot carry erasures" in ran.stderr
    assert "`waybook erase` works on it as it is" in ran.stderr
    assert not new.exists()
    assert old.read_bytes() == before


def test_a_sealed_journal_without_erasures_is_still_copied_under_a_new_id(tmp_path: Path) -> None:
    """`verify --store` advises migrate for a journal whose header names another id: that copy still works."""
    url = f"file:{tmp_path}/store"
    with open_store(url) as store, store.create("chat") as journal:
        Session(journal).user(SECRET)
    ran = waybook("migrate", "--store", url, "chat", "--to", "chat-2")
    assert ran.returncode == 0, ran.stderr
    assert waybook("verify", "--store", url, "chat-2").returncode == 0


@pytest.fixture(params=["file", "sqlite"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store holding journal `chat` and a purged journal `gone`."""
    url = f"file:{tmp_path}/store" if request.param == "file" else f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        for journal_id in ("chat", "gone"):
            with store.create(journal_id) as journal:
                Session(journal).user(SECRET)
        store.purge("gone", reason="asked")
    return url


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["erase", "--seq", "2", "--reason", "asked"], id="erase"),
        pytest.param(["erase", "--resume"], id="erase --resume"),
        pytest.param(["migrate", "--to", "copy"], id="migrate"),
    ],
)
def test_an_unknown_journal_id_is_a_problem_said_in_the_cli_s_terms(store_url: str, args: list[str]) -> None:
    """It said "create it with store.create('nope')": Python, to a CLI user who wanted to erase."""
    command, *options = args
    ran = waybook(command, "--store", store_url, "nope", *options)
    assert ran.returncode == 1
    assert ran.stderr == (
        f"waybook: no journal 'nope' in --store {store_url}; `waybook ls --store {store_url}` lists its "
        "journals (`--hidden` the hidden ones)\n"
    )
    with open_store(store_url) as store:
        assert not store.exists("copy")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(["migrate", "chat", "--to", "chat"], "--to 'chat': ", id="migrate --to an existing id"),
        pytest.param(["migrate", "chat", "--to", "gone"], "--to 'gone': ", id="migrate --to a purged id"),
        pytest.param(
            ["erase", "gone", "--seq", "2", "--reason", "asked"], "gone was purged", id="erase purged"
        ),
        pytest.param(["migrate", "gone", "--to", "copy"], "gone was purged", id="migrate a purged journal"),
    ],
)
def test_an_id_taken_or_purged_is_a_usage_error_naming_the_option(
    store_url: str, args: list[str], says: str
) -> None:
    """`--to` an existing id said "open it with store.open('chat')", exit 1; `-o` an existing file is a
    usage error naming -o."""
    command, *options = args
    ran = waybook(command, "--store", store_url, *options)
    assert ran.returncode == 2, ran.stderr
    assert says in ran.stderr
    assert "store.open" not in ran.stderr
    assert "store.create" not in ran.stderr


def test_a_journal_with_a_torn_tail_is_refused_naming_repair(tmp_path: Path) -> None:
    """`verify` exits 1 for a torn tail, but migrate's proof did not see it: it wrote a copy of the
    records before it, exit 0, and said nothing of the torn bytes."""
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    sealed_chat(old)
    with old.open("ab") as file:
        file.write(b'{"seq":4,"id":"x')
    assert waybook("verify", old).returncode == 1
    ran = waybook("migrate", old, "-o", new)
    assert ran.returncode == 1
    assert "torn tail" in ran.stderr
    assert "waybook repair" in ran.stderr
    assert not new.exists()
