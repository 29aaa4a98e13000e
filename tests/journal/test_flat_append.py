"""The one-record decision of `Ledger.plan` (a list of one record at the head, decided by
`SessionRules.check_one`) decides exactly as the general path (`SessionRules.check`, taken here by
passing the batch as a generator): the same line, the same rule state after, or the same typed error
with nothing kept."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.builders import AT, assistant, header, move, reset, user
from waybook.journal._ledger import Ledger
from waybook.model import Compaction, CustomEntry, JournalError, NewRecord, ToolResult, text
from waybook.model._head import GENESIS, AppendResult


def candidates(known: list[str], leaf: str | None) -> st.SearchStrategy[Any]:
    ids = st.sampled_from([*known, "fresh1", "fresh2", "bad id", "", "x\n"]) if known else st.just("fresh0")
    parents = st.sampled_from([leaf, None, *known[:3], "ghost"])
    return st.one_of(
        st.builds(user, ids, parents),
        st.builds(assistant, ids, parents, st.just("a"), st.sampled_from(["end_turn", None, "streaming"])),
        st.builds(move, ids, st.sampled_from([leaf, "ghost"]), st.sampled_from([*known[:3], None, "ghost"])),
        st.builds(reset, ids),
        st.builds(
            lambda rid, parent, at: NewRecord(
                id=rid, at=at, body=ToolResult(parent=parent, call_id="c", content=text("ok"))
            ),
            ids,
            parents,
            st.sampled_from([AT, "2026-12-01 09:00:00", "2026-12-01T09:00:00.000Z\n", 5]),
        ),
        st.builds(
            lambda rid, parent, kept: NewRecord(
                id=rid, at=AT, body=Compaction(parent=parent, summary="s", first_kept=kept)
            ),
            ids,
            parents,
            st.sampled_from([*known[:2], None, "ghost"]),
        ),
        st.builds(
            lambda rid, parent: NewRecord(
                id=rid, at=AT, body=CustomEntry(parent=parent, type="t.x", data={"k": 1})
            ),
            ids,
            parents,
        ),
        st.builds(lambda: header("h2")),
        st.just("not a record"),
    )


def outcome(ledger: Ledger, new: Any, *, flat: bool) -> tuple[Any, ...]:
    try:
        batch = [new] if flat else (record for record in [new])
        plan = ledger.plan(batch, ledger.head, lambda after, limit: [])  # type: ignore[arg-type]
        assert not isinstance(plan, AppendResult)
        (line,) = plan.lines
        ledger.commit(plan)
    except JournalError as exc:
        return (type(exc), str(exc))
    rules = ledger.rules
    return (line, ledger.head, rules.count, rules.leaf, rules.has_header, dict(rules.ids))


@pytest.mark.slow  # 150 random journals (6 s); the default run draws 25 (the test after this one)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_flat_path_decides_every_record_as_plan_does(data: st.DataObject) -> None:
    flat, planned = Ledger.empty("j"), Ledger.empty("j")
    first = data.draw(st.sampled_from([header(), user("u0", None)]))
    assert outcome(flat, first, flat=True) == outcome(planned, first, flat=False)
    known: list[str] = list(dict(flat.rules.ids))
    for _ in range(data.draw(st.integers(1, 12))):
        new = data.draw(candidates(known, flat.rules.leaf))
        assert outcome(flat, new, flat=True) == outcome(planned, new, flat=False)
        known = list(dict(flat.rules.ids))


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_the_flat_path_decides_a_few_random_journals_as_plan_does(data: st.DataObject) -> None:
    """The property above at a sixth of its size, for the default run (`-m slow` runs it whole)."""
    test_the_flat_path_decides_every_record_as_plan_does.hypothesis.inner_test(data)


def test_a_refused_record_leaves_the_ledger_as_it_was() -> None:
    ledger = Ledger.empty("j")
    plan = ledger.plan([header()], GENESIS, lambda after, limit: [])
    assert not isinstance(plan, AppendResult)
    ledger.commit(plan)
    before = (ledger.head, ledger.rules.count, ledger.rules.leaf, dict(ledger.rules.ids))
    with pytest.raises(JournalError):
        ledger.plan([user("h", None)], ledger.head, lambda after, limit: [])  # a duplicate id
    assert before == (ledger.head, ledger.rules.count, ledger.rules.leaf, dict(ledger.rules.ids))
    assert ledger.head != GENESIS


@settings(max_examples=300, deadline=None)
@given(
    seed=st.sampled_from(["2026-12-01T09:00:00.000Z", "2024-02-29T23:59:59.999Z", "2026-12-01T09:00:00Z"]),
    tail=st.text(alphabet="0123456789Z.:T-٣x\n", max_size=6),
    cut=st.integers(0, 24),
)
def test_the_remembered_second_never_changes_what_a_valid_timestamp_is(
    seed: str, tail: str, cut: int
) -> None:
    from waybook.journal._roles.session import is_recent_timestamp, is_timestamp

    assert is_recent_timestamp(seed) == is_timestamp(seed)
    candidate = seed[:cut] + tail
    assert is_recent_timestamp(candidate) == is_timestamp(candidate)


def memory_candidates(known: list[str]) -> st.SearchStrategy[Any]:
    """Memory records that keep or break the memory rules: hostile paths, wrong digests, a read-only
    file changed, moves onto files, deletes of files that are not there, reused ids."""
    from waybook.journal._roles.memory_text import content_digest
    from waybook.model import MemoryDelete, MemoryRename, MemoryWrite

    ids = st.sampled_from([*known, "m1", "m2", "m3", "m4"])
    paths = st.sampled_from(
        [
            "/memories/a.md",
            "/memories/b.md",
            "/memories/d/c.md",
            "/memories/d",
            "/memories/../x",
            "/etc/x",
            "",
        ]
    )
    texts = st.sampled_from(["a", "---\nread_only: true\n---\nkeep\n", "x" * 300])

    def write(rid: str, path: str, words: str, honest: bool) -> NewRecord:
        digest = content_digest(words if honest else "other")
        return NewRecord(id=rid, at=AT, body=MemoryWrite(path=path, text=words, digest=digest))

    return st.one_of(
        st.builds(write, ids, paths, texts, st.sampled_from([True, True, True, False])),
        st.builds(lambda rid, p: NewRecord(id=rid, at=AT, body=MemoryDelete(paths=(p,))), ids, paths),
        st.builds(
            lambda rid, a, b: NewRecord(id=rid, at=AT, body=MemoryRename(moves=((a, b),))), ids, paths, paths
        ),
        st.builds(user, ids, st.just(None)),
    )


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_flat_path_keeps_the_memory_rules_as_plan_does(data: st.DataObject) -> None:
    from waybook.model import Header

    flat, planned = Ledger.empty("m"), Ledger.empty("m")
    role = data.draw(st.sampled_from(["working_memory", "canonical_memory"]))
    first = NewRecord(
        id="h", at=AT, body=Header(journal="m", creator="tests", role=role, metadata={"scope": "s"})
    )
    assert outcome(flat, first, flat=True) == outcome(planned, first, flat=False)
    known: list[str] = list(dict(flat.rules.ids))
    for _ in range(data.draw(st.integers(1, 12))):
        new = data.draw(memory_candidates(known))
        assert outcome(flat, new, flat=True) == outcome(planned, new, flat=False)
        known = list(dict(flat.rules.ids))
