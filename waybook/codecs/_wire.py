"""The native wire codec: the tag registry, sealing records into canonical lines, and decoding them.

A line is the canonical JSON of a Record, with `digest` as its last field:

    {"seq":1,"id":"…","at":"…","prev":"<64 hex>","body":{"kind":"waybook.user/2",…},"digest":"<64 hex>"}

A record of a multi-record batch also carries `"batch":[index,size]` between `prev` and `body`.

`digest` is SHA-256 over the same bytes without the `,"digest":"…"` member, so a reader verifies a line
by hashing a slice of it, without re-encoding anything.

In a journal whose header has schema 2, a record whose body holds content is sealed instead (its line
starts with a salt and the content, so the content can be erased later with the digest intact; an
erased record starts with `"erased"`): `waybook.codecs._commitments` and docs/erasure.md.

Decoding fails closed: an unknown tag, a missing or unknown field, a wrong type, invalid UTF-8 or
malformed JSON raises a typed DecodeError naming the tag, the field and where the line was found.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Union

import msgspec

from waybook.codecs import _commitments as commitments
from waybook.codecs._canonical import ENCODER
from waybook.codecs._json_data import plain_body
from waybook.codecs._legacy import UserMessageV1, upcast_user_v1
from waybook.model import (
    BODY_TYPES,
    Annotation,
    AnyBody,
    AssistantMessage,
    BatchPlace,
    Body,
    Compaction,
    ContextExclusion,
    CustomEntry,
    DecodeError,
    Erasure,
    Header,
    InvalidRecordError,
    InvalidUtf8Error,
    LeafMoved,
    MalformedJsonError,
    MemoryAdoption,
    MemoryDelete,
    MemoryPinMoved,
    MemoryRename,
    MemorySynced,
    MemoryUsed,
    MemoryWrite,
    MissingFieldError,
    NewRecord,
    Record,
    RecordTooLargeError,
    ReflectionFinished,
    ReflectionReserved,
    ReflectionStarted,
    Reset,
    SubagentLink,
    SystemMessage,
    TextBlock,
    ToolResult,
    UnknownFieldError,
    UnknownTagError,
    UserMessage,
    WrongTypeError,
)

# --- the registry ---------------------------------------------------------------------------------

CURRENT_TAGS: Final[Mapping[str, type[Body]]] = {
    "waybook.header/1": Header,
    "waybook.user/2": UserMessage,
    "waybook.assistant/1": AssistantMessage,
    "waybook.system/1": SystemMessage,
    "waybook.tool_result/1": ToolResult,
    "waybook.compaction/1": Compaction,
    "waybook.exclusion/1": ContextExclusion,
    "waybook.custom/1": CustomEntry,
    "waybook.leaf_moved/1": LeafMoved,
    "waybook.reset/1": Reset,
    "waybook.annotation/1": Annotation,
    "waybook.erasure/1": Erasure,
    "waybook.subagent_link/1": SubagentLink,
    "waybook.memory.write/1": MemoryWrite,
    "waybook.memory.delete/1": MemoryDelete,
    "waybook.memory.rename/1": MemoryRename,
    "waybook.memory.adoption/1": MemoryAdoption,
    "waybook.memory.pin_moved/1": MemoryPinMoved,
    "waybook.memory.used/1": MemoryUsed,
    "waybook.reflection.reserved/1": ReflectionReserved,
    "waybook.reflection.started/1": ReflectionStarted,
    "waybook.reflection.finished/1": ReflectionFinished,
    "waybook.memory.synced/1": MemorySynced,
}
"""Every body type written today, by its stable wire tag. A tag is never reused for another meaning."""

LEGACY_TAGS: Final[Mapping[str, tuple[type[Body], Callable[[Any], Body]]]] = {
    "waybook.user/1": (UserMessageV1, upcast_user_v1),
}
"""Old versions still read, each with the pure function that lifts it to the current type."""

TAG_PATTERN: Final = re.compile(r"waybook\.[a-z_]+(\.[a-z_]+)?/[1-9][0-9]*")


def _check_registry() -> None:
    """The registry is the contract: fail at import if it disagrees with the types it names."""
    seen: set[str] = set()
    for tag, cls in [*CURRENT_TAGS.items(), *((t, c) for t, (c, _) in LEGACY_TAGS.items())]:
        declared = cls.__struct_config__.tag
        if declared != tag or tag != cls.KIND or not TAG_PATTERN.fullmatch(tag) or tag in seen:
            msg = f"wire registry entry {tag!r} does not match {cls.__qualname__} (tag {declared!r})"
            raise RuntimeError(msg)
        seen.add(tag)
    if set(CURRENT_TAGS.values()) != set(BODY_TYPES):
        msg = "wire registry and BODY_TYPES disagree: every body type needs exactly one current tag"
        raise RuntimeError(msg)


_check_registry()

# Records of any registered version; only used when the fast current-version decode refused a line.
_AnyVersionBody = Union[(*CURRENT_TAGS.values(), *(c for c, _ in LEGACY_TAGS.values()))]  # type: ignore[valid-type]
_AnyVersionRecord: Any = msgspec.defstruct(
    "_AnyVersionRecord",
    [
        ("seq", int),
        ("id", str),
        ("at", str),
        ("prev", str),
        ("batch", BatchPlace | None, None),
        ("body", _AnyVersionBody),
        ("digest", str),
    ],
    frozen=True,
    forbid_unknown_fields=True,
    kw_only=True,
    omit_defaults=True,
)
_UPCAST: Final = dict(LEGACY_TAGS.values())

_SPLIT: Final = commitments.SPLIT
_MATCH_SALT: Final = commitments.match_salt
_VIEW_ABOVE: Final = commitments.VIEW_ABOVE
_RECORD_DECODER: Final = msgspec.json.Decoder(Record)
_ANY_VERSION_DECODER: Final = msgspec.json.Decoder(_AnyVersionRecord)
_BODY_DECODER: Final = msgspec.json.Decoder(AnyBody)


# --- sealing --------------------------------------------------------------------------------------


class _Unsealed(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A Record without its digest: exactly the bytes the digest covers."""

    seq: int = msgspec.field(name="seq")
    id: str = msgspec.field(name="id")
    at: str = msgspec.field(name="at")
    prev: str = msgspec.field(name="prev")
    batch: BatchPlace | None = msgspec.field(default=None, name="batch")
    body: AnyBody = msgspec.field(name="body")


class _Envelope(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """The fields of `_Unsealed` before `body`, encoded alone so that only the body is decoded back."""

    seq: int = msgspec.field(name="seq")
    id: str = msgspec.field(name="id")
    at: str = msgspec.field(name="at")
    prev: str = msgspec.field(name="prev")
    batch: BatchPlace | None = msgspec.field(default=None, name="batch")


_DIGEST_PREFIX: Final = b',"digest":"'
_DIGEST_SUFFIX_LEN: Final = len(_DIGEST_PREFIX) + 64 + 2  # ,"digest":" + 64 hex + "}


FIRST_LINE_START: Final = b'{"seq":1,"id":"'
"""How the canonical line of every journal's first record begins (field order is part of the format):
how a reader tells a header cut short while it was written from another program's file."""

MAX_RECORD_BYTES: Final = 8 * 1024 * 1024
"""The largest record a journal takes (its body's canonical bytes). Opens stay linear and fast because
no line is huge; large outputs go to a store's blobs (`store.blobs.put`) and records reference them."""


MAX_LINE_BYTES: Final = 2 * MAX_RECORD_BYTES
"""The longest line a reader decodes: a record's body at the limit and its envelope fit with room to
spare. A longer line was never written by a waybook writer; it is damage, found without holding it."""


def _too_large(record_id: str, size: int) -> RecordTooLargeError:
    msg = (
        f"record {record_id!r} is {size:,} bytes, over the {MAX_RECORD_BYTES:,}-byte limit of a journal "
        "record; store large outputs as blobs (store.blobs.put, or Session(..., blobs=store.blobs)) and "
        "record the reference"
    )
    return RecordTooLargeError(msg)


def seal(
    seq: int, new: NewRecord, prev: str, batch: BatchPlace | None = None, salt: str | None = None
) -> tuple[Record, bytes]:
    """Give `new` its position and digest. Returns the committed Record and its canonical line.

    `batch` is the record's `(index, size)` in a multi-record batch (None for a record appended alone);
    it is part of the bytes the digest covers. `salt` (32 lowercase hex digits, 16 random bytes), given
    by a journal of schema 2, seals a body that holds content (`seal_content`); other bodies ignore it.

    Where `round_trips` proves by construction that decoding the body would give the same value back
    (the common message of plain text), the record is sealed in one pass: its bytes encoded in one C
    call, hashed once, never decoded. Any other body is decoded back from its bytes, so a writer holds
    exactly what a later replay will read (a tuple becomes a list in both), and a body that does not
    decode as its own type is refused (InvalidRecordError) before anything is written.

    Encoding fails closed at every depth: a body whose bytes do not decode back equal to it (msgspec
    writes attrs classes, dataclasses, datetimes, sets and NaN as something else) has its free-form
    fields walked (waybook.codecs._json_data): registered values are written by their codecs, and
    anything that is not JSON data is refused (NotJsonDataError, naming the path to it). Plain data
    pays one C comparison, never a Python walk. The envelope's strings are the writer's own (and
    `prev` is the previous record's digest), so they are not copied.
    """
    rid, at, body = new.id, new.at, new.body
    if salt is not None and (split := _SPLIT.get(type(body))) is not None:
        if (
            type(rid) is str
            and type(at) is str
            and type(prev) is str
            and type(salt) is str
            and _MATCH_SALT(salt) is not None
        ):
            parts = split(body)
            if parts is not None:
                one_pass = _seal_content_once(seq, rid, at, prev, batch, salt, body, parts)
                return one_pass or seal_content(seq, new, prev, batch, salt, tried=True)
        elif commitments.sealed_value(body) is not None:
            return seal_content(seq, new, prev, batch, salt, tried=True)
    if type(rid) is str and type(at) is str and type(prev) is str:
        if round_trips(body):  # proved by construction: the writer's body is what a replay reads
            try:
                covered = ENCODER.encode(_Unsealed(seq=seq, id=rid, at=at, prev=prev, batch=batch, body=body))
            except (TypeError, ValueError, RecursionError, msgspec.EncodeError, UnicodeEncodeError) as exc:
                raise _not_encodable(rid, exc) from exc
            if len(covered) > MAX_RECORD_BYTES:  # the limit is on the body's bytes: measure them alone
                _check_body_size(rid, body)
            digest = hashlib.sha256(covered).hexdigest()
            line = b"".join((covered[:-1], _DIGEST_PREFIX, digest.encode(), b'"}'))
            return Record(seq=seq, id=rid, at=at, prev=prev, batch=batch, body=body, digest=digest), line
        body, body_bytes, decoded = _encoded_body(rid, body)
        if decoded is not None:
            try:
                head = ENCODER.encode(_Envelope(seq=seq, id=rid, at=at, prev=prev, batch=batch))
            except (TypeError, ValueError, RecursionError, msgspec.EncodeError, UnicodeEncodeError) as exc:
                raise _not_encodable(rid, exc) from exc
            if len(body_bytes) > MAX_RECORD_BYTES:
                raise _too_large(rid, len(body_bytes))
            covered = head[:-1] + b',"body":' + body_bytes + b"}"
            digest = hashlib.sha256(covered).hexdigest()
            line = covered[:-1] + _DIGEST_PREFIX + digest.encode() + b'"}'
            record = Record(seq=seq, id=rid, at=at, prev=prev, batch=batch, body=decoded, digest=digest)
            return record, line
        # the body does not decode as its own type: decode the whole line below, for the typed error
    elif type(body) in CURRENT_TAGS.values():
        body = _encoded_body(str(rid), body)[0]
    try:
        covered = ENCODER.encode(_Unsealed(seq=seq, id=rid, at=at, prev=prev, batch=batch, body=body))
    except (TypeError, ValueError, RecursionError, msgspec.EncodeError, UnicodeEncodeError) as exc:
        raise _not_encodable(str(rid), exc) from exc
    if len(covered) > MAX_RECORD_BYTES:
        raise _too_large(str(rid), len(covered))
    line = covered[:-1] + _DIGEST_PREFIX + hashlib.sha256(covered).hexdigest().encode() + b'"}'
    return _typed(line, rid), line


def seal_content(
    seq: int,
    new: NewRecord,
    prev: str,
    batch: BatchPlace | None,
    salt: str,
    content: dict[str, Any] | None = None,
    *,
    tried: bool = False,
) -> tuple[Record, bytes]:
    """`seal` for a body that holds content, in a journal of schema 2: the sealed line (salt and content
    first, padded to whole SHA-256 blocks; `waybook.codecs._commitments`). Like `seal`, the writer gets
    back exactly what a replay reads: unless `round_trips` proves it, the body is decoded back from its
    canonical bytes (the same fields, in another order, as the sealed line holds), and a body that does
    not decode as its own type is refused before anything is written. `content` is
    `sealed_content(body)`, if the caller has it; `tried`, that `seal` already tried the common road."""
    rid, at, body = new.id, new.at, new.body
    if not commitments.is_salt(salt):
        msg = f"record {rid!r}: a salt is 32 lowercase hex digits (secrets.token_hex(16)), not {salt!r}"
        raise InvalidRecordError(msg, record_id=str(rid))
    if not tried and type(rid) is str and type(at) is str and type(prev) is str:
        parts = commitments.SPLIT[type(body)](body)
        one_pass = None if parts is None else _seal_content_once(seq, rid, at, prev, batch, salt, body, parts)
        if one_pass is not None:
            return one_pass
    proved = round_trips(body) and type(rid) is str and type(at) is str and type(prev) is str
    decoded = None
    if not proved:  # fail closed at every depth, registered values written by their codecs (as `seal`)
        encoded, _, decoded = _encoded_body(str(rid), body)
        if encoded is not body:
            body, content = encoded, None
    try:
        covered, _ = commitments.sealed_covered(salt, body, seq, rid, at, prev, batch, content)
    except (TypeError, ValueError, RecursionError, msgspec.EncodeError, UnicodeEncodeError) as exc:
        raise _not_encodable(str(rid), exc) from exc
    if len(covered) > MAX_RECORD_BYTES:
        _check_body_size(str(rid), body)
    digest = hashlib.sha256(covered).hexdigest()
    line = b"".join((covered[:-1], _DIGEST_PREFIX, digest.encode(), b'"}'))
    if proved or (decoded is not None and type(rid) is str and type(at) is str and type(prev) is str):
        kept: Any = body if proved else decoded
        record = Record(salt=salt, seq=seq, id=rid, at=at, prev=prev, batch=batch, body=kept, digest=digest)
        return record, line
    return _typed(line, rid), line


def _seal_content_once(
    seq: int,
    rid: str,
    at: str,
    prev: str,
    batch: BatchPlace | None,
    salt: str,
    body: Any,
    parts: commitments.SealedParts,
) -> tuple[Record, bytes] | None:
    """`seal_content`'s common road: the content encoded once, and the covered bytes hashed from that
    encoding (`parts` is `commitments.SPLIT[kind](body)`: the content and the kept fields). Unless
    `round_trips` proves the body, the body is decoded back from the same pieces, its kind first
    (`{kept,content}`, so the decoder need not look ahead for the tag), and kept only if it equals the
    writer's body. None (the caller takes the full road, which names every error and walks free-form
    data) when a piece does not encode or the body does not decode back as itself."""
    proved = round_trips(body)
    try:
        covered, body_bytes = commitments.sealed_line(salt, *parts, seq, rid, at, prev, batch, not proved)
    except (TypeError, ValueError, RecursionError, msgspec.EncodeError, UnicodeEncodeError):
        return None
    if proved:
        held = body
    else:
        try:
            held = _BODY_DECODER.decode(body_bytes)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return None
        if not _same(held, body):
            return None
    size = len(covered)
    if size > MAX_RECORD_BYTES:
        _check_body_size(rid, body)
    digest = hashlib.sha256(covered).hexdigest()
    kept = covered[:-1] if size < _VIEW_ABOVE else memoryview(covered)[:-1]
    line = b"".join((kept, _DIGEST_PREFIX, digest.encode(), b'"}'))
    record = Record(salt=salt, seq=seq, id=rid, at=at, prev=prev, batch=batch, body=held, digest=digest)
    return record, line


_ENCODE_ERRORS: Final = (TypeError, ValueError, msgspec.EncodeError, UnicodeEncodeError)


def _encoded_body(rid: str, body: Any, checked: bool = False) -> tuple[Any, bytes, Any]:
    """`(body, bytes, decoded)`: the body to seal (with registered values at any depth written by their
    codecs), its canonical bytes and the body they decode to (None when they do not decode as the
    body's type: the caller then names the field). Raises NotJsonDataError for a body that holds
    anything but JSON data and registered values, InvalidRecordError for one msgspec cannot encode."""
    try:
        body_bytes = ENCODER.encode(body)
    except RecursionError as exc:
        raise _not_encodable(rid, exc) from exc
    except _ENCODE_ERRORS as exc:
        plain = body if checked else plain_body(body, rid)
        if plain is body:
            raise _not_encodable(rid, exc) from exc
        return _encoded_body(rid, plain, checked=True)
    try:
        decoded = _BODY_DECODER.decode(body_bytes)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return body, body_bytes, None
    if not checked and not _same(decoded, body):  # something became something else: find it
        plain = plain_body(body, rid)
        if plain is not body:
            return _encoded_body(rid, plain, checked=True)
    return body, body_bytes, decoded


def _same(decoded: object, body: object) -> bool:
    """Whether `body` decoded back as itself (a C comparison). Tuples in free-form data read back as
    lists and so compare unequal: the walk then finds nothing to refuse."""
    try:
        return bool(decoded == body)
    except Exception:  # an object's own __eq__ may raise anything: walk the body to name it
        return False


def _not_encodable(rid: str, exc: BaseException) -> InvalidRecordError:
    msg = f"record {rid!r} cannot be encoded: {exc}. Use JSON values only (str, int, float, ...)."
    return InvalidRecordError(msg, record_id=rid)


def _check_body_size(rid: str, body: object) -> None:
    size = len(ENCODER.encode(body))
    if size > MAX_RECORD_BYTES:
        raise _too_large(rid, size)


_OPTIONAL_STR: Final = (str, type(None))


def round_trips(body: object) -> bool:
    """Whether `body` is built only of values its wire type decodes back as themselves: a user or
    assistant message whose fields are exact `str` (or None) values, whose content is a tuple of
    `TextBlock`s of exact `str` text, with no free-form `details` or `usage` (dicts may hold values,
    such as NaN or lists, that decode to something else). Anything else is decoded back by `seal`.
    Checked with exact types (no subclasses), so it is a proof, not a guess; the property test
    (tests/codecs/test_wire_codec.py) holds it to the decoder."""
    kind = type(body)
    if kind is UserMessage:
        if body.details is not None:  # type: ignore[attr-defined]
            return False
    elif kind is AssistantMessage:
        if (
            body.details is not None  # type: ignore[attr-defined]
            or body.usage is not None  # type: ignore[attr-defined]
            or type(body.stop_reason) not in _OPTIONAL_STR  # type: ignore[attr-defined]
            or type(body.model) not in _OPTIONAL_STR  # type: ignore[attr-defined]
        ):
            return False
    else:
        return False
    content = body.content  # type: ignore[attr-defined]
    if type(content) is not tuple or type(body.parent) not in _OPTIONAL_STR:  # type: ignore[attr-defined]
        return False
    for block in content:  # noqa: SIM110 (a loop, not all(genexpr): this runs on every append)
        if type(block) is not TextBlock or type(block.text) is not str:
            return False
    return True


def line_digest(line: bytes) -> str | None:
    """The digest a line claims, if it is well placed and covers the line's other bytes; else None.

    An erased line (its content taken by an erasure) proves its digest from the SHA-256 state its
    content left, over the bytes that stay (`erased_line_digest`)."""
    if len(line) <= _DIGEST_SUFFIX_LEN or not line.endswith(b'"}'):
        return None
    cut = len(line) - _DIGEST_SUFFIX_LEN
    if not line.startswith(_DIGEST_PREFIX, cut):
        return None
    hasher = hashlib.sha256(memoryview(line)[:cut])
    hasher.update(b"}")
    claimed = line[-66:-2].decode("ascii", "replace")
    if hasher.hexdigest() == claimed:
        return claimed
    return erased_line_digest(line) if line.startswith(b'{"erased":') else None


def erased_line_digest(line: bytes, record: Record | None = None) -> str | None:
    """The digest an erased line proves (`waybook.codecs._commitments.erased_digest`), or None: also
    None for a line that does not decode, or is not erased. `record` is the line decoded, if in hand."""
    if record is None:
        try:
            record = _RECORD_DECODER.decode(line)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return None
    return commitments.erased_digest(line, record)


def encode_record(record: Record) -> bytes:
    """The canonical line of a committed record (without a trailing newline): a sealed or erased
    record's in its own layout (docs/erasure.md)."""
    if record.erased is not None:
        return commitments.erased_line_of(record)
    if record.salt is not None:
        return commitments.sealed_line_of(record)
    return ENCODER.encode(record)


# --- decoding -------------------------------------------------------------------------------------


def decode_record(line: bytes, *, where: str | Callable[[], str] = "") -> Record:
    """Decode one canonical line into a Record, upcasting old versions. Fails closed with DecodeError.

    `where` (or a function returning it, evaluated only on failure) says where the line came from.
    """
    try:
        return _RECORD_DECODER.decode(line)
    except msgspec.ValidationError as exc:
        if _is_unknown_kind(exc):
            upcast = _try_legacy(line)
            if upcast is not None:
                return upcast
        raise _typed_error(exc, line, where) from None
    except msgspec.DecodeError as exc:
        raise _typed_error(exc, line, where) from None
    except RecursionError:
        raise _too_deep(where) from None


def decode_record_lines(joined: bytes | memoryview) -> list[Record] | None:
    """Every record of `joined` (lines joined by newlines, each a current-version record) decoded in one
    C call, or None if any line does not decode so (the caller then goes line by line with
    `decode_record`, which upcasts or names the error). Blank lines are skipped and a line may hold
    several values, so a caller that needs one record per line checks the count."""
    try:
        records: list[Record] = _RECORD_DECODER.decode_lines(joined)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    return records


def decode_body(data: bytes, *, where: str = "") -> AnyBody:
    """Decode a body alone (current versions only)."""
    try:
        return _BODY_DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _typed_error(exc, data, where) from None
    except RecursionError:
        raise _too_deep(where) from None


def _too_deep(where: str | Callable[[], str]) -> MalformedJsonError:
    return MalformedJsonError(
        "values are nested too deeply to decode", where=where() if callable(where) else where
    )


def _try_legacy(line: bytes) -> Record | None:
    try:
        old = _ANY_VERSION_DECODER.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    body = old.body
    upcaster = _UPCAST.get(type(body))
    if upcaster is not None:
        body = upcaster(body)
    return Record(
        seq=old.seq, id=old.id, at=old.at, prev=old.prev, batch=old.batch, body=body, digest=old.digest
    )


_INVALID_VALUE = re.compile(r"^Invalid value (.+) - at `(.+)`$")
_MISSING = re.compile(r"^Object missing required field `([^`]+)`(?: - at `([^`]+)`)?$")
_UNKNOWN = re.compile(r"^Object contains unknown field `([^`]+)`(?: - at `([^`]+)`)?$")
_AT = re.compile(r" - at `(.+)`$")


def _is_unknown_kind(exc: msgspec.ValidationError) -> bool:
    match = _INVALID_VALUE.match(str(exc))
    return match is not None and match.group(2) == "$.body.kind"


def _sniff_tag(line: bytes) -> str | None:
    """Best-effort tag of a line that failed to decode, for the error message only."""
    try:
        value = msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None
    if isinstance(value, dict):
        body = value.get("body", value)
        if isinstance(body, dict) and isinstance(body.get("kind"), str):
            return str(body["kind"])
    return None


def _typed_error(exc: Exception, line: bytes, where: str | Callable[[], str]) -> DecodeError:
    if callable(where):
        where = where()
    text = str(exc)
    if isinstance(exc, msgspec.DecodeError) and not isinstance(exc, msgspec.ValidationError):
        if "UTF-8" in text:
            return InvalidUtf8Error("the bytes are not valid UTF-8", where=where)
        return MalformedJsonError(f"not a complete JSON record ({text})", where=where)
    tag = _sniff_tag(line)
    if (match := _INVALID_VALUE.match(text)) and match.group(2).endswith((".kind", ".type")):
        path = match.group(2)
        reason = f"unknown tag {match.group(1)} at {path}; it may come from a newer waybook"
        return UnknownTagError(reason, tag=tag, field=path, where=where)
    if match := _MISSING.match(text):
        path = f"{match.group(2) or '$'}.{match.group(1)}"
        return MissingFieldError(f"required field {path} is missing", tag=tag, field=path, where=where)
    if match := _UNKNOWN.match(text):
        path = f"{match.group(2) or '$'}.{match.group(1)}"
        reason = f"unknown field {path}; strict records refuse fields they do not know"
        return UnknownFieldError(reason, tag=tag, field=path, where=where)
    at = _AT.search(text)
    return WrongTypeError(text, tag=tag, field=at.group(1) if at else None, where=where)


def _typed(line: bytes, rid: object) -> Record:
    """The record of a line just written, decoded as a reader will: a body that does not fit its wire
    type is refused before the line is appended."""
    try:
        return decode_record(line)
    except DecodeError as exc:
        msg = f"record {rid!r} does not match its wire type: {exc.reason}"
        raise InvalidRecordError(msg, record_id=str(rid)) from exc
