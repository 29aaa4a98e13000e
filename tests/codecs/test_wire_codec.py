"""The native wire codec: stable tags and names, canonical bytes, fail-closed decoding, upcasters."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.builders import header, user
from tests.helpers.wire_samples import LEGACY_SAMPLES, SAMPLES, WIRE_DIR, fixture_name, sealed_lines
from waybook.codecs import CURRENT_TAGS, LEGACY_TAGS, decode_record, encode_record, line_digest, seal
from waybook.journal import InMemoryJournal, verify
from waybook.model import (
    GENESIS,
    AnyBody,
    AssistantMessage,
    Compaction,
    ContextExclusion,
    CustomEntry,
    DecodeError,
    Header,
    ImageBlock,
    InvalidUtf8Error,
    LeafMoved,
    MalformedJsonError,
    MemoryAdoption,
    MemoryDelete,
    MemoryPinMoved,
    MemoryRename,
    MemoryWrite,
    MissingFieldError,
    NewRecord,
    Reset,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UnknownFieldError,
    UnknownTagError,
    UserMessage,
    WrongTypeError,
)

AT = "2026-12-01T09:00:00.000Z"


def a_line() -> bytes:
    return seal(1, user("u1", None, "hello"), GENESIS.digest)[1]


# --- the registry and the golden fixtures ---------------------------------------------------------


def test_every_registered_tag_has_a_golden_fixture_and_a_sample() -> None:
    assert set(SAMPLES) == set(CURRENT_TAGS)
    assert set(LEGACY_SAMPLES) == set(LEGACY_TAGS)
    for tag in CURRENT_TAGS:
        assert (WIRE_DIR / fixture_name(tag)).is_file(), tag


@pytest.mark.parametrize("tag", sorted(CURRENT_TAGS))
def test_golden_fixtures_decode_and_reencode_to_identical_bytes(tag: str) -> None:
    lines = (WIRE_DIR / fixture_name(tag)).read_bytes().splitlines()
    assert lines
    for line in lines:
        record = decode_record(line)
        assert record.kind == tag
        assert encode_record(record) == line
        assert line_digest(line) == record.digest


@pytest.mark.parametrize("tag", sorted(CURRENT_TAGS))
def test_todays_encoder_still_writes_the_golden_bytes(tag: str) -> None:
    """If this fails the wire format changed: bump the tag version and add an upcaster instead."""
    golden = (WIRE_DIR / fixture_name(tag)).read_bytes().splitlines()
    assert sealed_lines(SAMPLES[tag]) == golden


# --- stable names: attributes are not wire names --------------------------------------------------


def _renamed_twin(cls: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """The same wire type with every Python attribute renamed, keeping the declared wire names."""
    info = msgspec.structs.fields(cls)

    def same_field(f: msgspec.structs.FieldInfo) -> Any:
        if f.default is not msgspec.NODEFAULT:
            return msgspec.field(name=f.encode_name, default=f.default)
        if f.default_factory is not msgspec.NODEFAULT:
            return msgspec.field(name=f.encode_name, default_factory=f.default_factory)
        return msgspec.field(name=f.encode_name)

    fields = [(f"renamed_{f.name}", f.type, same_field(f)) for f in info]
    config = cls.__struct_config__
    return msgspec.defstruct(
        f"Renamed{cls.__name__}",
        fields,
        tag=config.tag,
        tag_field=config.tag_field,
        kw_only=True,
        frozen=True,
        omit_defaults=config.omit_defaults,
    )


@pytest.mark.parametrize("tag", sorted(CURRENT_TAGS))
def test_renaming_a_python_attribute_does_not_change_the_wire_bytes(tag: str) -> None:
    for body in SAMPLES[tag]:
        twin_cls = _renamed_twin(type(body))
        values = {f"renamed_{f.name}": getattr(body, f.name) for f in msgspec.structs.fields(body)}
        twin = twin_cls(**values)
        assert msgspec.json.encode(twin) == msgspec.json.encode(body)


@pytest.mark.parametrize("tag", sorted(CURRENT_TAGS))
def test_no_class_name_or_module_path_reaches_the_wire(tag: str) -> None:
    for line in sealed_lines(SAMPLES[tag]):
        text = line.decode()
        for body in SAMPLES[tag]:
            for cls in type(body).__mro__:
                if cls.__module__.startswith("waybook"):
                    assert f'"{cls.__name__}"' not in text
        assert "waybook.journal" not in text
        assert "waybook.codecs" not in text
        assert "__" not in text


# --- canonical bytes ------------------------------------------------------------------------------


def test_the_same_record_always_encodes_to_the_same_bytes() -> None:
    one = CustomEntry(parent=None, type="t.x", data={"b": 1, "a": {"y": 2, "x": 3}})
    two = CustomEntry(parent=None, type="t.x", data={"a": {"x": 3, "y": 2}, "b": 1})
    line_one = seal(1, NewRecord(id="c", at=AT, body=one), GENESIS.digest)[1]
    line_two = seal(1, NewRecord(id="c", at=AT, body=two), GENESIS.digest)[1]
    assert line_one == line_two
    assert b'"data":{"a":{"x":3,"y":2},"b":1}' in line_one


def test_digest_is_the_last_field_and_covers_every_other_byte() -> None:
    line = a_line()
    assert line.endswith(b'"}')
    assert line[-77:-66] == b',"digest":"'
    assert line_digest(line) is not None
    assert line_digest(line.replace(b"hello", b"hellO")) is None


# --- decoding fails closed ------------------------------------------------------------------------


def test_unknown_record_tag_is_a_typed_error_naming_the_tag_and_where() -> None:
    bad = a_line().replace(b"waybook.user/2", b"waybook.rocket/1")
    with pytest.raises(UnknownTagError) as caught:
        decode_record(bad, where="line 7")
    assert caught.value.tag == "waybook.rocket/1"
    assert "line 7" in str(caught.value)
    assert "waybook.rocket/1" in str(caught.value)


def test_unknown_block_tag_is_a_typed_error() -> None:
    bad = a_line().replace(b'"type":"text"', b'"type":"hologram"')
    with pytest.raises(UnknownTagError) as caught:
        decode_record(bad)
    assert caught.value.field == "$.body.content[0].type"


def test_missing_required_field_is_a_typed_error_naming_the_field() -> None:
    bad = a_line().replace(b'"parent":null,', b"")
    with pytest.raises(MissingFieldError) as caught:
        decode_record(bad, where="seq 1")
    assert caught.value.field == "$.body.parent"
    assert caught.value.tag == "waybook.user/2"


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        (b'"seq":1,', b'"seq":1,"color":"red",', "$.color"),
        (b'"parent":null,', b'"parent":null,"mood":1,', "$.body.mood"),
    ],
)
def test_unknown_field_in_a_strict_record_is_a_typed_error(old: bytes, new: bytes, field: str) -> None:
    with pytest.raises(UnknownFieldError) as caught:
        decode_record(a_line().replace(old, new))
    assert caught.value.field == field


def test_wrong_type_is_a_typed_error_naming_the_field() -> None:
    with pytest.raises(WrongTypeError) as caught:
        decode_record(a_line().replace(b'"seq":1', b'"seq":"1"'))
    assert caught.value.field == "$.seq"


def test_invalid_utf8_is_a_typed_error() -> None:
    with pytest.raises(InvalidUtf8Error):
        decode_record(a_line().replace(b"hello", b"hel\xfflo"))
    with pytest.raises(InvalidUtf8Error):
        decode_record(a_line().replace(b"hello", b"\xed\xa0\x80"))  # an encoded lone surrogate


@pytest.mark.parametrize("bad", [b"", b"{", b"null", b"[1,2]", b'{"seq":1}garbage', b"\x00\x00\x00"])
def test_malformed_bytes_are_a_typed_decode_error(bad: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_record(bad)
    with pytest.raises(MalformedJsonError):
        decode_record(a_line()[:-3])


# --- upcasters ------------------------------------------------------------------------------------


def test_an_old_user_message_is_upcast_to_the_current_type_on_read() -> None:
    (line,) = (WIRE_DIR / "legacy" / fixture_name("waybook.user/1")).read_bytes().splitlines()
    record = decode_record(line)
    assert record.body == UserMessage(parent=None, content=(TextBlock(text="an old-style user message"),))
    assert record.kind == "waybook.user/2"
    # The digest still covers the bytes as they were written.
    assert line_digest(line) == record.digest


def test_a_journal_with_old_records_still_verifies() -> None:
    (old,) = (WIRE_DIR / "legacy" / fixture_name("waybook.user/1")).read_bytes().splitlines()
    # Re-chain the old body behind a header, as a long-lived journal would hold it.
    head_line = seal(1, header(), GENESIS.digest)[1]
    head_digest = line_digest(head_line)
    assert head_digest is not None
    from tests.helpers.wire_samples import _seal_legacy
    from waybook.codecs._legacy import UserMessageV1

    old_body = msgspec.json.decode(old, type=dict[str, Any])["body"]
    legacy = _seal_legacy(2, UserMessageV1(parent=old_body["parent"], text=old_body["text"]), head_digest)
    journal = InMemoryJournal.from_lines([head_line, legacy])
    assert verify(journal).ok
    assert list(journal.read_lines()) == [head_line, legacy]
    assert isinstance(list(journal.read())[1].body, UserMessage)


# --- property: every record round-trips byte for byte ---------------------------------------------

ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)
texts = st.text(max_size=40)
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
blocks = st.one_of(
    st.builds(TextBlock, text=texts),
    st.builds(ThinkingBlock, thinking=texts, signature=st.none() | texts, redacted=st.booleans()),
    st.builds(ImageBlock, source=texts, media_type=st.sampled_from(["image/png", "image/jpeg"])),
    st.builds(
        ToolCallBlock, call_id=ids, name=ids, arguments=st.dictionaries(texts, json_values, max_size=3)
    ),
)
contents = st.lists(blocks, max_size=4).map(tuple)
parents = st.none() | ids
bodies: st.SearchStrategy[AnyBody] = st.one_of(
    st.builds(
        Header,
        journal=ids,
        creator=texts,
        schema=st.integers(1, 9),
        metadata=st.dictionaries(texts, json_values),
    ),
    st.builds(UserMessage, parent=parents, content=contents),
    st.builds(
        AssistantMessage,
        parent=parents,
        content=contents,
        stop_reason=st.sampled_from(["end_turn", "tool_use", None]),
        model=st.none() | texts,
        usage=st.none() | st.dictionaries(texts, st.integers(0, 10**9), max_size=3),
    ),
    st.builds(SystemMessage, parent=parents, content=contents),
    st.builds(
        ToolResult,
        parent=parents,
        call_id=ids,
        content=contents,
        tool_name=st.none() | texts,
        is_error=st.booleans(),
        details=st.none() | st.dictionaries(texts, json_values, max_size=3),
    ),
    st.builds(
        Compaction,
        parent=parents,
        summary=texts,
        first_kept=parents,
        tokens_before=st.none() | st.integers(0),
    ),
    st.builds(ContextExclusion, parent=parents, target=ids, reason=texts),
    st.builds(
        CustomEntry, parent=parents, type=ids, data=json_values, in_context=st.booleans(), content=contents
    ),
    st.builds(LeafMoved, from_leaf=parents, to_leaf=parents, reason=texts, actor=st.none() | texts),
    st.builds(Reset, reason=texts, actor=st.none() | texts),
    st.builds(MemoryWrite, path=texts, text=texts, digest=texts, prior=st.none() | texts, command=texts),
    st.builds(
        MemoryDelete, paths=st.lists(texts, max_size=3).map(tuple), reason=texts, call_id=st.none() | ids
    ),
    st.builds(MemoryRename, moves=st.lists(st.tuples(texts, texts), max_size=3).map(tuple)),
    st.builds(
        MemoryAdoption,
        operation=ids,
        actor=texts,
        binding=texts,
        nomination=texts,
        source=ids,
        source_seq=st.integers(0, 9),
        source_digest=texts,
        prior_seq=st.integers(0, 9),
        prior_digest=texts,
        writes=st.integers(0, 9),
        replaced=st.lists(texts, max_size=2).map(tuple),
    ),
    st.builds(
        MemoryPinMoved,
        canonical=ids,
        prior_seq=st.integers(0, 9),
        prior_digest=texts,
        new_seq=st.integers(0, 9),
        new_digest=texts,
        receipt=texts,
    ),
)


@given(seq=st.integers(1, 2**40), record_id=ids | texts, at=st.just(AT) | texts, body=bodies)
def test_encode_of_decode_is_identity_for_every_record(
    seq: int, record_id: str, at: str, body: AnyBody
) -> None:
    record, line = seal(seq, NewRecord(id=record_id, at=at, body=body), "a" * 64)
    decoded = decode_record(line)
    assert decoded == record
    assert encode_record(decoded) == line
    assert line_digest(line) == record.digest
