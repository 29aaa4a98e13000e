"""Sealed content: the line layout that lets a record's content be erased while its digest still holds.

In a journal whose header has schema 2, a record whose body holds content (`SEALED_FIELDS`) is written

    {"salt":"<32 hex>","body":{<content fields>,<spaces><kept fields>},"seq":…,"prev":…,"digest":"…"}

The *sealed prefix* is everything before the kept fields: the salt (16 random bytes as hex), the body's
content fields, and spaces that make it a whole number of SHA-256's 64-byte blocks (two at least). The
digest is SHA-256 of the line without its digest member, as for every record, so the existing proof
covers the content byte for byte. Because the prefix ends on a block boundary, the SHA-256 state after
it (64 hex digits) and the block count are all the digest needs of it: that state is the content's
salted commitment. Erasing overwrites the prefix, in place and at the same length, with

    {"erased":[<erasure seq>,"<state>",<blocks>],"body":{<empty content fields>,<spaces>

and the digest is then finished from the state over the bytes that follow (`waybook.codecs._sha256`).
Without the salt nobody can compute the state of a guessed text, so a guess cannot be confirmed.

Everything here is about bytes; which records an erasure takes and what it records is
`waybook.journal._erasure`. docs/erasure.md is the specification.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any, Final

import msgspec

from waybook.codecs._canonical import ENCODER
from waybook.codecs._sha256 import BLOCK, resume, state_after
from waybook.model import (
    Annotation,
    AssistantMessage,
    BatchPlace,
    Body,
    Compaction,
    CustomEntry,
    Erased,
    Record,
    SystemMessage,
    ToolResult,
    UserMessage,
)

SEALED_FIELDS: Final[Mapping[type[Body], tuple[str, ...]]] = {
    UserMessage: ("content", "details"),
    AssistantMessage: ("content", "details"),
    SystemMessage: ("content", "details"),
    ToolResult: ("content", "details"),
    Compaction: ("details", "summary"),
    CustomEntry: ("content", "data"),
    Annotation: ("data",),
}
"""The body fields each kind seals (its content: message text, thinking, images, tool calls and their
arguments, tool outputs, summaries, custom data, details). Every other field stays with the envelope:
ids, kinds, tree links, tool-call ids and names, stop reasons, models, usage."""

EMPTY_VALUES: Final[Mapping[str, bytes]] = {"content": b'"content":[]', "summary": b'"summary":""'}
"""What an erased record's body holds for a sealed field its kind requires (the optional ones are left
off): so every erased record still decodes as its own kind, its content empty."""

SALT_HEX: Final = 32
"""A salt is 16 bytes from `secrets`, as 32 lowercase hex digits."""
MIN_BLOCKS: Final = 2
"""A sealed prefix takes two blocks at least, so the erased header always fits in its place."""

_SALT: Final = re.compile(r"[0-9a-f]{32}")
_STATE: Final = re.compile(r"[0-9a-f]{64}")
_SEALED_START: Final = b'{"salt":"'
_ERASED_START: Final = b'{"erased":'
_BODY: Final = b',"body":{'
_DIGEST_SUFFIX: Final = len(b',"digest":"') + 64 + len(b'"}')


class _Envelope(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """The members after the body: position, id, time, chain, batch place."""

    seq: int = msgspec.field(name="seq")
    id: str = msgspec.field(name="id")
    at: str = msgspec.field(name="at")
    prev: str = msgspec.field(name="prev")
    batch: BatchPlace | None = msgspec.field(default=None, name="batch")


def _kept_type(cls: type[Body], sealed: tuple[str, ...]) -> tuple[type[msgspec.Struct], tuple[int, ...]]:
    """A struct with `cls`'s tag and every field it does not seal, in order (encodes the kept fields),
    and the positions of those fields among `cls`'s."""
    fields: list[tuple[str, Any, Any]] = []
    positions: list[int] = []
    for position, info in enumerate(msgspec.structs.fields(cls)):
        if info.name in sealed:
            continue
        if info.default is not msgspec.NODEFAULT:
            spec = msgspec.field(default=info.default, name=info.encode_name)
        elif info.default_factory is not msgspec.NODEFAULT:
            spec = msgspec.field(default_factory=info.default_factory, name=info.encode_name)
        else:
            spec = msgspec.field(name=info.encode_name)
        fields.append((info.name, info.type, spec))
        positions.append(position)
    kept = msgspec.defstruct(
        f"Kept{cls.__name__}",
        fields,
        tag_field="kind",
        tag=cls.KIND,
        frozen=True,
        omit_defaults=True,
        gc=False,
    )
    return kept, tuple(positions)


def _sealed_spec(cls: type[Body], sealed: tuple[str, ...]) -> tuple[tuple[str, bool, Any], ...]:
    """Each sealed field of `cls`: its name, whether the kind requires it, and its default otherwise."""
    spec: list[tuple[str, bool, Any]] = []
    for info in msgspec.structs.fields(cls):
        if info.name not in sealed:
            continue
        if info.default is not msgspec.NODEFAULT:
            spec.append((info.name, False, info.default))
        elif info.default_factory is not msgspec.NODEFAULT:
            spec.append((info.name, False, info.default_factory()))
        else:
            if info.name not in EMPTY_VALUES:
                msg = f"{cls.__name__}.{info.name} is required and sealed but has no empty value"
                raise RuntimeError(msg)
            spec.append((info.name, True, None))
    return tuple(spec)


_KEPT: Final = {cls: _kept_type(cls, sealed) for cls, sealed in SEALED_FIELDS.items()}


def _kept_builder(cls: type[Body]) -> Callable[[Body], msgspec.Struct]:
    """A function from a body of `cls` to its kept fields' struct, taking them in one C call."""
    kept, positions = _KEPT[cls]
    names = [msgspec.structs.fields(cls)[i].name for i in positions]
    if len(names) == 1:
        take = attrgetter(names[0])
        return lambda body: kept(take(body))
    take_all = attrgetter(*names)
    return lambda body: kept(*take_all(body))


_BUILD_KEPT: Final = {cls: _kept_builder(cls) for cls in SEALED_FIELDS}
_SPEC: Final = {cls: _sealed_spec(cls, sealed) for cls, sealed in SEALED_FIELDS.items()}


def _sealed_taker(spec: tuple[tuple[str, bool, Any], ...]) -> Callable[[Body], tuple[Any, ...]]:
    """A function from a body to the values of its kind's sealed fields (`spec`), in one C call."""
    if len(spec) == 1:
        take = attrgetter(spec[0][0])
        return lambda body: (take(body),)
    return attrgetter(*(name for name, _, _ in spec))


_TAKE_SEALED: Final = {cls: _sealed_taker(spec) for cls, spec in _SPEC.items()}


def _content_taker(cls: type[Body]) -> Callable[[Body], dict[str, Any]]:
    """`sealed_content` for a body of `cls`: for the common shape (one required field, then one
    optional), a function of one C call and one comparison; else the general loop over `_SPEC`."""
    spec, take = _SPEC[cls], _TAKE_SEALED[cls]
    if len(spec) == 2 and spec[0][1] and not spec[1][1]:
        (first, _, _), (second, _, default) = spec

        def required_then_optional(body: Body) -> dict[str, Any]:
            value, optional = take(body)
            return {first: value, second: optional} if optional != default else {first: value}

        return required_then_optional

    def general(body: Body) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for (name, required, default), value in zip(spec, take(body), strict=True):
            if required or value != default:
                found[name] = value
        return found

    return general


_TAKE_CONTENT: Final = {cls: _content_taker(cls) for cls in SEALED_FIELDS}


def _content_struct_maker(cls: type[Body]) -> Callable[[Body], msgspec.Struct | None] | None:
    """A function from a body of `cls` to a struct that encodes exactly as its `sealed_content` dict
    does (its fields in sorted order, an optional field left off when it equals its default), built
    in C without a dict or a key sort; None from it when the body holds no content. For the kinds
    whose sealed fields are one required field then one optional one, in sorted order (the messages
    and tool results), and those whose sealed fields are all optional (custom entries, annotations);
    None for the other kinds."""
    spec = _SPEC[cls]
    if len(spec) == 2 and spec[0][1] and not spec[1][1] and spec[0][0] < spec[1][0]:
        (first, _, _), (second, _, default) = spec
        struct = msgspec.defstruct(
            f"Sealed{cls.__name__}",
            [(first, Any), (second, Any, default)],
            frozen=True,
            omit_defaults=True,
            gc=False,
        )
        take = _TAKE_SEALED[cls]

        def required_then_optional(body: Body) -> msgspec.Struct:
            value, optional = take(body)
            return struct(value, optional) if optional != default else struct(value)

        return required_then_optional
    if not all(not required for _, required, _ in spec) or len(spec) > 2:
        return None
    ordered = sorted(spec)
    struct = msgspec.defstruct(
        f"Sealed{cls.__name__}",
        [(name, Any, default) for name, _, default in ordered],
        frozen=True,
        omit_defaults=True,
        gc=False,
    )
    if len(ordered) == 1:
        ((name, _, default),) = ordered
        take_one = attrgetter(name)

        def one_optional(body: Body) -> msgspec.Struct | None:
            value = take_one(body)
            return struct(value) if value != default else None

        return one_optional
    (first, _, first_default), (second, _, second_default) = ordered
    take_both = attrgetter(first, second)

    def two_optional(body: Body) -> msgspec.Struct | None:
        value, other = take_both(body)
        if value != first_default:
            return struct(value, other) if other != second_default else struct(value)
        # the default object itself, which omit_defaults leaves off (it compares by identity)
        return struct(first_default, other) if other != second_default else None

    return two_optional


_CONTENT_STRUCTS: Final = {
    cls: make for cls in SEALED_FIELDS if (make := _content_struct_maker(cls)) is not None
}
_NO_CONTENT: Final = b"{}"


SealedParts = tuple[msgspec.Struct | dict[str, Any], msgspec.Struct]
"""What a sealed line encodes of a body: its content (`sealed_value`) and its kept fields' struct."""


def _splitter(cls: type[Body]) -> Callable[[Body], SealedParts | None]:
    """`split` for a body of `cls`: its content (`sealed_value`) and its kept fields' struct, the kept
    fields taken in one C call."""
    kept, positions = _KEPT[cls]
    names = [msgspec.structs.fields(cls)[i].name for i in positions]
    make = _CONTENT_STRUCTS.get(cls)
    take_content = _TAKE_CONTENT[cls]
    if make is not None and len(names) > 1:
        take_kept = attrgetter(*names)

        def split_struct(body: Body) -> SealedParts | None:
            content = make(body)
            return None if content is None else (content, kept(*take_kept(body)))

        return split_struct
    if make is not None:
        take_one = attrgetter(names[0])

        def split_struct_one(body: Body) -> SealedParts | None:
            content = make(body)
            return None if content is None else (content, kept(take_one(body)))

        return split_struct_one
    build_kept = _BUILD_KEPT[cls]

    def split_dict(body: Body) -> SealedParts | None:
        content = take_content(body)
        return (content, build_kept(body)) if content else None

    return split_dict


SPLIT: Final = {cls: _splitter(cls) for cls in SEALED_FIELDS}
"""For each kind that seals content, a function from a body to what its sealed line encodes: its
content (`sealed_value`) and its kept fields (a struct with the kind's tag); None when the body holds
no content. One dict lookup and one call per record for the sealer."""

match_salt: Final = _SALT.fullmatch
"""`is_salt` for a value known to be a str, without a call frame (the sealer runs it every record)."""


def sealed_value(body: Body) -> msgspec.Struct | dict[str, Any] | None:
    """What `sealed_content(body)` encodes as, built cheaper where it can be (a struct for the common
    kinds); None when the body holds no content (its kind seals nothing, or every optional field is at
    its default)."""
    make = _CONTENT_STRUCTS.get(type(body))
    if make is not None:
        return make(body)
    content = sealed_content(body)
    return content or None


def sealed_content(body: Body) -> dict[str, Any]:
    """The sealed fields `body` holds (required ones, and optional ones not at their default), by name;
    empty when it holds none (its kind seals nothing, or every optional field is at its default)."""
    take = _TAKE_CONTENT.get(type(body))
    return {} if take is None else take(body)


def _kept_bytes(body: Body) -> bytes:
    """The kept fields of `body` as they follow the sealed prefix: `"kind":"…",…` (no braces)."""
    return ENCODER.encode(_BUILD_KEPT[type(body)](body))[1:-1]


_SPACES: Final = tuple(b" " * n for n in range(BLOCK))
_PREFIX_FIXED: Final = len(_SEALED_START) + SALT_HEX + len(b'","body":{') + len(b",")
"""The bytes of a sealed prefix besides its content members and spaces: salt, keys and the comma."""
_MIN_SIZE: Final = MIN_BLOCKS * BLOCK


class _SealedTail(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A sealed line without its content and spaces: `{"salt":…,"body":{<kept>},<envelope>}`. Encoded
    in one C call, it is cut after `"body":{` (a fixed offset) for the content and spaces to go in.
    Built from positional arguments (cheaper than keywords, on every sealed append)."""

    salt: str = msgspec.field(name="salt")
    body: Any = msgspec.field(name="body")
    seq: int = msgspec.field(name="seq")
    id: str = msgspec.field(name="id")
    at: str = msgspec.field(name="at")
    prev: str = msgspec.field(name="prev")
    batch: BatchPlace | None = msgspec.field(default=None, name="batch")


_TAIL_CUT: Final = _PREFIX_FIXED - len(b",")
"""Where the content goes into an encoded `_SealedTail`: after `{"salt":"<32 hex>","body":{`."""
_BODY_END: Final = b'},"seq":'
"""Where the kept fields of an encoded `_SealedTail` end: its last `},"seq":` (the envelope after it
holds only JSON strings, which escape every `"`, and numbers)."""
_COMMA_SPACES: Final = tuple(b"," + b" " * n for n in range(_MIN_SIZE))
"""The comma and spaces that end a sealed prefix, by how many spaces: fewer than a block after a long
content, up to the two blocks' worth a tiny content needs (`{"data":0}` takes 68)."""


VIEW_ABOVE: Final = 1 << 16
"""Content this long or longer is taken by a memoryview, not a copy (a view costs more than copying a
few kilobytes, but a record may hold megabytes)."""


def sealed_line(
    salt: str,
    content: msgspec.Struct | dict[str, Any],
    kept: msgspec.Struct,
    seq: int,
    rid: str,
    at: str,
    prev: str,
    batch: BatchPlace | None,
    with_body: bool,
) -> tuple[bytes, bytes]:
    """The bytes a sealed record's digest covers, from its content and kept fields (`SPLIT`), and when
    `with_body` also its body as `{kept,content}` (its kind first, so that it decodes without looking
    ahead for the tag; else empty). Two encodes: the content once, and the salt, kept fields and
    envelope in one struct (`_SealedTail`), cut after `"body":{` for the content and spaces to go in.
    `salt` is 32 ASCII characters (`is_salt`). Raises what msgspec raises for a value it cannot
    encode."""
    encoded = ENCODER.encode(content)
    size = len(encoded)
    members = encoded[1:-1] if size < VIEW_ABOVE else memoryview(encoded)[1:-1]
    start = _PREFIX_FIXED + size - 2
    comma_spaces = _COMMA_SPACES[-start % BLOCK] if start > _MIN_SIZE else _COMMA_SPACES[_MIN_SIZE - start]
    tail = ENCODER.encode(_SealedTail(salt, kept, seq, rid, at, prev, batch))
    covered = b"".join((tail[:_TAIL_CUT], members, comma_spaces, tail[_TAIL_CUT:]))
    if not with_body:
        return covered, b""
    return covered, b"".join((tail[_TAIL_CUT - 1 : tail.rindex(_BODY_END)], b",", members, b"}"))


def _envelope_bytes(seq: int, rid: str, at: str, prev: str, batch: BatchPlace | None) -> bytes:
    return ENCODER.encode(_Envelope(seq=seq, id=rid, at=at, prev=prev, batch=batch))[1:-1]


def sealed_prefix(salt: str, content: dict[str, Any]) -> bytes:
    """The sealed prefix of a record: salt, content fields, spaces to a whole number of blocks (two at
    least). `content` is `sealed_content(body)`, not empty."""
    start = b"".join((_SEALED_START, salt.encode(), b'","body":{', ENCODER.encode(content)[1:-1], b","))
    size = max(MIN_BLOCKS * BLOCK, -(-len(start) // BLOCK) * BLOCK)
    return start + b" " * (size - len(start))


def sealed_covered(
    salt: str,
    body: Body,
    seq: int,
    rid: str,
    at: str,
    prev: str,
    batch: BatchPlace | None,
    content: dict[str, Any] | None = None,
) -> tuple[bytes, int]:
    """The bytes a sealed record's digest covers (its line without the digest member) and the length
    of its sealed prefix (`content` is `sealed_content(body)`, if the caller has it). Raises what
    msgspec raises for a value it cannot encode."""
    prefix = sealed_prefix(salt, sealed_content(body) if content is None else content)
    rest = b"".join((_kept_bytes(body), b"},", _envelope_bytes(seq, rid, at, prev, batch), b"}"))
    return prefix + rest, len(prefix)


def is_salt(value: object) -> bool:
    return type(value) is str and _SALT.fullmatch(value) is not None


def erased_header(erased: Erased, body: Body) -> bytes:
    """What takes the place of an erased record's sealed prefix: the `erased` member, the body's empty
    content fields, spaces to the prefix's length. Raises ValueError when it does not fit."""
    size = erased.blocks * BLOCK
    empties = [EMPTY_VALUES[name] + b"," for name, required, _ in _SPEC[type(body)] if required]
    start = b"".join((_ERASED_START, ENCODER.encode(erased), _BODY, *empties))
    if len(start) > size:
        msg = f"an erased header of {len(start)} bytes does not fit a sealed prefix of {size}"
        raise ValueError(msg)
    return start + b" " * (size - len(start))


def sealed_line_of(record: Record) -> bytes:
    """The line of a sealed record (`record.salt` set), from its fields."""
    assert record.salt is not None
    covered, _ = sealed_covered(
        record.salt, record.body, record.seq, record.id, record.at, record.prev, record.batch
    )
    return covered[:-1] + b',"digest":"' + record.digest.encode() + b'"}'


def erased_line_of(record: Record) -> bytes:
    """The line of an erased record (`record.erased` set), from its fields."""
    assert record.erased is not None
    rest = b"".join(
        (
            _kept_bytes(record.body),
            b"},",
            _envelope_bytes(record.seq, record.id, record.at, record.prev, record.batch),
        )
    )
    header = erased_header(record.erased, record.body)
    return header + rest + b',"digest":"' + record.digest.encode() + b'"}'


def sealed_prefix_of(line: bytes, record: Record) -> bytes | None:
    """The sealed prefix of `line` (record `record`, decoded from it) if the line is laid out as a sealed
    record, else None: the prefix rebuilt from the record's salt and content must start the line."""
    if record.salt is None or record.erased is not None or not sealed_content(record.body):
        return None
    try:
        prefix = sealed_prefix(record.salt, sealed_content(record.body))
    except (TypeError, ValueError, msgspec.EncodeError):
        return None
    return prefix if line.startswith(prefix) else None


def erase_line(line: bytes, record: Record, by: int) -> tuple[bytes, Erased]:
    """`line` (a sealed record, decoded as `record`) with its content erased by the erasure at seq `by`:
    the same length, the same bytes after the sealed prefix, the same digest. Raises ValueError for a
    line that is not a well-formed sealed record."""
    prefix = sealed_prefix_of(line, record)
    if prefix is None:
        msg = f"record {record.seq} is not sealed: its content was not written to be erasable"
        raise ValueError(msg)
    erased = Erased(by=by, state=state_after(prefix), blocks=len(prefix) // BLOCK)
    header = erased_header(erased, record.body)
    return header + line[len(prefix) :], erased


def erased_digest(line: bytes, record: Record) -> str | None:
    """The digest an erased line (decoded as `record`) proves, or None when it proves nothing: its
    header is not exactly the erased header of its kind, or the digest finished from its state over the
    bytes after the header is not the one it claims."""
    erased = record.erased
    if (
        erased is None
        or type(record.body) not in SEALED_FIELDS
        or type(erased.blocks) is not int
        or erased.blocks < MIN_BLOCKS
        or type(erased.state) is not str
        or not _STATE.fullmatch(erased.state)
        or len(line) <= erased.blocks * BLOCK + _DIGEST_SUFFIX
        or not line.endswith(b'"}')
    ):
        return None
    size = erased.blocks * BLOCK
    try:
        header = erased_header(erased, record.body)
    except ValueError:
        return None
    if not line.startswith(header):
        return None
    cut = len(line) - _DIGEST_SUFFIX
    if line[cut : cut + 11] != b',"digest":"':
        return None
    claimed = line[cut + 11 : cut + 75].decode("ascii", "replace")
    digest = resume(erased.state, size, line[size:cut] + b"}")
    return claimed if digest == claimed else None


def content_state(line: bytes, record: Record) -> tuple[str, int] | None:
    """The commitment of a sealed line's content: the SHA-256 state after its sealed prefix, and how
    many blocks that took; None for a line that is not sealed."""
    prefix = sealed_prefix_of(line, record)
    if prefix is None:
        return None
    return state_after(prefix), len(prefix) // BLOCK


def guess_state(salt: str, body: Body) -> str:
    """The commitment a body's content would have under `salt`: what a guesser would need the salt for."""
    return state_after(sealed_prefix(salt, sealed_content(body)))
