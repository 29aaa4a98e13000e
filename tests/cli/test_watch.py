"""`waybook watch --once` and `waybook import` of a grown file (issue 47): a session imported as it grows
equals one import of the whole file, record for record and digest for digest.

Each test writes a real session (or a hand-made one) into a folder a piece at a time and runs the
watcher once after each piece, as cron would; the process test (test_watch_replay.py) does the same
against a watcher that runs, and is killed, while the lines arrive.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.claude_code import Transcript
from tests.helpers.cli_runner import waybook
from tests.helpers.formats import SHARED_FIXTURES, needs_shared
from tests.helpers.watching import await_until, catalog_metadata, interleaved, journal_lines, write_lines
from waybook.commands.watch import Watcher
from waybook.commands.watch_cursor import Cursors
from waybook.commands.watch_follow import Context
from waybook.commands.watch_sources import Root
from waybook.stores import open_store

CLAUDE = SHARED_FIXTURES / "claude-code"
CODEX = sorted((SHARED_FIXTURES / "codex").glob("*.jsonl")) if SHARED_FIXTURES.is_dir() else []
PI = SHARED_FIXTURES / "pi" / "before-compaction.jsonl"
REAL = {
    "claude-code": CLAUDE / "spotter" / "tool_heavy.jsonl",
    "codex": CODEX[0] if CODEX else Path("missing"),
    "pi": PI,
}


class Watched:
    """A folder to write sessions into, a store and the watcher's state, and the watcher run once."""

    def __init__(self, tmp_path: Path) -> None:
        self.folder = tmp_path / "sessions"
        self.folder.mkdir()
        self.url = f"file:{tmp_path / 'store'}"
        self.state = tmp_path / "state"
        self.tmp = tmp_path
        self.shots = 0

    def once(self, *more: str, settle: float = 3600, expect: int = 0) -> list[dict[str, object]]:
        run = waybook(
            "watch", self.folder, "--store", self.url, "--state", self.state, "--once",
            "--settle", str(settle), "--json", *more,
        )  # fmt: skip
        assert run.returncode == expect, run.stderr
        return [json.loads(line) for line in run.stdout.splitlines()]

    def one_shot(self, fmt: str, path: Path, journal: str) -> dict[str, list[bytes]]:
        """Every journal `waybook import FORMAT PATH --store URL JOURNAL` writes, in a store of its own."""
        self.shots += 1
        url = f"file:{self.tmp / f'one-shot-{self.shots}'}"
        run = waybook("import", fmt, path, "--store", url, journal)
        assert run.returncode == 0, run.stderr
        return journal_lines(url)


def one_turn(watched: Watched) -> tuple[Transcript, Path]:
    """A Claude Code session of one question and its answer, written as s.jsonl in the watched folder."""
    t = Transcript()
    t.user("q1")
    t.assistant("m1", {"type": "text", "text": "a1"}, stop="end_turn")
    source = watched.folder / "s.jsonl"
    source.write_text(t.text())
    return t, source


def replay_in_pieces(watched: Watched, source: Path, target: Path, *, seed: int, most: int) -> None:
    lines = source.read_bytes().splitlines(keepends=True)
    rng, at = random.Random(seed), 0
    while at < len(lines):
        take = rng.randint(1, most)
        write_lines(target, lines[at : at + take])
        at += take
        watched.once()


@needs_shared(CODEX)
@pytest.mark.parametrize("fmt", sorted(REAL))
def test_a_real_session_imported_a_few_lines_at_a_time_equals_one_import_of_the_whole_file(
    tmp_path: Path, fmt: str
) -> None:
    watched = Watched(tmp_path)
    target = watched.folder / REAL[fmt].name
    replay_in_pieces(watched, REAL[fmt], target, seed=47, most={"pi": 120, "codex": 40}.get(fmt, 4))
    watched.once(settle=0)  # the file rests: the message it ends on is taken as finished
    (journal,) = journal_lines(watched.url)
    assert journal_lines(watched.url) == watched.one_shot(fmt, target, journal)


@needs_shared(CODEX)
def test_sub_agents_replayed_as_their_agents_wrote_them_are_linked_as_a_folder_import_links_them(
    tmp_path: Path,
) -> None:
    """Claude Code 2.0's warm-up agents are written beside the session before its first line; the
    watcher imports each once its session's import links it, with the header naming the session."""
    watched = Watched(tmp_path)
    source = CLAUDE / "codemie"
    files = [(path, watched.folder / "p" / path.name) for path in sorted(source.glob("*.jsonl"))]
    for n, (target, line) in enumerate(interleaved(files)):
        write_lines(target, [line])
        if n % 3 == 0:
            watched.once()
    watched.once(settle=0)
    session = "4c2ddfdc-b619-4525-8d03-1950fb1b0257"
    assert journal_lines(watched.url) == watched.one_shot(
        "claude-code", watched.folder / "p" / f"{session}.jsonl", session
    )
    assert len(journal_lines(watched.url)) == 3


def test_import_of_a_grown_file_appends_its_tail_and_gives_the_digests_of_one_import(tmp_path: Path) -> None:
    t = Transcript()
    t.user("first question")
    t.assistant("m1", {"type": "text", "text": "first answer"}, stop="end_turn")
    source = tmp_path / "s.jsonl"
    source.write_text(t.text())
    url = f"file:{tmp_path / 'store'}"
    assert waybook("import", "claude-code", source, "--store", url, "s-1").returncode == 0
    t.user("second question")
    t.assistant("m2", {"type": "text", "text": "second answer"}, stop="end_turn")
    source.write_text(t.text())
    grown = waybook("import", "claude-code", source, "--store", url, "s-1", "--json")
    assert grown.returncode == 0, grown.stderr
    (report,) = json.loads(grown.stdout)["journals"]
    assert (report["held"], report["appended"]) == (3, 2)
    whole = f"file:{tmp_path / 'whole'}"
    assert waybook("import", "claude-code", source, "--store", whole, "s-1").returncode == 0
    assert journal_lines(url) == journal_lines(whole)  # every byte, so every digest
    again = waybook("import", "claude-code", source, "--store", url, "s-1")
    assert again.returncode == 0
    assert "is up to date" in again.stderr


def test_import_into_a_journal_of_another_file_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    t = Transcript()
    t.user("one thing")
    source = tmp_path / "s.jsonl"
    source.write_text(t.text())
    url = f"file:{tmp_path / 'store'}"
    assert waybook("import", "claude-code", source, "--store", url, "s-1").returncode == 0
    before = journal_lines(url)
    t.lines[0]["message"]["content"] = "another thing"
    t.user("and more")
    source.write_text(t.text())
    run = waybook("import", "claude-code", source, "--store", url, "s-1")
    assert run.returncode == 2
    assert "holds another import" in run.stderr
    assert "import it under a new JOURNAL_ID" in run.stderr
    assert journal_lines(url) == before


def streaming(t: Transcript, parts: int) -> None:
    for n in range(parts):
        t.assistant("m1", {"type": "text", "text": f"part {n}"})


def test_the_message_a_file_ends_on_waits_until_the_file_settles(tmp_path: Path) -> None:
    watched = Watched(tmp_path)
    t = Transcript()
    t.user("tell me")
    streaming(t, 2)
    source = watched.folder / "s.jsonl"
    source.write_text(t.text())
    watched.once()
    (lines,) = journal_lines(watched.url).values()
    assert b"part 0" not in b"".join(lines)  # it may still be streaming
    watched.once(settle=0)
    (lines,) = journal_lines(watched.url).values()
    assert b"part 1" in lines[-1]
    t.user("thanks")  # the next prompt: the message was whole
    source.write_text(t.text())
    watched.once(settle=0)
    assert journal_lines(watched.url) == watched.one_shot("claude-code", source, "s-1")


def test_a_message_that_went_on_after_the_file_settled_is_imported_again_as_a_new_journal(
    tmp_path: Path,
) -> None:
    watched = Watched(tmp_path)
    t = Transcript()
    t.user("tell me")
    streaming(t, 2)
    source = watched.folder / "s.jsonl"
    source.write_text(t.text())
    watched.once(settle=0)  # taken as finished
    before = journal_lines(watched.url)["s-1"]
    streaming(t, 3)  # but it goes on: the whole file's import differs from what was written
    source.write_text(t.text())
    (event, *rest) = watched.once(settle=0)
    assert "stopped agreeing" in str(event["why"])
    assert {e["journal"] for e in rest} == {"s-1.v2"}
    journals = journal_lines(watched.url)
    assert journals["s-1"] == before  # the old journal is left as it was
    assert journals["s-1.v2"] == watched.one_shot("claude-code", source, "s-1.v2")["s-1.v2"]
    assert catalog_metadata(watched.url, "s-1.v2")["watch"]["replaces"] == "s-1"


@needs_shared(CODEX)
@pytest.mark.parametrize("change", ["truncated", "replaced", "rewritten"])
def test_a_file_truncated_replaced_or_rewritten_is_imported_again_as_a_new_journal(
    tmp_path: Path, change: str
) -> None:
    watched = Watched(tmp_path)
    source = watched.folder / CODEX[0].name
    lines = CODEX[0].read_bytes().splitlines(keepends=True)
    write_lines(source, lines[:200])
    watched.once()
    (journal,) = journal_lines(watched.url)
    before = journal_lines(watched.url)[journal]
    if change == "truncated":
        with source.open("r+b") as out:
            out.truncate(sum(map(len, lines[:100])))
        write_lines(source, lines[100:150])
    elif change == "replaced":
        beside = source.with_name("new.tmp")
        write_lines(beside, lines[:150])
        os.replace(beside, source)
    else:
        data = bytearray(source.read_bytes())
        data[-20] = ord("X") if data[-20] != ord("X") else ord("Y")
        source.write_bytes(bytes(data))
    events = watched.once()
    assert any(change in str(e["why"]) for e in events)
    assert journal_lines(watched.url)[journal] == before  # the old journal is left as it was
    assert catalog_metadata(watched.url, f"{journal}.v2")["watch"]["replaces"] == journal
    watched.once()  # and it follows the new generation from there on
    write_lines(source, lines[150:])
    watched.once(settle=0)
    assert (
        journal_lines(watched.url)[f"{journal}.v2"]
        == watched.one_shot("codex", source, f"{journal}.v2")[f"{journal}.v2"]
    )
    header = json.loads(journal_lines(watched.url)[f"{journal}.v2"][0])["body"]
    assert header["journal"] == f"{journal}.v2"  # a store's journal names its own id (main: the first's)


def test_lost_or_stale_cursors_duplicate_nothing(tmp_path: Path) -> None:
    """The journal is the truth: a cursor lost, or one older than the journal (a kill between an append
    and the cursor's save), sends the watcher to compare, not to append again."""
    watched = Watched(tmp_path)
    t, source = one_turn(watched)
    watched.once()
    (cursor,) = (watched.state).rglob("*.json")
    stale = cursor.read_bytes()
    t.user("q2")
    t.assistant("m2", {"type": "text", "text": "a2"}, stop="end_turn")
    source.write_text(t.text())
    watched.once(settle=0)
    whole = watched.one_shot("claude-code", source, "s-1")
    cursor.write_bytes(stale)  # the journal is ahead of its cursor
    assert watched.once(settle=0) == []
    assert journal_lines(watched.url) == whole
    shutil.rmtree(watched.state)  # no cursor at all
    assert watched.once(settle=0) == []
    assert journal_lines(watched.url) == whole


def test_a_file_that_is_no_session_is_left_alone_and_a_bad_line_fails_its_session_only(
    tmp_path: Path,
) -> None:
    watched = Watched(tmp_path)
    (watched.folder / "notes.jsonl").write_text('{"todo": "not a session"}\n')
    good, bad = Transcript(), Transcript()
    good.user("fine")
    (watched.folder / "good.jsonl").write_text(good.text().replace("s-1", "s-good"))
    bad.user("broken next")
    (watched.folder / "bad.jsonl").write_text(bad.text().replace("s-1", "s-bad") + "{not json\n")
    events = watched.once(settle=0, expect=1)
    assert {e["journal"] for e in events} == {"s-good"}
    assert set(journal_lines(watched.url)) == {"s-good"}


def test_one_watcher_a_store_and_where_it_looks_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WAYBOOK_HOME", str(tmp_path / "waybook"))
    none = waybook("watch", "--once")
    assert none.returncode == 2
    assert "~/.claude/projects" in none.stderr
    sessions = home / ".codex" / "sessions" / "2026" / "05" / "11"
    t = Transcript()
    t.user("hi")
    write_lines(sessions / "x.jsonl", [])
    codex = '{"timestamp":"2026-05-11T00:00:00.000Z","type":"session_meta","payload":{"id":"c-1"}}\n'
    (sessions / "x.jsonl").write_text(codex)
    run = waybook("watch", "--once", "--settle", "0", "--json")
    assert run.returncode == 0, run.stderr
    assert [json.loads(line)["journal"] for line in run.stdout.splitlines()] == ["c-1"]
    assert "c-1" in journal_lines(f"file:{tmp_path / 'waybook' / 'store'}")


def test_each_newly_imported_span_is_sent_to_the_otel_endpoint(tmp_path: Path) -> None:
    """Issue 49: `waybook watch --otel-endpoint` sends, after each import, the spans its new records
    complete. Over two imports of a growing session the endpoint gets every span of the journal as `waybook
    otel send` maps it; a span goes again only when the second import completed it further (a tool call
    whose result came), with the same ids, and its last version is the journal's."""
    from tests.helpers.otel import otlp_receiver
    from waybook.export import otel
    from waybook.stores import open_store

    watched = Watched(tmp_path)
    lines = REAL["claude-code"].read_bytes().splitlines(keepends=True)
    source = watched.folder / "s.jsonl"
    with otlp_receiver() as (endpoint, received):
        write_lines(source, lines[:21])
        watched.once("--otel-endpoint", endpoint, settle=0)
        first = {(s.trace_id, s.span_id) for s in received.spans()}
        write_lines(source, lines[21:])
        watched.once("--otel-endpoint", endpoint, settle=0)
        sent = received.spans()
    with open_store(watched.url) as store, store.open("d6e0bada-1959-4eec-a9d2-0bfade768d8f") as journal:
        (mapped,) = otel.spans_of(journal, store=store)
    every = {(s.trace_id.to_bytes(16, "big"), s.span_id.to_bytes(8, "big")): s for s in mapped.spans}
    last = {(s.trace_id, s.span_id): s for s in sent}
    assert set(last) == set(every)
    assert first < set(every)
    assert all(last[key].end_time_unix_nano == span.end_ns for key, span in every.items())
    twice = [key for key in last if sum((s.trace_id, s.span_id) == key for s in sent) > 1]
    assert all(key in first for key in twice)  # sent again only what the first import left open


def test_a_second_watcher_on_one_store_is_refused_and_polling_follows_a_growing_file(tmp_path: Path) -> None:
    """Without notifications (`--poll`), the watcher looks every few tenths of a second; a second watcher
    of the same store is refused while the first runs."""
    from tests.helpers.watching import WatchProcess

    watched = Watched(tmp_path)
    t, source = one_turn(watched)
    running = WatchProcess(
        [str(watched.folder), "--store", watched.url, "--state", str(watched.state), "--poll", "0.2",
         "--settle", "0.5"], cwd=tmp_path,
    )  # fmt: skip
    running.start()
    try:
        running.await_event(journal="s-1")
        second = waybook("watch", watched.folder, "--store", watched.url, "--state", watched.state, "--once")
        assert second.returncode == 2
        assert "another waybook watch" in second.stderr
        t.user("q2")
        t.assistant("m2", {"type": "text", "text": "a2"}, stop="end_turn")
        source.write_text(t.text())
        whole = watched.one_shot("claude-code", source, "s-1")
        await_until(lambda: journal_lines(watched.url) == whole, what="the journal equal to one import")
    finally:
        assert running.stop() == 0


@needs_shared(CODEX)
def test_what_is_written_while_the_watcher_starts_is_imported_once_its_notifications_are_live(
    tmp_path: Path,
) -> None:
    """A session at rest when the watcher starts (its end taken at the first look) that its agent writes
    on between the watcher's first look and the moment its notifications listen, and a session made
    then, are imported: no notification will come for either, so the watcher looks again once it
    listens. (Before, both waited for another write, forever if none came.)"""
    pytest.importorskip("watchfiles")
    watched = Watched(tmp_path)
    t, source = one_turn(watched)
    long_ago = time.time() - 3600
    os.utime(source, (long_ago, long_ago))
    t.user("q2")
    t.assistant("m2", {"type": "text", "text": "a2"}, stop="end_turn")
    final = tmp_path / "final" / "s.jsonl"
    final.parent.mkdir()
    final.write_text(t.text())
    rollout_id = REAL["codex"].stem[-36:]  # a rollout's journal is its session id, the end of its name
    expected = {
        **watched.one_shot("claude-code", final, "s-1"),
        **watched.one_shot("codex", REAL["codex"], rollout_id),
    }

    class Starting(Watcher):
        def sync_all(self, *, every: bool = False) -> None:
            super().sync_all(every=every)
            if every:  # the first look is over; the notifications do not listen yet
                source.write_text(t.text())
                shutil.copyfile(REAL["codex"], watched.folder / REAL["codex"].name)

    with open_store(watched.url) as store:
        watcher = Starting(
            [Root(watched.folder)], Context(store, Cursors(watched.state), 0.5), report=lambda *_: None
        )

        def stop_when_imported() -> None:
            try:
                await_until(lambda: journal_lines(watched.url) == expected, what="both sessions imported")
            finally:
                watcher.stop.set()

        checker = threading.Thread(target=stop_when_imported)
        checker.start()
        watcher.run(poll=None)  # in this thread: it sets the signal handlers
        checker.join()
        watcher.close()
    assert journal_lines(watched.url) == expected
