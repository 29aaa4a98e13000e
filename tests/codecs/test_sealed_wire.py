"""The sealed wire shape (docs/erasure.md): content behind a salted commitment, erasable with the digest
intact; an erased line proves its digest from the commitment and nothing else; fail closed."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.sealed_samples import SEALED_DIR, erased_golden, sealed_golden
from tests.helpers.wire_samples import SAMPLES
from waybook.codecs import decode_record, encode_record, line_digest, seal
from waybook.codecs._canonical import canonical_json
from waybook.codecs._commitments import (
    SEALED_FIELDS,
    SPLIT,
    content_state,
    erase_line,
    guess_state,
    is_salt,
    match_salt,
    sealed_content,
    sealed_covered,
    sealed_value,
)
from waybook.codecs._sha256 import _python_resume, _python_state, resume, state_after
from waybook.model import (
    GENESIS,
    Annotation,
    AssistantMessage,
    BatchPlace,
    CustomEntry,
    NewRecord,
    TextBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

AT = "2026-12-01T09:00:00.000Z"
SALT = "0123456789abcdef" * 2
SECRET = "my api key is sk-live-4f9a1c0e77"

SEALED_SAMPLES = [
    body
    for bodies in SAMPLES.values()
    for body in bodies
    if type(body) in SEALED_FIELDS and sealed_content(body)
]
UNSEALED_SAMPLES = [body for bodies in SAMPLES.values() for body in bodies if not sealed_content(body)]
STRUCT_SEALED_SAMPLES = [
    CustomEntry(parent="c", type="ext.both", data={"b": 1, "a": [2]}, content=(TextBlock("shown"),)),
    CustomEntry(parent="c", type="ext.content", content=(TextBlock("shown"),)),
    CustomEntry(parent="c", type="ext.data", data={"z": None}),
    CustomEntry(parent="c", type="ext.falsy", data=0),
    Annotation(target="c", type="ext.note", data=[1, "two"]),
    UserMessage(
        parent=None, content=(TextBlock("x" * 70_000),), details={"big": True}
    ),  # content past VIEW_ABOVE
]
"""Bodies the sealer encodes from a struct rather than a dict, every optional field set and unset."""


def sealed(body: object, *, seq: int = 2, salt: str = SALT) -> tuple[bytes, object]:
    record, line = seal(seq, NewRecord(id=f"r{seq}", at=AT, body=body), GENESIS.digest, None, salt)  # type: ignore[arg-type]
    return line, record


def test_a_sealed_line_starts_with_its_salt_and_content_and_proves_by_the_plain_slice_and_hash() -> None:
    line, record = sealed(UserMessage(parent=None, content=(TextBlock(SECRET),)))
    assert line.startswith(b'{"salt":"' + SALT.encode() + b'","body":{"content":')
    covered = line[: line.rindex(b',"digest":"')] + b"}"
    assert hashlib.sha256(covered).hexdigest() == record.digest == line_digest(line)  # type: ignore[attr-defined]
    assert decode_record(line) == record
    assert encode_record(record) == line  # type: ignore[arg-type]


def test_todays_sealer_still_writes_the_golden_sealed_bytes_and_digests() -> None:
    """If this fails the digests of existing sealed journals changed: the wire format broke."""
    golden = (SEALED_DIR / "sealed-v2.jsonl").read_bytes().splitlines()
    sealed_now = sealed_golden()
    assert [line for _, line in sealed_now] == golden
    for (record, line), stored in zip(sealed_now, golden, strict=True):
        assert decode_record(stored) == record
        assert encode_record(record) == stored
        assert line_digest(stored) == record.digest == hashlib.sha256(line[:-77] + b"}").hexdigest()


def test_todays_eraser_still_writes_the_golden_erased_bytes_with_the_same_digests() -> None:
    golden = (SEALED_DIR / "erased-v2.jsonl").read_bytes().splitlines()
    assert erased_golden() == golden
    for (record, _), stored in zip(sealed_golden(), golden, strict=True):
        assert line_digest(stored) == record.digest
        assert encode_record(decode_record(stored)) == stored


@pytest.mark.parametrize("body", SEALED_SAMPLES, ids=lambda b: type(b).__name__)
def test_every_sealed_kind_round_trips_and_erases_keeping_length_and_digest(body: object) -> None:
    line, record = sealed(body)
    assert decode_record(line) == record
    assert encode_record(record) == line
    erased_line, erased = erase_line(line, record, by=9)  # type: ignore[arg-type]
    assert len(erased_line) == len(line)
    assert line_digest(erased_line) == record.digest  # type: ignore[attr-defined]
    after = decode_record(erased_line)
    assert after.erased == erased
    assert after.erased.by == 9
    assert after.digest == record.digest
    assert after.id == record.id
    assert after.kind == record.kind
    assert sealed_content(after.body) == {} or all(not v for v in sealed_content(after.body).values())
    assert SALT.encode() not in erased_line
    assert encode_record(after) == erased_line


def test_the_erased_line_holds_neither_the_text_nor_the_salt_and_keeps_links_and_usage() -> None:
    body = AssistantMessage(
        parent="u1",
        content=(TextBlock(SECRET), ToolCallBlock(call_id="c1", name="shell", arguments={"cmd": SECRET})),
        model="m-1",
        stop_reason="tool_use",
    )
    line, record = sealed(body)
    erased_line, _ = erase_line(line, record, by=5)  # type: ignore[arg-type]
    assert SECRET.encode() not in erased_line
    assert SALT.encode() not in erased_line
    after = decode_record(erased_line).body
    assert isinstance(after, AssistantMessage)
    assert (after.parent, after.model, after.stop_reason, after.content) == ("u1", "m-1", "tool_use", ())


def test_a_guessed_text_does_not_match_the_commitment_and_the_right_one_needs_the_salt() -> None:
    body = UserMessage(parent=None, content=(TextBlock(SECRET),))
    line, record = sealed(body)
    state, _ = content_state(line, record)  # type: ignore[arg-type,misc]
    guess = UserMessage(parent=None, content=(TextBlock("my api key is sk-live-0000000000"),))
    assert guess_state(SALT, guess) != state
    assert guess_state("f" * 32, body) != state  # the true text under another salt: no match either
    assert guess_state(SALT, body) == state  # only the erased salt confirms it


def test_tampering_with_the_kept_bytes_of_an_erased_line_is_refused() -> None:
    line, record = sealed(UserMessage(parent="p1", content=(TextBlock(SECRET),)))
    erased_line, erased = erase_line(line, record, by=3)  # type: ignore[arg-type]
    assert line_digest(erased_line.replace(b'"parent":"p1"', b'"parent":"p2"')) is None
    forged_state = erased_line.replace(erased.state.encode(), b"0" * 64)
    assert line_digest(forged_state) is None
    sneaked = erased_line.replace(b'"content":[],', b'"content":[{"type":"text","text":"x"}],', 1)
    assert line_digest(sneaked) is None  # the erased header is exactly its kind's, nothing smuggled in


@pytest.mark.parametrize("body", UNSEALED_SAMPLES, ids=lambda b: type(b).__name__)
def test_a_record_without_content_is_written_as_before_even_in_a_sealed_journal(body: object) -> None:
    line, record = sealed(body)
    assert line.startswith(b'{"seq":2,')
    assert record.salt is None  # type: ignore[attr-defined]


@given(st.binary(max_size=300), st.binary(max_size=300))
def test_sha256_resumed_from_a_state_equals_hashlib(prefix: bytes, rest: bytes) -> None:
    prefix = prefix[: len(prefix) // 64 * 64]
    expected = hashlib.sha256(prefix + rest).hexdigest()
    assert resume(state_after(prefix), len(prefix), rest) == expected
    assert _python_resume(_python_state(prefix), len(prefix), rest) == expected


LOOKALIKE = '},"seq":1,"id":"x"'
"""What the sealer cuts its one encoding at (`},"seq":`), inside values: escaped there, never a cut."""


@pytest.mark.parametrize(
    "body",
    [
        *SEALED_SAMPLES,
        *STRUCT_SEALED_SAMPLES,
        UserMessage(parent=LOOKALIKE, content=(TextBlock(LOOKALIKE),), details={"seq": {"seq": 1}}),
        AssistantMessage(parent=None, content=(TextBlock("x"),), usage={"seq": 1}, model=LOOKALIKE),
        ToolResult(parent="p", call_id=LOOKALIKE, tool_name="}", content=(TextBlock("o"),), details={}),
        UserMessage(parent=None, content=[TextBlock("a list, not a tuple")]),  # type: ignore[arg-type]
    ],
    ids=lambda b: type(b).__name__,
)
@pytest.mark.parametrize("batch", [None, (1, 3)], ids=["alone", "batched"])
def test_the_one_pass_sealer_writes_the_bytes_of_the_reference_layout_whatever_the_values_hold(
    body: object, batch: BatchPlace | None
) -> None:
    new = NewRecord(id=LOOKALIKE, at=AT, body=body)  # type: ignore[arg-type]
    record, line = seal(7, new, GENESIS.digest, batch, SALT)
    reference, _ = sealed_covered(SALT, record.body, 7, LOOKALIKE, AT, GENESIS.digest, batch)
    assert line == reference[:-1] + b',"digest":"' + hashlib.sha256(reference).hexdigest().encode() + b'"}'
    assert decode_record(line) == record
    assert encode_record(record) == line


@pytest.mark.parametrize(
    "body",
    [
        *SEALED_SAMPLES,
        *STRUCT_SEALED_SAMPLES,
        ToolResult(parent="p", call_id="c", tool_name="t", content=(), details={}),
        UserMessage(parent=None, content=(), details=None),
    ],
    ids=lambda b: type(b).__name__,
)
def test_the_sealed_value_encodes_exactly_as_the_sealed_content_dict(body: object) -> None:
    value = sealed_value(body)  # type: ignore[arg-type]
    assert value is not None
    assert canonical_json(value) == canonical_json(sealed_content(body))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    ["0123456789abcdef" * 2, "0123456789ABCDEF" * 2, "g" * 32, "0" * 31, "0" * 33, "é" * 32, " " * 32, ""],
)
def test_a_salt_is_exactly_32_lowercase_hex_digits(text: str) -> None:
    assert is_salt(text) == (text == "0123456789abcdef" * 2)
    assert (match_salt(text) is not None) == is_salt(text)


def test_a_tiny_content_is_padded_to_two_whole_blocks_not_refused() -> None:
    """A custom entry whose only content is `"data":0` needs more spaces than a block (a crash before)."""
    line, record = sealed(CustomEntry(parent=None, type="ext.tiny", data=0))
    prefix = line[: line.index(b'"kind"')]
    assert prefix.startswith(b'{"salt":"' + SALT.encode() + b'","body":{"data":0,')
    assert len(prefix) == 128
    assert prefix.endswith(b" " * 60)
    assert line_digest(line) == record.digest  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "body",
    [CustomEntry(parent="c", type="ext.empty"), Annotation(target="c", type="ext.empty")],
    ids=lambda b: type(b).__name__,
)
def test_a_body_whose_optional_content_is_all_default_has_no_sealed_value(body: object) -> None:
    assert sealed_content(body) == {}  # type: ignore[arg-type]
    assert sealed_value(body) is None  # type: ignore[arg-type]
    assert SPLIT[type(body)](body) is None  # type: ignore[index,arg-type]
