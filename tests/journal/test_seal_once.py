"""Seal once (issue 29): a message whose values provably decode back as themselves is encoded and
hashed but never decoded; every sealed record, proved that way or decoded back, equals what a replay
of its bytes reads."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from waybook.codecs import decode_record, encode_record, seal
from waybook.codecs._wire import round_trips
from waybook.model import AssistantMessage, NewRecord, TextBlock, UserMessage

AT = "2026-12-01T09:00:00.000Z"


strings = st.text(max_size=40)
parents = st.none() | strings
blocks = st.builds(TextBlock, text=strings)
contents = st.lists(blocks, max_size=3).flatmap(lambda b: st.sampled_from([tuple(b), list(b)]))
details = st.none() | st.dictionaries(
    strings,
    st.floats(allow_nan=False, allow_infinity=False) | st.lists(st.integers(), max_size=2) | strings,
    max_size=2,
)
users = st.builds(UserMessage, parent=parents, content=contents, details=details)
assistants = st.builds(
    AssistantMessage,
    parent=parents,
    content=contents,
    stop_reason=st.sampled_from(["end_turn", None]),
    model=st.none() | strings,
    usage=st.none() | st.dictionaries(strings, st.integers(0, 10), max_size=2),
    details=details,
)


@given(body=users | assistants, seq=st.integers(1, 10**6))
def test_every_sealed_message_is_what_its_bytes_decode_to(body: Any, seq: int) -> None:
    record, line = seal(seq, NewRecord(id="r1", at=AT, body=body), "a" * 64)
    assert decode_record(line) == record
    assert encode_record(record) == line
    if round_trips(body):
        assert record.body is body  # proved by construction: sealed once, never decoded back


def test_a_plain_text_message_is_sealed_without_decoding_and_odd_values_are_decoded_back() -> None:
    """(A NaN is no odd value any more: it is refused, tests/codecs/test_fail_closed.py.)"""
    plain = UserMessage(parent=None, content=(TextBlock(text="hello"),))
    assert round_trips(plain)
    assert seal(1, NewRecord(id="a", at=AT, body=plain), "a" * 64)[0].body is plain
    for odd in (
        UserMessage(parent=None, content=[TextBlock(text="hello")]),  # type: ignore[arg-type]
        AssistantMessage(parent=None, content=(TextBlock(text="x"),), usage={"tokens": 3}),
        UserMessage(parent=None, content=(TextBlock(text="x"),), details={"n": (1.5, 2)}),
    ):
        assert not round_trips(odd)
        record = seal(1, NewRecord(id="a", at=AT, body=odd), "a" * 64)[0]
        assert record.body is not odd
        assert type(record.body.content) is tuple  # type: ignore[union-attr]
