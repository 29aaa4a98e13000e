"""Records as readers are shown them after an erasure (`shown_records` for a path, `iter_shown` for a
whole journal read in seq order, as `log`, the Pi export and OTel traces read it): the same placeholders
and the same rebuilt calls either way, each call made once."""

from __future__ import annotations

import pytest

from tests.helpers.erased_sessions import REASON, split_turn_session
from waybook.journal import erase, iter_shown, shown_records
from waybook.model import ToolCallBlock


@pytest.mark.parametrize("seqs", [[3], [4], [3, 4], [3, 5], [4, 6]])
def test_a_whole_journal_read_in_order_shows_the_rebuilt_calls_a_path_shows(seqs: list[int]) -> None:
    """`iter_shown` held an erased assistant message only until the next record: the first call's message
    of a turn recorded as one message per call got back no call, its result shown orphaned."""
    journal = split_turn_session()
    erase(journal, seqs, reason=REASON)
    streamed = list(iter_shown(journal, journal.read()))
    assert streamed == shown_records(journal, list(journal.read()))
    calls = [
        block.call_id
        for record in streamed
        for block in getattr(record.body, "content", ())
        if isinstance(block, ToolCallBlock)
    ]
    assert sorted(calls) == ["c1", "c2"]


def test_each_erased_message_of_a_turn_gets_back_its_own_call_in_the_results_order() -> None:
    journal = split_turn_session()
    erase(journal, [3, 4], reason=REASON)
    shown = {record.seq: record for record in shown_records(journal, list(journal.read()))}
    for seq, call in ((3, "c1"), (4, "c2")):
        blocks = shown[seq].body.content  # type: ignore[union-attr]
        assert [b.call_id for b in blocks if isinstance(b, ToolCallBlock)] == [call]
