"""Issue 32: a reflection run edits an isolated branch; completing it validates, then merges or fails."""

from __future__ import annotations

import pytest

from waybook import Session
from waybook.journal import InMemoryJournal
from waybook.journal._roles.reflection import ReflectionState
from waybook.memory import Limits, Memory, RequestError, seed_blocks
from waybook.memory.tools import ReflectionBranch
from waybook.memory.tools.reflection import ReflectionScheduler


def setup(
    limits: Limits | None = None,
) -> tuple[InMemoryJournal, Memory, ReflectionScheduler, InMemoryJournal]:
    journal = InMemoryJournal("memory")
    memory = Memory(journal, scope="agent", **({"limits": limits} if limits else {}))
    seed_blocks(memory)
    fixed = "---\ndescription: house rules\n---\nbe kind\n"
    assert memory.execute({"command": "create", "path": "/memories/rules.md", "text": fixed}).ok
    assert memory.set_read_only("/memories/rules.md", True).ok  # the host's call
    session = InMemoryJournal("s1")
    writer = Session.create(session)
    writer.user("hello")
    writer.assistant("hi")
    scheduler = ReflectionScheduler(journal, [session], step_threshold=1)
    return journal, memory, scheduler, session


def branch_of(scheduler: ReflectionScheduler, memory: Memory) -> ReflectionBranch:
    scheduler.request(reason="test")
    run = scheduler.start()
    assert run is not None
    return ReflectionBranch.begin(scheduler, run, memory)


def described(body: str, about: str = "notes") -> str:
    return f"---\ndescription: {about}\n---\n{body}"


def test_a_valid_run_merges_its_changes_in_one_batch_and_moves_the_cursors() -> None:
    _journal, memory, scheduler, session = setup()
    branch = branch_of(scheduler, memory)
    assert branch.memory.execute(
        {"command": "create", "path": "/memories/learned.md", "text": described("x\n")}
    ).ok
    assert branch.memory.execute({"command": "delete", "path": "/memories/persona.md"}).ok
    assert "/memories/learned.md" not in memory.state().files, "the branch is isolated"
    outcome = branch.complete()
    assert (outcome.outcome, outcome.problems) == ("merged", ())
    assert outcome.written == ("/memories/learned.md", "/memories/persona.md")
    files = memory.state().files
    assert "/memories/learned.md" in files
    assert "/memories/persona.md" not in files
    first, last = memory.state().requests[f"reflect:{branch.run.run}"]
    assert last - first <= 1, "one batch"
    state: ReflectionState = scheduler.state()
    assert state.active is None
    assert state.cursors == {session_id(session): session.head().seq}


def session_id(session: InMemoryJournal) -> str:
    return next(iter(session.read(limit=1))).body.journal  # type: ignore[union-attr, no-any-return]


def test_a_run_that_changes_nothing_finishes_no_changes() -> None:
    _, memory, scheduler, _ = setup()
    outcome = branch_of(scheduler, memory).complete()
    assert outcome.outcome == "no_changes"
    assert scheduler.state().last is not None
    assert scheduler.state().last[1] == "no_changes"  # type: ignore[index]


BROKEN = {
    "a note that does not parse": [
        {"command": "create", "path": "/memories/torn.md", "text": "---\ndescription: never closed\nbody\n"}
    ],
    "a link outside memory": [
        {
            "command": "create",
            "path": "/memories/link.md",
            "text": "---\ndescription: d\nlinks: [/etc/passwd]\n---\nx\n",
        }
    ],
    "a note without a description": [{"command": "create", "path": "/memories/bare.md", "text": "x\n"}],
    "an emptied description": [
        {"command": "create", "path": "/memories/user.md", "text": "---\ndescription:\n---\nx\n"}
    ],
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_run_that_breaks_a_rule_records_the_failure_writes_nothing_and_moves_no_cursor(name: str) -> None:
    _journal, memory, scheduler, _ = setup()
    before = memory.state().files
    cursors = dict(scheduler.state().cursors)
    branch = branch_of(scheduler, memory)
    for command in BROKEN[name]:
        assert branch.memory.execute(command).ok
    outcome = branch.complete()
    assert outcome.outcome == "failed"
    assert outcome.problems
    assert memory.state().files == before
    state = scheduler.state()
    assert state.active is None
    assert dict(state.cursors) == cursors
    assert state.last == (branch.run.run, "failed")


def test_a_run_that_touches_a_read_only_note_fails() -> None:
    """The port and the journal refuse every edit of a read-only note, so a hostile run swaps in a port
    over memory of its own that lacks the note; completing checks the result, not the run's manners."""
    _, memory, scheduler, _ = setup()
    branch = branch_of(scheduler, memory)
    forged = Memory(InMemoryJournal("forged"), scope="agent")
    kept = {p: f.text for p, f in memory.state().files.items() if p != "/memories/rules.md"}
    assert forged.write_changes(writes=kept, call_id="forge", command="forge").ok
    branch.memory = forged
    outcome = branch.complete()
    assert outcome.outcome == "failed"
    assert outcome.problems == ("/memories/rules.md is read-only and the run changed, moved or deleted it",)
    assert "/memories/rules.md" in memory.state().files


def test_a_run_whose_writes_evict_a_note_breaks_the_limits_rule() -> None:
    limits = Limits(max_file_bytes=4_096, max_total_bytes=2_000, max_files=16)
    _, memory, scheduler, _ = setup(limits)
    branch = branch_of(scheduler, memory)
    big = described("y" * 1_500 + "\n", "big")
    assert branch.memory.execute({"command": "create", "path": "/memories/big.md", "text": big}).ok
    outcome = branch.complete()
    assert outcome.outcome == "failed"
    assert any("limits did not hold" in p and "evicted" in p for p in outcome.problems)
    assert "/memories/big.md" not in memory.state().files


def test_a_note_the_agent_changed_during_the_run_is_not_overwritten() -> None:
    _, memory, scheduler, _ = setup()
    branch = branch_of(scheduler, memory)
    assert branch.memory.execute(
        {"command": "create", "path": "/memories/user.md", "text": described("run\n")}
    ).ok
    assert memory.execute({"command": "create", "path": "/memories/user.md", "text": described("agent\n")}).ok
    outcome = branch.complete()
    assert outcome.outcome == "failed"
    assert any("changed in the agent's memory" in p for p in outcome.problems)
    assert memory.state().files["/memories/user.md"].text.endswith("agent\n")


def test_a_branch_needs_the_active_run() -> None:
    _, memory, scheduler, _ = setup()
    scheduler.request(reason="x")
    run = scheduler.start()
    assert run is not None
    scheduler.finish(run, "no_changes")
    with pytest.raises(RequestError, match="not active"):
        ReflectionBranch.begin(scheduler, run, memory)
