"""`waybook retain` attacked (issue 46, red team): a hostile or malformed option is a usage error (exit 2)
naming the option, never a traceback; text the user gave is printed as text (not as Rich markup, not as
terminal escapes); and a damaged journal in the store is named and passed over, every other journal's
receipt still printed, so nothing is half-applied silently."""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.killed_eraser import leave_pending
from tests.helpers.paths import ROOT
from tests.helpers.store_damage import alter_record
from waybook import Session
from waybook.stores import open_store

SECRET = "retained-red-team-secret-Quillon"


def old_clock() -> Callable[[], str]:
    ticks = itertools.count()
    return lambda: f"2020-01-01T09:00:{next(ticks):02d}.000Z"


URLS = {
    "file": "file:{tmp}/store",
    "file-indexed": "file:{tmp}/store?snapshot_tail=0",  # every open and close brings its index forward
    "sqlite": "sqlite:{tmp}/store.db",
}


@pytest.fixture(params=sorted(URLS))
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store of three old journals, a, b and c, each a user message holding SECRET."""
    url = URLS[request.param].format(tmp=tmp_path)
    with open_store(url) as store:
        for journal_id in ("a", "b", "c"):
            with store.create(journal_id) as journal:
                Session(journal, clock=old_clock()).user(f"{journal_id} says {SECRET}")
    return url


def store_bytes(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file())


@pytest.mark.parametrize(
    ("options", "says"),
    [
        pytest.param(["--older-than", "9" * 5000 + "d"], "--older-than '999", id="a 5000-digit duration"),
        pytest.param(["--older-than", "0s"], "more than 0", id="zero"),
        pytest.param(["--older-than", "99999999999d"], "at most 100 years", id="past 100 years"),
        pytest.param(["--older-than", "1d", "--name", "x" * 300], "--name", id="a 300-character name"),
        pytest.param(["--older-than", "1d", "--meta", "k=v", "--meta", "k=w"], "--meta", id="a key twice"),
        pytest.param(["--older-than", "90d", "--grace", "inf"], "--grace", id="an infinite grace"),
        pytest.param(["--older-than", "90d", "--grace", "1e400"], "--grace", id="a grace past a float"),
        pytest.param(["--older-than", "90d", "--grace", "nan"], "--grace", id="a grace not a number"),
        pytest.param(
            ["--older-than", "90d", "--set-policy", "--reason", "GDPR art. 17"], "--reason", id="set a reason"
        ),
        pytest.param(["--older-than", "90d", "--set-policy", "--grace", "0"], "--grace", id="set a grace"),
        pytest.param(["--show-policy", "--reason", "why"], "--reason", id="show a reason"),
    ],
)
def test_a_bad_option_is_a_usage_error_naming_it_that_writes_nothing(
    url: str, tmp_path: Path, options: list[str], says: str
) -> None:
    before = store_bytes(tmp_path)
    ran = waybook("retain", "--store", url, *options)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.startswith("waybook: ")
    assert says in ran.stderr
    assert len(ran.stderr) < 400
    assert ran.stdout == ""
    assert store_bytes(tmp_path) == before


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("[/bad]", id="a closing markup tag"),
        pytest.param("[bold red]gdpr", id="a markup tag"),
        pytest.param("\x1b[2J\x1b]0;owned\x07gdpr", id="terminal escapes"),
    ],
)
def test_a_policy_name_is_printed_as_text_not_markup_or_escapes(url: str, name: str) -> None:
    """Rich read `--name '[/bad]'` as markup and raised (a traceback after the erasure was done), ate
    `[bold red]`, and sent ESC to the terminal as it was."""
    for options in (["--dry-run"], ["--set-policy"], ["--show-policy"], []):
        described = options in (["--dry-run"], ["--set-policy"])
        policy = ["--older-than", "90d", "--name", name] if described else []
        ran = waybook("retain", "--store", url, *policy, *options)
        assert ran.returncode == 0, (options, ran.stderr)
        assert "\x1b" not in ran.stdout
        shown = name.replace("\x1b", "\\x1b").replace("\x07", "\\x07")
        assert f"policy {shown}" in ran.stdout, (options, ran.stdout)


def test_a_damaged_journal_is_named_the_others_are_erased_with_their_receipts_and_the_exit_is_1(
    url: str, tmp_path: Path
) -> None:
    """Retain erased a, then stopped at a damaged b with b's error alone: a's receipt was never printed,
    c was never reached, and the blobs were not collected."""
    alter_record(url, "b", 2)
    dry = waybook("retain", "--store", url, "--older-than", "90d", "--dry-run", "--json")
    assert dry.returncode == 1, dry.stderr
    planned = json.loads(dry.stdout)
    assert [item["journal"] for item in planned["planned"]] == ["a", "c"]
    assert [item["journal"] for item in planned["damaged"]] == ["b"]

    ran = waybook("retain", "--store", url, "--older-than", "90d", "--json")
    assert ran.returncode == 1
    report = json.loads(ran.stdout)
    assert [receipt["journal"] for receipt in report["erased"]] == ["a", "c"]
    ((journal, why),) = [(item["journal"], item["why"]) for item in report["damaged"]]
    assert journal == "b"
    assert "seq 2" in why
    assert "waybook: b is damaged" in ran.stderr
    assert f"waybook verify --store {url} b" in ran.stderr
    for journal_id in ("a", "c"):
        assert waybook("verify", "--store", url, journal_id).returncode == 0
        assert SECRET not in waybook("show", "--store", url, journal_id).stdout

    text = waybook("retain", "--store", url, "--older-than", "90d")
    assert text.returncode == 1
    assert "  damaged b: " in text.stdout


def test_a_dry_run_over_an_interrupted_erasure_writes_nothing_and_names_it(tmp_path: Path) -> None:
    """The dry run opened each journal for writing, and a writer's open finishes an interrupted erasure:
    `retain --dry-run` overwrote the journal's regions and removed its marker and checkpoint, then
    printed "nothing was written"."""
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        for journal_id in ("a", "b"):
            with store.create(journal_id) as journal:
                session = Session(journal, clock=old_clock())
                for text in ("hello", SECRET, f"echo {SECRET}", f"again {SECRET}", "bye"):
                    session.user(text)
    killed = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.helpers.killed_eraser",
            tmp_path / "store/journals/a.jsonl",
            "region 2 of 3",
        ],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    before = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    ran = waybook("retain", "--store", url, "--older-than", "90d", "--dry-run", "--json")
    assert {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()} == before
    assert ran.returncode == 1
    report = json.loads(ran.stdout)
    assert [item["journal"] for item in report["planned"]] == ["b"]
    ((journal, why),) = [(item["journal"], item["why"]) for item in report["damaged"]]
    assert journal == "a"
    assert "erase --resume" in why


@pytest.mark.parametrize(
    "recorded",
    [{"name": "x", "older_than": "forever"}, 5, "90d"],
    ids=["a duration retention cannot read", "a number", "a string"],
)
def test_a_recorded_policy_that_cannot_be_read_is_a_problem_that_says_how_to_replace_it(
    url: str, recorded: object
) -> None:
    """It was a usage error (exit 2) quoting the duration alone, as if the command line held it (a
    policy that was not an object, a traceback), and it stayed so after --clear-policy: every entry the
    catalog ever held was read, not the last."""
    with open_store(url) as store:
        store.note_in_catalog("waybook.store.retention", {"policy": recorded})  # type: ignore[attr-defined]
    for options in ([], ["--show-policy"], ["--dry-run"]):
        ran = waybook("retain", "--store", url, *options)
        assert ran.returncode == 1, (options, ran.stderr)
        assert f"--store {url}: its recorded retention policy cannot be read" in ran.stderr
        assert "--clear-policy" in ran.stderr
    assert waybook("retain", "--store", url, "--clear-policy").returncode == 0
    assert waybook("retain", "--store", url, "--show-policy").stdout == f"{url}: no retention policy\n"


@pytest.fixture
def typed_store(tmp_path: Path) -> str:
    """A store whose one old journal's metadata holds a number, a boolean and a text."""
    url = f"file:{tmp_path}/store"
    with (
        open_store(url) as store,
        store.create("typed", metadata={"tier": 1, "pii": True, "env": "prod"}) as j,
    ):
        Session(j, clock=old_clock()).user(SECRET)
    return url


@pytest.mark.parametrize("meta", ["tier=1", "pii=true", "env=prod", 'env="prod"'])
def test_meta_reads_its_value_as_ls_does_so_what_ls_long_shows_selects_the_journal(
    typed_store: str, meta: str
) -> None:
    """`ls --long` shows `tier=1  pii=true` and `ls --meta tier=1` lists the journal, but `retain --meta
    tier=1` compared the text "1" with the number 1 and silently selected nothing."""
    listed = json.loads(waybook("ls", "--store", typed_store, "--meta", meta, "--json").stdout)
    assert [journal["id"] for journal in listed["journals"]] == ["typed"]
    ran = waybook(
        "retain", "--store", typed_store, "--older-than", "90d", "--meta", meta, "--dry-run", "--json"
    )
    assert ran.returncode == 0, ran.stderr
    assert [item["journal"] for item in json.loads(ran.stdout)["planned"]] == ["typed"]


@pytest.mark.parametrize("command", ["ls", "retain"])
@pytest.mark.parametrize(
    "value", ["[" * 100_000, "NaN", "-Infinity"], ids=["100,000 brackets", "NaN", "-Infinity"]
)
def test_a_meta_value_json_cannot_hold_is_text_never_a_traceback(
    typed_store: str, command: str, value: str
) -> None:
    """100,000 brackets were a RecursionError traceback in `ls` and `retain`; NaN became a float that a
    recorded policy cannot hold (JSON has no NaN)."""
    options = ["--older-than", "90d", "--set-policy"] if command == "retain" else []
    ran = waybook(command, "--store", typed_store, "--meta", f"k={value}", *options)
    assert ran.returncode == 0, ran.stderr
    if command == "retain":
        shown = json.loads(waybook("retain", "--store", typed_store, "--show-policy", "--json").stdout)
        assert shown["policy"]["metadata"] == {"k": value}


def test_retain_finishes_a_pending_erasure_before_it_erases_the_same_records(tmp_path: Path) -> None:
    """Retention took the records a pending erasure names (their content still there) for its own
    erasure, and `verify` then failed the journal: the pending erasure named records it had not erased."""
    url = f"file:{tmp_path}/store"
    with open_store(url) as store, store.create("a") as journal:
        session = Session(journal, clock=old_clock())
        for text in ("hello", SECRET, f"echo {SECRET}", f"again {SECRET}", "bye"):
            session.user(text)
    path = tmp_path / "store" / "journals" / "a.jsonl"
    leave_pending(path)  # its erasure record committed, its marker lost
    assert "erasure pending" in waybook("verify", "--store", url, "a").stdout
    ran = waybook("retain", "--store", url, "--older-than", "90d", "--json")
    assert ran.returncode == 0, ran.stderr
    checked = waybook("verify", "--store", url, "a")
    assert checked.returncode == 0, checked.stdout
    assert "erasure pending" not in checked.stdout
    assert SECRET.encode() not in path.read_bytes()
