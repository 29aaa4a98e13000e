"""Reading decodes each record once: `read` decodes whole chunks, `open_decoded` keeps what the open
decoded, `resume` replays and renders from those records, and a Session joins at the head unread."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.faults import CountingFileOps
from tests.helpers.paths import FIXTURES
from tests.helpers.session_steps import actions, build_session
from tests.helpers.sessions import branching_session
from waybook import JsonlJournal, Session, ToolOutcome, resume
from waybook.codecs._wire import decode_record
from waybook.journal import InMemoryJournal
from waybook.journal._ledger import decode_records
from waybook.model import DecodeError, ToolCallBlock
from waybook.projections import (
    ContextProjection,
    ProjectionOrderError,
    context_at,
    render_context,
    render_context_from,
    replay,
)
from waybook.projections._snapshots import encode_snapshot


def golden_file(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    with JsonlJournal(path) as journal:
        branching_session(journal)
    return path


def test_read_returns_what_a_line_by_line_decode_returns(tmp_path: Path) -> None:
    path = golden_file(tmp_path)
    with JsonlJournal(path, create=False) as journal:
        lines = list(journal.read_lines())
        one_by_one = [
            msgspec.json.decode(line, type=type(r)) for line, r in zip(lines, journal.read(), strict=True)
        ]
        assert list(journal.read()) == one_by_one
        assert list(journal.read(after=3, limit=4)) == one_by_one[3:7]


def test_decoding_committed_lines_upcasts_old_versions_and_names_bad_bytes() -> None:
    legacy = sorted((FIXTURES / "wire" / "legacy").glob("*.jsonl"))
    assert legacy
    for fixture in legacy:
        lines = fixture.read_bytes().splitlines()
        assert decode_records(lines, "x") == [decode_record(line) for line in lines]
        assert all(r.kind == "waybook.user/2" for r in decode_records(lines, "x"))
    with pytest.raises(DecodeError, match=r"audit\.jsonl"):
        decode_records([b'{"seq":1,"id":"a"}', b"{not json"], "audit.jsonl")


def test_open_decoded_hands_over_every_record_without_reading_the_file_again(tmp_path: Path) -> None:
    path = golden_file(tmp_path)
    ops = CountingFileOps()
    journal, records = JsonlJournal.open_decoded(path, create=False, file_ops=ops)
    with journal:
        reads = len(ops.reads)
        assert records == list(InMemoryJournal.from_lines(path.read_bytes().splitlines()).read())
        assert len(ops.reads) == reads


def test_resume_matches_a_replay_and_a_rendered_context(tmp_path: Path) -> None:
    path = golden_file(tmp_path)
    resumed = resume(path, create=False)
    with resumed.journal as journal:
        state = replay(ContextProjection(), journal)
        assert encode_snapshot(ContextProjection(), resumed.state) == encode_snapshot(
            ContextProjection(), state
        )
        assert resumed.context == context_at(journal, state.tree)
        assert resumed.context  # the golden session has a context to show
        assert (resumed.session.head, resumed.session.leaf) == (journal.head(), state.tree.leaf_id)
        resumed.session.user("and now?")
        assert journal.head().seq == state.seq + 1


def test_a_session_joins_a_journal_at_its_head_and_leaf_without_reading_it(tmp_path: Path) -> None:
    path = golden_file(tmp_path)
    ops = CountingFileOps()
    with JsonlJournal(path, create=False, file_ops=ops) as journal:
        reads = len(ops.reads)
        session = Session(journal)
        assert len(ops.reads) - reads <= 1  # at most the last record, for the clock
        replayed = Session(InMemoryJournal.from_lines(path.read_bytes().splitlines()))
        assert (session.head, session.leaf) == (replayed.head, replayed.leaf)


@settings(max_examples=80, deadline=None)
@given(steps=actions, turns=st.lists(st.integers(0, 3), max_size=6))
def test_folding_many_records_at_once_equals_applying_them_one_by_one(
    steps: list[tuple[str, object]], turns: list[int]
) -> None:
    journal = build_session(steps)
    session = Session(journal)
    for calls in turns:  # runs of messages: an assistant turn and its tool results
        blocks = [ToolCallBlock(call_id=f"c{i}", name="t") for i in range(calls)]
        session.turn(blocks or "done", [ToolOutcome(f"c{i}", "ok") for i in range(calls)])
    records = list(journal.read())
    projection = ContextProjection()
    one_by_one = projection.initial()
    for record in records:
        one_by_one = projection.apply(one_by_one, record)
    at_once = projection.apply_many(projection.initial(), records)
    assert encode_snapshot(projection, at_once) == encode_snapshot(projection, one_by_one)
    assert at_once.refs == one_by_one.refs
    at_once.tree.check_invariants()
    context = render_context_from(at_once.tree, at_once.refs, records)
    assert context == render_context(one_by_one.tree, one_by_one.refs, journal)


def test_a_run_that_does_not_follow_the_state_is_refused_as_out_of_order() -> None:
    journal = build_session([("user", "a"), ("assistant", "b"), ("user", "c")])
    records = list(journal.read())
    projection = ContextProjection()
    with pytest.raises(ProjectionOrderError):
        projection.apply_many(projection.initial(), [records[0], *records[2:]])


@pytest.mark.parametrize("chained", [False, True])
def test_a_run_whose_ends_do_not_follow_the_state_is_refused_even_when_the_caller_proved_its_chain(
    chained: bool,
) -> None:
    journal = build_session([("user", "a"), ("assistant", "b"), ("user", "c"), ("assistant", "d")])
    records = list(journal.read())
    projection = ContextProjection()
    state = projection.apply_many(projection.initial(), records[:2])
    for later in (records[3:], records[1:]):  # one skipped, one applied twice
        with pytest.raises(ProjectionOrderError):
            projection.apply_many(state, later, chained=chained)


@pytest.mark.parametrize("opening", ["full_proof", "checkpoint", "trusted_checkpoint", "torn_tail"])
def test_resume_folds_the_same_state_and_context_however_the_open_proved_the_records(
    tmp_path: Path, opening: str
) -> None:
    path = golden_file(tmp_path)  # a writer's open and close: its checkpoint exists
    options: dict[str, object] = {
        "full_proof": {"sidecar": False},
        "trusted_checkpoint": {"trust_checkpoint": True},
    }.get(opening, {})
    if opening == "torn_tail":
        with path.open("ab") as out:
            out.write(b'{"seq":')  # a partial last line: the open keeps the committed records
    resumed = resume(path, create=False, **options)
    with resumed.journal as journal:
        state = replay(ContextProjection(), journal)
        assert encode_snapshot(ContextProjection(), resumed.state) == encode_snapshot(
            ContextProjection(), state
        )
        assert resumed.context == context_at(journal, state.tree)
        assert resumed.state.seq == journal.head().seq


def test_open_decoded_proved_says_whether_the_open_proved_every_record_itself(tmp_path: Path) -> None:
    path = golden_file(tmp_path)  # its writer left a checkpoint
    for options, proved in (({"sidecar": False}, True), ({}, False)):
        journal, records, every = JsonlJournal.open_decoded_proved(path, create=False, **options)
        with journal:
            assert every is proved
            assert records == list(journal.read())
