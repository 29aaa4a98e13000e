"""Issue 13: receipts that verify completely, per-turn memory provenance, unknown policies refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from waybook import Session
from waybook.journal import JsonlJournal
from waybook.memory import Memory, RequestError, Route, create_authority
from waybook.memory.canonical._outcomes import AdoptionReceipt, PinReceipt
from waybook.memory.canonical.receipts import (
    derive_adoption_receipt,
    derive_pin_receipt,
    derive_remember_receipt,
    derive_tool_receipt,
)
from waybook.memory.tools._index import MemoryUnavailable, load_index
from waybook.model import Head, IntegrityError
from waybook.model._records import MemoryPinMoved, MemoryUsed

ROUTES = [Route("shared", frozenset({"facts"}))]


def waybook(*args: object) -> Any:
    from tests.helpers.cli_runner import waybook as run  # in-process: waybook.cli.main

    return run(*map(str, args))


@pytest.fixture
def files(tmp_path: Path) -> Any:
    paths = {name: tmp_path / f"{name}.jsonl" for name in ("session", "working", "canonical")}
    opened = {name: JsonlJournal(path) for name, path in paths.items()}
    session = Session.create(opened["session"])
    authority = create_authority(
        working=opened["working"],
        canonical=opened["canonical"],
        routes=ROUTES,
        actor="host:reviewer",
        session=opened["session"],
    )
    yield paths, opened, session, authority
    for journal in opened.values():
        journal.close()


def test_forged_already_present_and_advance_receipts_do_not_derive(files: Any) -> None:
    _, opened, _, authority = files
    canonical, session = opened["canonical"], opened["session"]
    authority.agent.remember("r1", {"/memories/a.md": "x"})
    nomination = authority.agent.nominate(["/memories/a.md"], "shared", "facts")
    adopted = authority.host.adopt_nomination(authority.agent.query().head, nomination)
    present = authority.host.adopt_nomination(adopted.new, nomination)
    assert derive_adoption_receipt(canonical, session, adopted) == adopted
    assert derive_adoption_receipt(canonical, session, present) == present
    forged = AdoptionReceipt.make(
        actor="someone",
        authority=present.authority,
        binding=present.binding,
        nomination=present.nomination,
        prior=Head(1, Head.of(next(iter(canonical.read()))).digest),
        new=present.new,
        status="already-present",
        operation=None,
        operation_digest=None,
    )
    with pytest.raises(IntegrityError):
        derive_adoption_receipt(canonical, session, forged)
    moved = authority.host.advance_canonical(present.new, present.new)
    assert derive_pin_receipt(canonical, session, moved) == moved
    forged_pin = PinReceipt.make(
        moved.authority, moved.binding, Head(1, forged.prior.digest), moved.new, "advanced"
    )
    with pytest.raises(IntegrityError):
        derive_pin_receipt(canonical, session, forged_pin)
    with pytest.raises(IntegrityError):  # the authority id must be the canonical journal's header id
        derive_pin_receipt(canonical, session, attrs.evolve(moved, authority="elsewhere"))


def test_remember_and_memory_tool_receipts_derive_from_the_working_journal(tmp_path: Path) -> None:
    with JsonlJournal(tmp_path / "w.jsonl") as working:
        port = Memory(working, scope="agent")
        first = port.execute(
            {"command": "create", "path": "/memories/a.md", "text": "see [b](/memories/b.md)"}, call_id="t1"
        )
        second = port.execute({"command": "create", "path": "/memories/a.md", "text": "plain"}, call_id="t2")
        assert second.receipt is not None
        assert second.receipt.dropped_links == ("/memories/b.md",)
        for result in (first, second):
            assert result.receipt is not None
            assert derive_tool_receipt(working, result.receipt) == result.receipt
        with pytest.raises(IntegrityError):
            derive_tool_receipt(working, attrs.evolve(second.receipt, dropped_links=()))
    with JsonlJournal(tmp_path / "w2.jsonl") as working2, JsonlJournal(tmp_path / "c2.jsonl") as canonical2:
        pins = JsonlJournal(tmp_path / "p2.jsonl")
        agent = create_authority(
            working=working2, canonical=canonical2, routes=ROUTES, actor="h", pins=pins
        ).agent
        receipt = agent.remember("req", {"/memories/x.md": "1", "/memories/y.md": "2"})
        assert derive_remember_receipt(working2, receipt) == receipt
        with pytest.raises(IntegrityError):
            derive_remember_receipt(working2, attrs.evolve(receipt, first_seq=1))
        pins.close()


def test_waybook_verify_rederives_every_receipt_and_refuses_a_forged_one(files: Any) -> None:
    paths, opened, session, authority = files
    foreign_write_jsonl(opened["canonical"])
    authority.host.advance_canonical(authority.agent.query().head, opened["canonical"].head())
    port = Memory(opened["working"], scope="working-memory")
    result = port.execute({"command": "create", "path": "/memories/n.md", "text": "note"}, call_id="toolu_1")
    session.sync()
    session.tool_result("toolu_1", "saved", tool_name="memory", details=result.receipt.as_details())
    ok = waybook("verify", paths["session"], paths["canonical"], paths["working"])
    assert ok.returncode == 0, ok.stderr
    assert "receipts: 2 verified, 0 bad" in ok.stdout
    canonical_head = opened["canonical"].head()
    forged = MemoryPinMoved(
        canonical=authority.agent.query().authority,
        prior_seq=canonical_head.seq,
        prior_digest=canonical_head.digest,
        new_seq=canonical_head.seq,
        new_digest=canonical_head.digest,
        receipt="ab" * 32,
        status="unchanged",
    )
    session.sync()
    session.append(forged)
    bad = waybook("verify", paths["session"], paths["canonical"], paths["working"])
    assert bad.returncode == 1
    assert "does not verify" in bad.stderr


def foreign_write_jsonl(journal: JsonlJournal, n: int = 1) -> None:
    from waybook.journal._roles.memory_text import content_digest
    from waybook.model import MemoryWrite, NewRecord

    body = MemoryWrite(path="/memories/f.md", text="f", digest=content_digest("f"))
    journal.append(
        [NewRecord(id=f"foreign-{n}", at="2026-12-01T09:00:00.000Z", body=body)], expected=journal.head()
    )


# --- per-turn provenance --------------------------------------------------------------------------


def test_an_unknown_unavailable_memory_policy_is_refused() -> None:
    with pytest.raises(RequestError, match="bogus"):
        load_index(lambda: (_ for _ in ()).throw(OSError("gone")), policy="bogus")  # type: ignore[arg-type]


def test_each_turn_records_and_show_prints_the_memory_it_rendered(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    memory_path = tmp_path / "m.jsonl"
    with JsonlJournal(memory_path) as memory_journal:
        Memory(memory_journal, scope="agent").execute(
            {"command": "create", "path": "/memories/a.md", "text": "x"}
        )
    with JsonlJournal(path) as journal:
        session = Session.create(journal)
        session.user("first question")
        index = load_index(
            lambda: JsonlJournal(memory_path, readonly=True), policy="require", session=session
        )
        session.assistant("first answer")
        session.user("second question")
        gone = load_index(
            lambda: JsonlJournal(tmp_path / "missing.jsonl", create=False), policy="continue", session=session
        )
        assert isinstance(gone, MemoryUnavailable)
        session.assistant("second answer")
        used = [r.body for r in journal.read() if isinstance(r.body, MemoryUsed)]
    assert [u.index_sha256 for u in used] == [index.sha256, None]  # type: ignore[union-attr]
    assert used[1].policy == "continue"
    assert used[1].unavailable
    shown = json.loads(waybook("show", path, "--json").stdout)["records"]
    turns = [r for r in shown if r["kind"] == "waybook.assistant/1"]
    assert turns[0]["memory_used"]["index_sha256"] == index.sha256  # type: ignore[union-attr]
    assert turns[0]["memory_used"]["seq"] == index.as_of  # type: ignore[union-attr]
    assert turns[1]["memory_used"]["unavailable"]
    text = " ".join(waybook("show", path).stdout.split())  # rich wraps long lines
    assert f"index sha256 {index.sha256[:12]}" in text  # type: ignore[union-attr]
    assert "went on without it (policy continue)" in text


def test_the_require_policy_records_its_refusal_in_the_session_before_raising(tmp_path: Path) -> None:
    from waybook.memory.tools._index import MemoryRequiredError

    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal)
        session.user("a question")
        with pytest.raises(MemoryRequiredError, match="memory is required but unavailable"):
            load_index(
                lambda: JsonlJournal(tmp_path / "missing.jsonl", create=False),
                policy="require",
                session=session,
            )
        used = [r.body for r in journal.read() if isinstance(r.body, MemoryUsed)]
    assert len(used) == 1
    assert (used[0].memory, used[0].policy) == (None, "require")
    assert used[0].unavailable
    assert "missing.jsonl" in used[0].unavailable


def test_a_well_formed_pin_record_that_does_not_chain_is_refused(files: Any) -> None:
    from waybook.memory.canonical.receipts import check_receipts

    _, opened, session, authority = files
    canonical = opened["canonical"]
    for i in range(2):
        foreign_write_jsonl(canonical, i)
    moved = authority.host.advance_canonical(authority.agent.query().head, canonical.head())
    header = Head.of(next(iter(canonical.read())))
    replayed = PinReceipt.make(
        moved.authority, moved.binding, header, moved.new, "advanced"
    )  # a copy, re-sealed
    session.sync()
    session.append(
        MemoryPinMoved(
            canonical=moved.authority,
            prior_seq=header.seq,
            prior_digest=header.digest,
            new_seq=moved.new.seq,
            new_digest=moved.new.digest,
            receipt=replayed.receipt_sha256,
            status="advanced",
            binding=moved.binding,
        )
    )
    checks = check_receipts(opened["session"], {moved.authority: canonical})
    assert [c.ok for c in checks] == [True, False]
    assert "do not chain" in str(checks[1].problem)
