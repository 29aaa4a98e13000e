"""Issue 40, point 1: every conditional write carries what it checked into its append.

Each test puts a competing write at every journal call of the writer under test (the journal double of
tests/helpers/memory_races.py; the code under test runs unchanged): before its read, between its read
and its append, and after. A write to the same note is either seen (the writer decides on it) or
reported (CONFLICT); it is never overwritten. A write to another note, or reflection bookkeeping, is
rebased over and the write goes through.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from tests.helpers.authority import nominate, pin_of
from tests.helpers.memory_races import Interleaved, raw_reservation, raw_write
from waybook import Session
from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.memory import Memory, Route, create_authority
from waybook.memory.canonical.receipts import derive_adoption_receipt
from waybook.memory.tools import ReflectionBranch
from waybook.memory.tools.reflection import ReflectionScheduler
from waybook.model import IntegrityError

NOTE = "---\ndescription: where the user lives\n---\n"


def every_step(setup: Callable[[Interleaved], Callable[[], object]]) -> int:
    """How many journal calls the operation makes when nobody competes (the steps to inject at)."""
    quiet = Interleaved(InMemoryJournal("count"))
    setup(quiet)()
    return quiet.calls


def text_of(journal: InMemoryJournal, path: str) -> str | None:
    file = Memory(journal, scope="agent").state().files.get(path)
    return None if file is None else file.text


# --- Memory.supersede ------------------------------------------------------------------------------


def _supersede_setup(journal: Interleaved) -> Callable[[], object]:
    first = {"command": "create", "path": "/memories/a.md", "text": "one"}
    Memory(journal.inner, scope="agent").execute(first)
    port = Memory(journal, scope="agent")  # type: ignore[arg-type]
    journal.calls, journal.log = 0, []
    return lambda: port.supersede("/memories/a.md", "mine", expected_digest=content_digest("one"))


def test_a_supersede_never_overwrites_a_write_that_landed_after_its_check() -> None:
    steps = every_step(_supersede_setup)
    assert steps >= 3
    for at in range(steps + 1):
        journal = Interleaved(InMemoryJournal("m"), at=at)
        run = _supersede_setup(journal)
        journal.at = at
        journal.competitor = lambda j=journal: raw_write(j.inner, "/memories/a.md", "theirs")
        result = run()
        if journal.ran_at is None:  # nobody competed: the supersede went through
            assert result.ok
            assert text_of(journal.inner, "/memories/a.md") == "mine"
            continue
        before_append = journal.ran_at <= journal.log.index("append") if "append" in journal.log else True
        if before_append:
            assert not result.ok, f"step {at}: the supersede overwrote a write it never checked"  # type: ignore[attr-defined]
            assert result.error.code == "CONFLICT"  # type: ignore[attr-defined]
        assert text_of(journal.inner, "/memories/a.md") == "theirs", f"step {at}: their write was lost"


# --- rebasing over other notes and reflection bookkeeping -------------------------------------------


@pytest.mark.parametrize("competitor", ["another note", "reflection bookkeeping"])
@pytest.mark.parametrize(
    "command",
    [
        {"command": "create", "path": "/memories/a.md", "text": "mine"},
        {"command": "str_replace", "path": "/memories/a.md", "old_text": "one", "new_text": "two"},
        {"command": "delete", "path": "/memories/a.md"},
        {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/c.md"},
    ],
    ids=lambda c: c["command"],
)
def test_a_write_that_lost_only_to_other_notes_is_rebased_and_goes_through(
    command: dict[str, str], competitor: str
) -> None:
    def setup(journal: Interleaved) -> Callable[[], object]:
        Memory(journal.inner, scope="agent").execute(
            {"command": "create", "path": "/memories/a.md", "text": "one"}
        )
        port = Memory(journal, scope="agent")  # type: ignore[arg-type]
        journal.calls, journal.log = 0, []
        return lambda: port.execute(command)

    for at in range(every_step(setup) + 1):
        journal = Interleaved(InMemoryJournal("m"))
        run = setup(journal)
        journal.at = at
        if competitor == "another note":
            journal.competitor = lambda j=journal: raw_write(j.inner, "/memories/b.md", "theirs")
        else:
            journal.competitor = lambda j=journal: raw_reservation(j.inner, "other-run")
        result = run()
        assert result.ok, f"step {at}: {result.error}"  # type: ignore[attr-defined]
        if competitor == "another note" and journal.ran_at is not None:
            assert text_of(journal.inner, "/memories/b.md") == "theirs"


# --- the reflection merge ---------------------------------------------------------------------------


def _reflection_setup(journal: Interleaved) -> Callable[[], object]:
    port = Memory(journal.inner, scope="agent")
    port.execute({"command": "create", "path": "/memories/city.md", "text": NOTE + "Porto\n"})
    chat = Session.create(InMemoryJournal("chat"))
    chat.user("I moved to Lisbon")
    chat.assistant("noted")
    scheduler = ReflectionScheduler(journal, [chat.journal], step_threshold=1)  # type: ignore[arg-type]
    scheduler.poll()
    agent = Memory(journal, scope="agent")  # type: ignore[arg-type]
    branch = ReflectionBranch.begin(scheduler, scheduler.start(), agent)  # type: ignore[arg-type]
    branch.memory.execute({"command": "create", "path": "/memories/city.md", "text": NOTE + "Lisbon\n"})
    journal.calls, journal.log = 0, []
    return branch.complete


def test_a_reflection_merge_never_overwrites_a_note_the_agent_wrote_after_the_check() -> None:
    steps = every_step(_reflection_setup)
    agent_text = NOTE + "Madrid (the agent's own write)\n"
    for at in range(steps + 1):
        journal = Interleaved(InMemoryJournal("m"))
        run = _reflection_setup(journal)
        journal.at = at
        journal.competitor = lambda j=journal: raw_write(j.inner, "/memories/city.md", agent_text)
        outcome = run()
        if journal.ran_at is None:
            assert outcome.outcome == "merged"  # type: ignore[attr-defined]
            continue
        merged_at = [i for i, name in enumerate(journal.log) if name == "append"]
        if journal.ran_at <= merged_at[0]:
            assert outcome.outcome == "failed", f"step {at}: merged over the agent's write"  # type: ignore[attr-defined]
        assert text_of(journal.inner, "/memories/city.md") == agent_text, f"step {at}: the write was lost"


def test_a_reflection_merge_is_rebased_over_a_write_to_another_note() -> None:
    for at in range(every_step(_reflection_setup) + 1):
        journal = Interleaved(InMemoryJournal("m"))
        run = _reflection_setup(journal)
        journal.at = at
        journal.competitor = lambda j=journal: raw_write(j.inner, "/memories/other.md", NOTE + "x\n")
        assert run().outcome == "merged", f"step {at}"  # type: ignore[attr-defined]


# --- the sync pull (import-git) --------------------------------------------------------------------


def _git(directory: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(directory), *args], check=True, capture_output=True)


def test_an_import_never_overwrites_a_note_the_agent_wrote_after_the_check(tmp_path: Path) -> None:
    from waybook.integrations.git_memory import GitMemoryError, export_git, import_git

    def prepared(name: str) -> tuple[InMemoryJournal, Path]:
        inner = InMemoryJournal(name)
        Memory(inner, scope="agent").execute({"command": "create", "path": "/memories/a.md", "text": "one\n"})
        repo = tmp_path / name
        export_git(inner, repo)
        (repo / "memories" / "a.md").write_text("reviewed\n")
        _git(repo, "-c", "user.name=r", "-c", "user.email=r@x", "commit", "-qam", "review")
        return inner, repo

    inner, repo = prepared("count")
    counted = Interleaved(inner)
    import_git(repo, counted)  # type: ignore[arg-type]
    for at in range(counted.calls + 1):
        inner, repo = prepared(f"m{at}")
        journal = Interleaved(inner, at=at)
        journal.competitor = lambda j=inner: raw_write(j, "/memories/a.md", "the agent's\n")
        with contextlib.suppress(GitMemoryError):
            import_git(repo, journal)  # type: ignore[arg-type]
        final = text_of(inner, "/memories/a.md")
        if journal.ran_at is not None:
            assert final == "the agent's\n", f"step {at}: the import overwrote the agent's write"


# --- adoption: the receipt is checked against what was sent -----------------------------------------


class ForgedReply:
    """A canonical journal whose append commits the batch but replies with another first digest."""

    def __init__(self, inner: InMemoryJournal) -> None:
        self.inner = inner
        self.forge = False

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def append(self, records: object, *, expected: object) -> object:
        result = self.inner.append(records, expected=expected)  # type: ignore[arg-type]
        if not self.forge:
            return result
        first = msgspec.structs.replace(result.records[0], digest="f" * 64)
        return msgspec.structs.replace(result, records=(first, *result.records[1:]))


def test_an_adoption_reply_with_the_same_ids_and_another_digest_is_refused() -> None:
    canonical = ForgedReply(InMemoryJournal("c"))
    pins = InMemoryJournal("p")
    authority = create_authority(
        working=InMemoryJournal("w"),
        canonical=canonical,  # type: ignore[arg-type]
        routes=[Route("shared", frozenset({"facts"}))],
        actor="host",
        pins=pins,
    )
    nomination = nominate(authority, {"/memories/a.md": "x"})
    canonical.forge = True
    with pytest.raises(IntegrityError, match=r"^The canonical authority returned a different adoption"):
        authority.host.adopt_nomination(pin_of(authority), nomination)
    canonical.forge = False
    receipt = authority.host.adopt_nomination(pin_of(authority), nomination)  # the retry resolves
    assert receipt.status == "already-present"
    assert derive_adoption_receipt(canonical.inner, pins, receipt) == receipt


def test_an_adopted_receipt_names_the_digest_the_journal_holds() -> None:
    canonical, pins = InMemoryJournal("c"), InMemoryJournal("p")
    authority = create_authority(
        working=InMemoryJournal("w"),
        canonical=canonical,
        routes=[Route("shared", frozenset({"facts"}))],
        actor="host",
        pins=pins,
    )
    receipt = authority.host.adopt_nomination(pin_of(authority), nominate(authority, {"/memories/a.md": "x"}))
    (opened,) = [r for r in canonical.read() if r.id == receipt.operation]
    assert receipt.operation_digest == opened.digest
    assert derive_adoption_receipt(canonical, pins, receipt) == receipt


# --- retries and exclusive creates -----------------------------------------------------------------


def test_a_write_retried_with_its_call_id_returns_the_original_receipt() -> None:
    journal = InMemoryJournal("m")
    port = Memory(journal, scope="agent")
    command = {"command": "create", "path": "/memories/a.md", "text": "one"}
    first = port.execute(command, call_id="toolu_1")
    port.execute({"command": "create", "path": "/memories/b.md", "text": "two"})
    again = port.execute(command, call_id="toolu_1")  # the reply was lost; the runtime sends it again
    assert again.ok
    assert again.receipt == first.receipt
    assert again.value == first.value
    assert journal.head().seq == first.receipt.seq + 1  # type: ignore[union-attr]  # nothing written twice
    other = port.execute({"command": "create", "path": "/memories/c.md", "text": "x"}, call_id="toolu_1")
    assert other.error is not None
    assert other.error.code == "INVALID_ARGUMENT"
    assert other.error.details == {"reused_request": "toolu_1"}


def test_an_exclusive_create_refuses_a_note_that_exists() -> None:
    port = Memory(InMemoryJournal("m"), scope="agent")
    assert port.create("/memories/a.md", "one", exclusive=True).ok
    refused = port.create("/memories/a.md", "two", exclusive=True)
    assert refused.error is not None
    assert refused.error.code == "ALREADY_EXISTS"
    assert refused.error.command == "create"
    assert port.state().files["/memories/a.md"].text == "one"
    assert port.create("/memories/a.md", "two").ok  # without exclusive: an overwrite
    tool = port.execute({"command": "create", "path": "/memories/a.md", "text": "3", "exclusive": True})
    assert tool.error is not None
    assert tool.error.code == "ALREADY_EXISTS"


def test_an_exclusive_create_refuses_a_note_another_writer_created_after_the_read() -> None:
    journal = Interleaved(InMemoryJournal("m"))
    port = Memory(journal, scope="agent")  # type: ignore[arg-type]
    journal.calls, journal.log = 0, []
    journal.at = 1  # after the port's read, before its append
    journal.competitor = lambda: raw_write(journal.inner, "/memories/a.md", "theirs")
    refused = port.create("/memories/a.md", "mine", exclusive=True)
    assert journal.ran_at == 1
    assert refused.error is not None
    assert refused.error.code == "CONFLICT"
    assert text_of(journal.inner, "/memories/a.md") == "theirs"
