"""Issue 22: the reflection scheduler, a pure projection of the memory journal's transition records."""

from __future__ import annotations

import threading
from itertools import count

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from waybook import Session
from waybook.codecs._canonical import ENCODER
from waybook.journal import InMemoryJournal
from waybook.memory import Memory, ProfileError, RequestError
from waybook.memory.tools.reflection import ReflectionScheduler, ReflectionState, scheduler_state
from waybook.model._errors import InvalidRecordError
from waybook.model._records import NewRecord, ReflectionFinished, ReflectionStarted

AT = "2026-12-01T09:00:00.000Z"


def setup(sessions: int = 2, **kwargs: object) -> tuple[InMemoryJournal, list[Session], ReflectionScheduler]:
    memory = InMemoryJournal("memory")
    Memory(memory, scope="agent")
    chats = [Session.create(InMemoryJournal(f"s{n}")) for n in range(sessions)]
    scheduler = ReflectionScheduler(memory, [s.journal for s in chats], step_threshold=3, **kwargs)  # type: ignore[arg-type]
    return memory, chats, scheduler


def steps(session: Session, n: int) -> None:
    for _ in range(n):
        session.user("hi")
        session.assistant("hello")


def test_steps_past_the_threshold_reserve_a_step_run_and_a_merge_advances_the_cursors() -> None:
    memory, chats, scheduler = setup()
    steps(chats[0], 2)
    assert scheduler.poll() is None  # 2 steps < 3
    steps(chats[1], 1)
    pending = scheduler.poll()
    assert pending is not None
    assert pending.trigger == "step"
    run = scheduler.start()
    assert run is not None
    assert scheduler.state().pending is None
    assert [name for name, _, _ in run.windows] == sorted(name for name, _, _ in run.windows)
    assert scheduler.poll() is None  # what the active run reads does not trigger again
    state = scheduler.finish(run, "merged")
    assert state.active is None
    assert dict(state.cursors) == {name: through for name, _, through in run.windows}
    assert scheduler_state(memory, [c.journal for c in chats]) == state


def test_a_failed_run_leaves_the_cursors_and_the_work_is_triggered_again() -> None:
    _, chats, scheduler = setup()
    steps(chats[0], 3)
    scheduler.poll()
    run = scheduler.start()
    assert run is not None
    state = scheduler.finish(run, "failed", detail="model timed out")
    assert dict(state.cursors) == {}
    assert state.last == (run.run, "failed")
    again = scheduler.poll()
    assert again is not None
    assert again.trigger == "step"


def test_triggers_by_priority_manual_over_compaction_over_step() -> None:
    _, chats, scheduler = setup()
    steps(chats[0], 3)
    assert scheduler.poll().trigger == "step"  # type: ignore[union-attr]
    first = chats[0].journal.read(after=1, limit=1)
    chats[0].compact("summary", first_kept=next(iter(first)).id)
    assert scheduler.poll().trigger == "compaction"  # type: ignore[union-attr]
    assert scheduler.request(reason="user asked").trigger == "manual"
    assert scheduler.poll().trigger == "manual"  # type: ignore[union-attr]  # nothing outranks manual
    assert scheduler.request(reason="again").reason == "user asked"  # one pending reservation at most


def test_one_active_run_and_one_pending_reservation_at_most() -> None:
    scheduler = setup()[2]
    scheduler.request(reason="first")
    run = scheduler.start()
    assert run is not None
    scheduler.request(reason="second")
    assert scheduler.start() is None  # pending waits for the active run
    state = scheduler.state()
    assert state.active == run
    assert state.pending is not None
    scheduler.finish(run, "no_changes")
    assert scheduler.start() is not None
    with pytest.raises(RequestError, match="not active"):
        scheduler.finish(run, "merged")
    with pytest.raises(RequestError, match="outcome"):
        scheduler.finish(run, "great")


def test_a_run_reads_at_most_its_caps() -> None:
    _, chats, scheduler = setup(sessions=4, max_conversations=2, max_read_bytes=10_000)
    for chat in chats:
        steps(chat, 30)
    scheduler.request(reason="x")
    run = scheduler.start()
    assert run is not None
    assert len(run.windows) <= 2
    by_id = {next(iter(c.journal.read(limit=1))).body.journal: c.journal for c in chats}  # type: ignore[union-attr]
    read = sum(
        len(ENCODER.encode(record))
        for name, after, through in run.windows
        for record in by_id[name].read(after=after, limit=through - after)
    )
    assert 0 < read <= 10_000


def test_the_journal_refuses_illegal_transitions_whoever_appends() -> None:
    memory, _, scheduler = setup()
    head = memory.head()
    for body in (
        ReflectionStarted(run="nope"),
        ReflectionFinished(run="nope", outcome="merged"),
    ):
        with pytest.raises(InvalidRecordError):
            memory.append([NewRecord(id="x", at=AT, body=body)], expected=head)
    assert memory.head() == head
    pending = scheduler.request(reason="r")
    bad_window = ReflectionStarted(run=pending.run, windows=(("s", 5, 9),))  # not from the cursor (0)
    with pytest.raises(InvalidRecordError, match="cursor"):
        memory.append([NewRecord(id="y", at=AT, body=bad_window)], expected=memory.head())


def test_a_session_journal_is_not_a_scheduler_journal() -> None:
    with pytest.raises(ProfileError):
        ReflectionScheduler(Session.create(InMemoryJournal("s")).journal, [], step_threshold=1)


class SchedulerMachine(RuleBasedStateMachine):
    """Replaying the memory journal gives the live scheduler state at every seq; the model's rules hold."""

    @initialize()
    def build(self) -> None:
        ids = count(1)
        self.memory = InMemoryJournal("memory")
        Memory(self.memory, scope="agent", ids=lambda: f"m{next(ids)}")
        # Ids and clocks are fixed: the read budget counts bytes, so random ids or wall-clock times would
        # change which windows a run takes, and with them the rules hypothesis may draw (a flaky machine).
        self.chats = [
            Session.create(
                InMemoryJournal(f"s{n}"),
                journal_id=f"s{n}",
                ids=lambda n=n: f"s{n}.{next(ids)}",
                clock=lambda: AT,
            )
            for n in range(3)
        ]
        self.scheduler = ReflectionScheduler(
            self.memory,
            [c.journal for c in self.chats],
            step_threshold=2,
            max_conversations=2,
            max_read_bytes=4_000,
            ids=lambda: f"r{next(ids)}",
            clock=lambda: AT,
        )
        self.seen: dict[int, ReflectionState] = {self.memory.head().seq: self.scheduler.state()}
        self.runs: list[object] = []

    def _record(self, before: ReflectionState) -> None:
        after = self.scheduler.state()
        self.seen[self.memory.head().seq] = after
        if after.cursors != before.cursors:  # only a merged or no_changes finish moves cursors
            assert after.last is not None
            assert after.last[1] in ("merged", "no_changes")
            assert all(after.cursors[k] >= before.cursors.get(k, 0) for k in after.cursors)

    @rule(chat=st.integers(0, 2), n=st.integers(1, 3))
    def talk(self, chat: int, n: int) -> None:
        steps(self.chats[chat], n)

    @rule(chat=st.integers(0, 2))
    def compact(self, chat: int) -> None:
        session = self.chats[chat]
        if session.leaf is not None:
            session.compact("summary", first_kept=session.leaf)

    @rule()
    def request(self) -> None:
        before = self.scheduler.state()
        assert self.scheduler.request(reason="manual").trigger == "manual"
        self._record(before)

    @rule()
    def poll(self) -> None:
        before = self.scheduler.state()
        pending = self.scheduler.poll()
        if before.pending is not None:
            assert pending is not None
            assert pending.trigger in ("manual", "compaction", "step")
        self._record(before)

    @rule()
    def start(self) -> None:
        before = self.scheduler.state()
        run = self.scheduler.start()
        assert (run is not None) == (before.pending is not None and before.active is None)
        if run is not None:
            assert len(run.windows) <= 2
            self.runs.append(run)
        self._record(before)

    @precondition(lambda self: self.scheduler.state().active is not None)
    @rule(outcome=st.sampled_from(["merged", "no_changes", "failed"]))
    def finish(self, outcome: str) -> None:
        before = self.scheduler.state()
        assert before.active is not None
        self.scheduler.finish(before.active, outcome)
        self._record(before)

    @invariant()
    def replay_equals_live_at_every_seq(self) -> None:
        journals = [c.journal for c in self.chats]
        state = None
        for seq in range(1, self.memory.head().seq + 1):
            state = self.seen.get(seq, state)
            assert scheduler_state(self.memory, journals, at=seq) == state
        assert scheduler_state(self.memory, journals) == self.scheduler.state()


TestSchedulerMachine = SchedulerMachine.TestCase
TestSchedulerMachine.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)


def test_racing_schedulers_on_one_journal_keep_one_pending_and_one_active_run() -> None:
    memory, chats, _ = setup()
    steps(chats[0], 3)
    schedulers = [ReflectionScheduler(memory, [c.journal for c in chats], step_threshold=3) for _ in range(6)]
    started: list[object] = []

    def work(scheduler: ReflectionScheduler) -> None:
        scheduler.poll()
        scheduler.request(reason="race")
        run = scheduler.start()
        if run is not None:
            started.append(run)

    threads = [threading.Thread(target=work, args=(s,)) for s in schedulers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(started) == 1  # one run became active; the others saw it and started nothing
    state = scheduler_state(memory, [c.journal for c in chats])
    assert state.active == started[0]
    assert state == schedulers[0].state()
