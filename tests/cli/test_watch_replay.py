"""Issue 47's done-when: real sessions replayed line by line into a watched folder while `waybook watch`
runs, with seeded random pauses, SIGKILLs of the watcher, a truncated file and a file replaced under its
name; the journals then equal a one-shot import of the final files, record for record and digest for
digest (a new generation's catalog entry naming the journal it replaces is the one addition), so no line
was imported twice and none was lost.

The sessions: Claude Code 2.1's long session with its two sub-agents (SESSION/subagents/), Claude Code
2.0's session with its warm-up agents beside it (written before the session's first line), a Codex
rollout (truncated half-way, then written on) and a Pi session (replaced half-way by a file holding its
first lines, then written on). Each Claude Code session's files are written in the order their lines'
timestamps say, as Claude Code wrote them; the four sessions take turns at random.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.formats import SHARED_FIXTURES, needs_shared
from tests.helpers.watching import (
    WatchProcess,
    await_until,
    catalog_metadata,
    interleaved,
    journal_lines,
    write_lines,
)
from waybook.formats._growing import complete_lines
from waybook.formats.codex._rollout import GrowingRollout
from waybook.formats.pi._growing import GrowingPi

CLAUDE = SHARED_FIXTURES / "claude-code"
CODEX = sorted((SHARED_FIXTURES / "codex").glob("*.jsonl")) if SHARED_FIXTURES.is_dir() else []
PI = SHARED_FIXTURES / "pi" / "before-compaction.jsonl"
SPOTTER = "258c7280-ae70-4798-800f-63464d01a85d"
CODEMIE = "4c2ddfdc-b619-4525-8d03-1950fb1b0257"
SETTLE = "600"
"""Seconds a file rests before the message it ends on is taken as finished: longer than any pause here,
the test's own waits for the watcher included (a session resting mid-message for SETTLE seconds is taken
as finished there, and a later line starts it again as a new journal: under load a wait of the truncation
once lasted longer than a 10 s SETTLE). The files' ends are taken once the agents stop: see `at_rest`."""


def streams(folder: Path) -> dict[str, list[tuple[Path, bytes]]]:
    spotter = CLAUDE / "spotter"
    claude_21 = [(spotter / f"{SPOTTER}.jsonl", folder / "claude" / "p" / f"{SPOTTER}.jsonl")]
    for path in sorted((spotter / SPOTTER / "subagents").glob("agent-*.jsonl")):
        claude_21.append((path, folder / "claude" / "p" / SPOTTER / "subagents" / path.name))
    codemie = CLAUDE / "codemie"
    claude_20 = [(path, folder / "claude" / "q" / path.name) for path in sorted(codemie.glob("*.jsonl"))]
    return {
        "claude-2.1": interleaved(claude_21),
        "claude-2.0": interleaved(claude_20),
        "codex": interleaved([(CODEX[0], folder / "codex" / CODEX[0].name)]),
        "pi": interleaved([(PI, folder / "pi" / PI.name)]),
    }


def at_rest(folder: Path) -> None:
    """The agents stopped long ago: every file's modification time an hour back, so the watcher (told of
    the change) takes the message each file ends on as finished."""
    long_ago = time.time() - 3600
    for path in folder.rglob("*.jsonl"):
        os.utime(path, (long_ago, long_ago))


def final_count(growing: type, data: bytes) -> int:
    """How many records no later line can change, for a file holding `data`."""
    importer = growing()
    for number, _, line in complete_lines(data):
        importer.feed(number, line)
    return len(importer.records)


def one_shot(tmp_path: Path, fmt: str, path: Path, journal: str) -> dict[str, list[bytes]]:
    url = f"file:{tmp_path / ('one-shot-' + journal)}"
    run = waybook("import", fmt, path, "--store", url, journal)
    assert run.returncode == 0, run.stderr
    return journal_lines(url)


@needs_shared(CODEX and PI.is_file())
@pytest.mark.parametrize("seed", [4747, pytest.param(2, marks=pytest.mark.slow)])
def test_sessions_replayed_through_kills_a_truncation_and_a_replacement_equal_one_import_each(
    tmp_path: Path, seed: int
) -> None:
    pytest.importorskip("watchfiles")
    folder, url = tmp_path / "watched", f"file:{tmp_path / 'store'}"
    folder.mkdir()
    lines = streams(folder)
    total = sum(map(len, lines.values()))
    rng = random.Random(seed)
    kills = sorted(rng.sample(range(200, total - 200), 3))
    watcher = WatchProcess(
        [str(folder), "--store", url, "--state", str(tmp_path / "state"), "--settle", SETTLE], cwd=tmp_path
    )
    watcher.start()
    codex_path, pi_path = lines["codex"][0][0], lines["pi"][0][0]
    codex_cut, pi_swap = len(lines["codex"]) * 3 // 5, len(lines["pi"]) // 2
    done = dict.fromkeys(lines, 0)
    step, changed = 0, set()
    try:
        while any(done[name] < len(lines[name]) for name in lines):
            name = rng.choice([n for n in lines if done[n] < len(lines[n])])
            if name == "codex" and done[name] == codex_cut and name not in changed:
                changed.add(name)
                truncate(watcher, codex_path, lines["codex"], done)
            if name == "pi" and done[name] == pi_swap and name not in changed:
                changed.add(name)
                replace(watcher, pi_path, lines["pi"], done)
            target, line = lines[name][done[name]]
            write_lines(target, [line])
            done[name] += 1
            step += 1
            if rng.random() < 0.1:
                time.sleep(rng.uniform(0, 0.02))  # a seeded pause, as an agent's writes come
            if kills and step == kills[0]:
                kills.pop(0)
                watcher.kill()  # at whatever point it is
                watcher.start()
        at_rest(folder)
        expected = {
            **one_shot(tmp_path, "claude-code", folder / "claude" / "p" / f"{SPOTTER}.jsonl", SPOTTER),
            **one_shot(tmp_path, "claude-code", folder / "claude" / "q" / f"{CODEMIE}.jsonl", CODEMIE),
            **one_shot(tmp_path, "codex", codex_path, f"{codex_journal(watcher)}.v2"),
            **one_shot(tmp_path, "pi", pi_path, f"{pi_journal(watcher)}.v2"),
        }
        assert len(expected) == 8  # four sessions, four sub-agents

        def equal() -> bool:
            got = journal_lines(url)
            return all(got.get(journal) == journal_lines_of for journal, journal_lines_of in expected.items())

        try:
            await_until(equal, timeout=300, what="every journal equal to one import of its final file")
        except AssertionError as exc:
            shown = f"{exc}\n{differences(expected, journal_lines(url), watcher)}"
            raise AssertionError(shown) from None
    finally:
        assert watcher.stop() == 0
    assert watcher.starts == 4
    got = journal_lines(url)
    assert set(got) == {*expected, codex_journal(watcher), pi_journal(watcher)}  # and the two old ones
    for old in (codex_journal(watcher), pi_journal(watcher)):
        assert catalog_metadata(url, f"{old}.v2")["watch"]["replaces"] == old


def differences(expected: dict[str, list[bytes]], got: dict[str, list[bytes]], watcher: WatchProcess) -> str:
    """What a failure shows: each journal that differs from its one-shot import (where it first differs),
    the watcher's events that explain a new generation or a source left, and the end of its stderr."""
    shown = []
    for journal, want in expected.items():
        have = got.get(journal)
        if have is None:
            shown.append(f"{journal}: missing")
        elif have != want:
            first = next((i for i, (a, b) in enumerate(zip(have, want, strict=False)) if a != b), None)
            where = f"line {first + 1} differs" if first is not None else "one is a prefix of the other"
            shown.append(f"{journal}: {len(have)} lines, the import {len(want)}; {where}")
    shown += [
        f"extra journal {journal} ({len(got[journal])} lines)" for journal in sorted(set(got) - set(expected))
    ]
    shown += [f"event {event}" for event in watcher.events if event.get("why") or event.get("failed")]
    return "\n".join([*shown, "stderr of the watcher:", watcher.stderr_tail()])


def codex_journal(watcher: WatchProcess) -> str:
    return _first(watcher, "codex")


def pi_journal(watcher: WatchProcess) -> str:
    return _first(watcher, "pi")


def _first(watcher: WatchProcess, folder: str) -> str:
    """The first journal the watcher created for the file under `folder`."""
    for event in watcher.seen(created=True):
        if f"/{folder}/" in str(event["source"]) and event["replaces"] is None:
            return str(event["journal"])
    msg = f"no journal for {folder}"
    raise AssertionError(msg)


def caught_up(watcher: WatchProcess, path: Path, growing: type) -> None:
    """Wait until the watcher imported what `path` holds now (the records no later line changes)."""
    want = final_count(growing, path.read_bytes())
    journal = _first(watcher, path.parent.name)

    def there() -> bool:
        return len(journal_lines_of_store(watcher).get(journal, [])) >= want

    await_until(there, what=f"{journal} caught up with {path.name}")


def journal_lines_of_store(watcher: WatchProcess) -> dict[str, list[bytes]]:
    return journal_lines(watcher.args[watcher.args.index("--store") + 1])


def truncate(
    watcher: WatchProcess,
    path: Path,
    lines: list[tuple[Path, bytes]],
    done: dict[str, int],
) -> None:
    """Cut the rollout back to half of what was written, wait until the watcher saw it, write on from
    there: the file ends as the whole rollout again, in a new journal."""
    await_until(lambda: _first(watcher, "codex"), what="the rollout's first journal")
    caught_up(watcher, path, GrowingRollout)
    keep = done["codex"] // 2
    with path.open("r+b") as out:
        out.truncate(sum(len(line) for _, line in lines[:keep]))
    watcher.await_event(source=str(path), created=True, replaces=_first(watcher, "codex"))
    done["codex"] = keep


def replace(
    watcher: WatchProcess,
    path: Path,
    lines: list[tuple[Path, bytes]],
    done: dict[str, int],
) -> None:
    """Put a new file under the Pi session's name holding its first third of lines, wait until the
    watcher saw it, write on from there."""
    caught_up(watcher, path, GrowingPi)
    keep = done["pi"] * 2 // 3
    beside = path.with_name(".replacement")
    write_lines(beside, [line for _, line in lines[:keep]])
    os.replace(beside, path)
    watcher.await_event(source=str(path), created=True, replaces=_first(watcher, "pi"))
    done["pi"] = keep
