"""Issue 13: one set of memory rules, enforced by the journal on append and on replay, whoever writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from waybook import Session
from waybook.codecs._wire import seal
from waybook.journal import InMemoryJournal, JsonlJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.memory import Memory, ProfileError, RequestError, Route, create_authority
from waybook.model import JournalError, MemoryWrite, NewRecord
from waybook.model._errors import InvalidRecordError, MemoryRuleError
from waybook.model._head import GENESIS_DIGEST
from waybook.model._records import Header, MemoryDelete, MemoryRename, UserMessage, text

AT = "2026-12-01T09:00:00.000Z"


def memory_journal(role: str = "working_memory", **metadata: Any) -> InMemoryJournal:
    journal = InMemoryJournal(role)
    header = Header(journal=f"{role}-1", creator="test", role=role, metadata={"scope": "s", **metadata})
    journal.append([NewRecord(id="h", at=AT, body=header)], expected=journal.head())
    return journal


def put(path: str, body_text: str, **fields: Any) -> MemoryWrite:
    return MemoryWrite(
        path=path, text=body_text, digest=fields.pop("digest", content_digest(body_text)), **fields
    )


def append(journal: InMemoryJournal, *bodies: Any) -> None:
    n = journal.head().seq
    batch = [NewRecord(id=f"r{n + i}", at=AT, body=b) for i, b in enumerate(bodies)]
    journal.append(batch, expected=journal.head())


def refused(journal: InMemoryJournal, code: str, *bodies: Any) -> MemoryRuleError:
    head = journal.head()
    with pytest.raises(MemoryRuleError) as caught:
        append(journal, *bodies)
    assert caught.value.code == code
    assert journal.head() == head  # nothing was written
    return caught.value


# --- a raw journal.append -------------------------------------------------------------------------


def test_a_raw_append_of_a_hostile_path_is_refused() -> None:
    journal = memory_journal()
    refused(journal, "INVALID_PATH", put("/memories/../../etc/passwd", "x"))
    refused(journal, "INVALID_PATH", put("../../etc/passwd", "x"))
    refused(journal, "INVALID_PATH", put("/memories/a/../b.md", "x"))
    refused(journal, "INVALID_EXTENSION", put("/memories/a.exe", "x"))
    refused(journal, "INVALID_PATH", MemoryDelete(paths=("/etc/passwd",)))


def test_a_raw_append_whose_digest_is_not_the_contents_is_refused() -> None:
    error = refused(memory_journal(), "INVALID_ARGUMENT", put("/memories/a.md", "x", digest="ab" * 32))
    assert "SHA-256" in str(error)


def test_a_raw_overwrite_delete_or_move_of_a_read_only_file_is_refused() -> None:
    journal = memory_journal()
    append(journal, put("/memories/ro.md", "---\nread_only: true\n---\nkeep"))
    assert refused(journal, "INVALID_ARGUMENT", put("/memories/ro.md", "changed")).details == {
        "read_only": True
    }
    refused(journal, "INVALID_ARGUMENT", MemoryDelete(paths=("/memories/ro.md",), reason="evict"))
    refused(journal, "INVALID_ARGUMENT", MemoryRename(moves=(("/memories/ro.md", "/memories/x.md"),)))


def test_a_file_and_a_directory_never_share_a_path() -> None:
    journal = memory_journal()
    append(journal, put("/memories/a.md", "file"))
    refused(journal, "PATH_CONFLICT", put("/memories/a.md/b.md", "under a file"))
    append(journal, put("/memories/d.md/x.md", "in d.md"))
    refused(journal, "PATH_CONFLICT", put("/memories/d.md", "over a directory"))
    refused(journal, "PATH_CONFLICT", MemoryRename(moves=(("/memories/a.md", "/memories/d.md"),)))


def test_the_limits_in_the_header_hold_after_every_record() -> None:
    journal = memory_journal()
    refused(journal, "LIMIT_EXCEEDED", put("/memories/big.md", "x" * 65_537))
    for i in range(256):
        append(journal, put(f"/memories/f{i}.md", "x"))
    refused(journal, "LIMIT_EXCEEDED", put("/memories/one-more.md", "x"))
    small = memory_journal(limits={"max_file_bytes": 10, "max_total_bytes": 15, "max_files": 2})
    refused(small, "LIMIT_EXCEEDED", put("/memories/a.md", "x" * 11))
    append(small, put("/memories/a.md", "x" * 10))
    refused(small, "LIMIT_EXCEEDED", put("/memories/b.md", "x" * 6))


def test_a_request_id_names_one_run_of_records_and_is_never_reused() -> None:
    journal = memory_journal()
    append(journal, put("/memories/a.md", "x", call_id="req-1"), put("/memories/b.md", "y", call_id="req-1"))
    error = refused(journal, "INVALID_ARGUMENT", put("/memories/c.md", "z", call_id="req-1"))
    assert error.details == {"reused_request": "req-1"}


def test_a_memory_journal_holds_memory_records_only() -> None:
    journal = memory_journal()
    with pytest.raises(InvalidRecordError):
        append(journal, UserMessage(parent=None, content=text("hi")))
    pins = memory_journal("pin")
    with pytest.raises(InvalidRecordError):
        append(pins, put("/memories/a.md", "x"))


def test_an_adoption_and_its_writes_are_one_batch_in_canonical_memory() -> None:
    from waybook.model._records import MemoryAdoption

    journal = memory_journal("canonical_memory")
    adoption = MemoryAdoption(
        operation="op1",
        actor="a",
        binding="b",
        nomination="n",
        source="s",
        source_seq=1,
        source_digest="d",
        prior_seq=1,
        prior_digest=journal.head().digest,
        writes=2,
    )
    refused(journal, "INVALID_ARGUMENT", adoption, put("/memories/a.md", "x", call_id="op1"))
    append(
        journal,
        adoption,
        put("/memories/a.md", "x", call_id="op1"),
        put("/memories/b.md", "y", call_id="op1"),
    )


# --- replay ---------------------------------------------------------------------------------------


def sealed_lines(*bodies: Any, role: str = "working_memory") -> list[bytes]:
    """Lines a faulty writer could have produced: sealed and chained, but never checked."""
    lines, prev = [], GENESIS_DIGEST
    header = Header(journal="w", creator="faulty", role=role, metadata={"scope": "s"})
    for seq, body in enumerate([header, *bodies], start=1):
        record, line = seal(seq, NewRecord(id=f"r{seq}", at=AT, body=body), prev)
        lines.append(line)
        prev = record.digest
    return lines


@pytest.mark.parametrize(
    "body",
    [
        put("/memories/../../etc/passwd", "x"),
        put("/memories/a.md", "x", digest="ab" * 32),
    ],
    ids=["hostile-path", "wrong-digest"],
)
def test_a_memory_journal_that_breaks_the_rules_is_refused_on_replay(tmp_path: Path, body: Any) -> None:
    lines = sealed_lines(body)
    with pytest.raises(MemoryRuleError):
        InMemoryJournal.from_lines(lines)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with JsonlJournal(path) as journal:
        assert journal.damage is not None  # the records before it still read; nothing more is appended
        assert journal.damage.seq == 2
        with pytest.raises(JournalError):
            journal.append(
                [NewRecord(id="next", at=AT, body=put("/memories/b.md", "y"))], expected=journal.head()
            )
    InMemoryJournal.from_lines(sealed_lines(body, role="session"))  # not a memory journal: no memory rules


def test_a_read_only_overwrite_written_by_another_process_is_refused_on_replay() -> None:
    lines = sealed_lines(put("/memories/ro.md", "---\nread_only: true\n---\n"), put("/memories/ro.md", "no"))
    with pytest.raises(MemoryRuleError, match="read-only"):
        InMemoryJournal.from_lines(lines)


# --- every writer gets the same answer ------------------------------------------------------------


def authority_over(working: InMemoryJournal) -> Any:
    return create_authority(
        working=working,
        canonical=InMemoryJournal("c"),
        routes=[Route("r", frozenset({"p"}))],
        actor="h",
        pins=InMemoryJournal("p"),
    )


def test_remember_enforces_the_ports_rules_with_the_same_codes() -> None:
    working = InMemoryJournal("w")
    agent = authority_over(working).agent
    agent.remember("r1", {"/memories/a.md": "x"})
    with pytest.raises(MemoryRuleError) as caught:
        agent.remember("r2", {"/memories/a.md/b.md": "under a file"})
    assert caught.value.code == "PATH_CONFLICT"
    with pytest.raises(MemoryRuleError) as caught:
        agent.remember("r3", {"/memories/big.md": "x" * 65_537})
    assert caught.value.code == "LIMIT_EXCEEDED"
    with pytest.raises(MemoryRuleError) as caught:
        agent.remember("r4", {f"/memories/f{i}.md": "x" for i in range(256)})
    assert caught.value.code == "LIMIT_EXCEEDED"
    with pytest.raises(RequestError, match="the host sets that"):
        agent.remember("r5", {"/memories/ro.md": "---\nread_only: true\n---\n"})
    working_port = Memory(working, scope="working-memory")
    assert working_port.execute({"command": "create", "path": "/memories/ro.md", "text": "keep\n"}).ok
    assert working_port.set_read_only("/memories/ro.md", True).ok  # the host's call
    with pytest.raises(MemoryRuleError) as caught:
        agent.remember("r6", {"/memories/ro.md": "changed"})
    assert caught.value.details == {"read_only": True}
    with pytest.raises(MemoryRuleError) as caught:
        agent.remember("r7", {"/memories/b.md": "x"}, tombstones=["/memories/ro.md"])
    assert caught.value.details == {"read_only": True}


def test_remember_refuses_a_request_id_the_port_used() -> None:
    working = InMemoryJournal("w")
    agent = authority_over(working).agent
    port = Memory(working, scope="working-memory")
    assert port.execute({"command": "create", "path": "/memories/a.md", "text": "x"}, call_id="toolu_1").ok
    with pytest.raises(RequestError):
        agent.remember("toolu_1", {"/memories/b.md": "y"})


def test_the_port_reports_a_journal_rule_with_its_own_code() -> None:
    journal = InMemoryJournal("w")
    port = Memory(journal, scope="s")
    assert port.execute({"command": "create", "path": "/memories/a.md", "text": "x"}, call_id="t1").ok
    again = port.execute({"command": "create", "path": "/memories/b.md", "text": "y"}, call_id="t1")
    assert (again.ok, again.error.code) == (False, "INVALID_ARGUMENT")  # type: ignore[union-attr]


# --- roles ----------------------------------------------------------------------------------------


def test_the_port_refuses_a_journal_of_another_role() -> None:
    session = InMemoryJournal("s")
    Session.create(session)
    with pytest.raises(ProfileError, match="working_memory"):
        Memory(session, scope="s")
    with pytest.raises(ProfileError):
        Memory(memory_journal("canonical_memory"), scope="s")


def test_the_authority_refuses_journals_of_the_wrong_roles() -> None:
    with pytest.raises(ProfileError):
        authority_over(memory_journal("canonical_memory"))
    with pytest.raises(ProfileError):
        create_authority(
            working=InMemoryJournal("w"),
            canonical=memory_journal("working_memory"),
            routes=[],
            actor="h",
            pins=InMemoryJournal("p"),
        )
    with pytest.raises(ProfileError):
        create_authority(
            working=InMemoryJournal("w"),
            canonical=InMemoryJournal("c"),
            routes=[],
            actor="h",
            pins=memory_journal("working_memory"),
        )


def test_the_cli_refuses_a_journal_of_the_wrong_role(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        Session.create(journal).user("hi")
    from tests.helpers.cli_runner import waybook  # in-process: waybook.cli.main

    result = waybook("memory", path)
    assert result.returncode == 2
    assert "not a working-memory" in result.stderr


def test_a_pin_journal_serves_one_canonical_journal() -> None:
    pins = InMemoryJournal("p")
    create_authority(
        working=InMemoryJournal("w1"), canonical=InMemoryJournal("c1"), routes=[], actor="h", pins=pins
    )
    with pytest.raises(ProfileError, match="records the pin of"):
        create_authority(
            working=InMemoryJournal("w2"), canonical=InMemoryJournal("c2"), routes=[], actor="h", pins=pins
        )
