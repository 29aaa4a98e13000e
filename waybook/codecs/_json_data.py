"""What a body's free-form fields may hold: plain JSON data or registered values, at every depth.

A record's free-form fields (custom and annotation `data`, `details`, a header's `metadata`, a tool
call's `arguments`) are stored as JSON. msgspec encodes far more than JSON data (attrs classes,
dataclasses, datetimes, UUIDs, Decimals, sets, bytes, enums) and writes NaN and infinities as `null`,
so encoding alone would store a class's attribute layout or a silently changed value. This module
decides, with the path to the first offence (`data.steps[0]`), and fails closed.

Plain JSON data is None, a bool, an int, a str, a finite float (subclasses of these too: an IntEnum is
stored as its int), a list or tuple of plain data, and a dict with str keys and plain values. An object
whose class is registered in the default value registry (`waybook.codecs.register_value`) is stored as
its wire form, `{"$value": tag, "fields": ...}`, at any depth. Anything else is refused: a typed error,
and nothing is written.

`seal` calls `plain_body` only when a body's bytes did not decode back as the body (or did not encode),
so plain data pays no Python walk (waybook.codecs._wire).
"""

from __future__ import annotations

import datetime
import decimal
import math
import uuid
from collections.abc import Callable
from typing import Any, Final

import msgspec

from waybook.codecs._values import DEFAULT_REGISTRY, NotJsonDataError, UnregisteredValueError
from waybook.model import (
    Annotation,
    AssistantMessage,
    Compaction,
    CustomEntry,
    Header,
    SystemMessage,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

__all__ = ["MAX_DEPTH", "json_data", "plain_body", "plain_data"]

MAX_DEPTH: Final = 1000
"""How deeply free-form data may nest: deeper data is refused (as decoding it back would be)."""

_FREE_FIELDS: Final[dict[type, tuple[tuple[str, str], ...]]] = {
    Header: (("metadata", "metadata"),),
    UserMessage: (("details", "details"),),
    AssistantMessage: (("details", "details"),),
    SystemMessage: (("details", "details"),),
    ToolResult: (("details", "details"),),
    Compaction: (("details", "details"),),
    CustomEntry: (("data", "data"),),
    Annotation: (("data", "data"),),
}
"""Each body type's free-form fields: (attribute, wire name). Content blocks are walked for tool calls."""

_CONTENT_TYPES: Final = (UserMessage, AssistantMessage, SystemMessage, ToolResult, CustomEntry)

_LEAVES: Final = (str, int, type(None))  # bool is an int


def plain_body(body: Any, record_id: str) -> Any:
    """`body` with every free-form field checked at every depth: the same object when nothing needs
    encoding (tuples may stay tuples: they are JSON arrays), a copy with each registered value replaced
    by its wire form otherwise. Raises NotJsonDataError (UnregisteredValueError for an object of an
    unregistered class) naming the record and the path to the first offence."""
    changes: dict[str, Any] = {}
    for attribute, wire in _FREE_FIELDS.get(type(body), ()):
        value = getattr(body, attribute)
        checked = _walked(value, wire, record_id)
        if checked is not value:
            changes[attribute] = checked
    if isinstance(body, _CONTENT_TYPES):
        content = body.content
        if isinstance(content, tuple | list):
            blocks = list(content)
            for index, block in enumerate(blocks):
                if type(block) is ToolCallBlock:
                    path = f"content[{index}].arguments"
                    arguments = _walked(block.arguments, path, record_id)
                    if arguments is not block.arguments:
                        blocks[index] = msgspec.structs.replace(block, arguments=arguments)
            if any(new is not old for new, old in zip(blocks, content, strict=True)):
                changes["content"] = tuple(blocks)
    return msgspec.structs.replace(body, **changes) if changes else body


def json_data(value: Any, *, path: str = "data") -> Any:
    """`value` as a record will store it: JSON data as given, registered values (at any depth) as their
    wire form; NotJsonDataError naming `path` and where under it for anything else. Plain data is
    proved by one encode, decode and C comparison; only data that differs is walked."""
    if type(value) in _LEAVES:
        return value
    try:
        same = _DECODER.decode(_ENCODER.encode(value)) == value
    except Exception:  # not encodable, or an __eq__ that raises: the walk names it
        same = False
    return value if same else _walked(value, path, "")


_ENCODER: Final = msgspec.json.Encoder(order="deterministic")
_DECODER: Final = msgspec.json.Decoder()


def plain_data(value: Any, path: str = "data", *, record_id: str = "") -> Any:
    """`value` as JSON data: the same object when it is plain, a copy with registered values replaced
    by their wire form otherwise; NotJsonDataError naming `path` for anything else."""
    return _walked(value, path, record_id)


def _walked(value: Any, path: str, record_id: str) -> Any:
    try:
        return _checked(value, path, record_id, 0)
    except RecursionError:
        msg = f"{path} nests too deeply to be checked; flatten it"
        raise NotJsonDataError(_where(record_id) + msg + _NOTHING, path=path, record_id=record_id) from None


def _checked(value: Any, path: str, record_id: str, depth: int) -> Any:
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise _not_finite(value, path, record_id)
    if depth >= MAX_DEPTH:
        msg = f"{path} nests deeper than {MAX_DEPTH} levels; flatten it"
        raise NotJsonDataError(_where(record_id) + msg + _NOTHING, path=path, record_id=record_id)
    if kind is dict:
        return _checked_dict(value, path, record_id, depth)
    if kind is list or kind is tuple:
        return _checked_list(value, path, record_id, depth)
    if DEFAULT_REGISTRY.tag_of(kind) is not None:
        try:
            wire = DEFAULT_REGISTRY.encode(value)
        except NotJsonDataError as exc:
            raise _inside(exc, path, record_id) from None
        wire["fields"] = _checked(wire["fields"], f"{path}.fields", record_id, depth + 1)
        return wire
    if isinstance(value, str | int):  # subclasses: a StrEnum, an IntEnum are stored as their value
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _not_finite(value, path, record_id)
    if isinstance(value, dict):
        return _checked_dict(value, path, record_id, depth)
    if isinstance(value, list | tuple):
        return _checked_list(value, path, record_id, depth)
    raise _unregistered(value, path, record_id)


def _checked_dict(value: dict[Any, Any], path: str, record_id: str, depth: int) -> Any:
    changed: dict[str, Any] | None = None
    for key, item in value.items():
        if not isinstance(key, str):
            msg = (
                f"{path} has the key {key!r} ({type(key).__name__}); JSON object keys are strings: "
                "use str keys"
            )
            raise NotJsonDataError(_where(record_id) + msg + _NOTHING, path=path, record_id=record_id)
        checked = _checked(item, _member(path, key), record_id, depth + 1)
        if checked is not item:
            changed = changed if changed is not None else dict(value)
            changed[key] = checked
    return value if changed is None else changed


def _checked_list(value: list[Any] | tuple[Any, ...], path: str, record_id: str, depth: int) -> Any:
    changed: list[Any] | None = None
    for index, item in enumerate(value):
        checked = _checked(item, f"{path}[{index}]", record_id, depth + 1)
        if checked is not item:
            changed = changed if changed is not None else list(value)
            changed[index] = checked
    return value if changed is None else changed


def _member(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]"


_NOTHING: Final = "; nothing was written"

_ADVICE: Final[tuple[tuple[Any, str], ...]] = (
    (datetime.datetime | datetime.date | datetime.time, "store it as an ISO 8601 string"),
    (datetime.timedelta, "store it as a number of seconds"),
    (uuid.UUID | decimal.Decimal, "store it as a string"),
    (set | frozenset, "store a list"),
    (bytes | bytearray | memoryview, "store bytes as a blob (store.blobs.put) and record its reference"),
)


def _unregistered(value: object, path: str, record_id: str) -> UnregisteredValueError:
    name = type(value).__qualname__
    advice = next((text for kinds, text in _ADVICE if isinstance(value, kinds)), "store JSON data")
    msg = (
        f"{path} is a {name}, which is not JSON data and has no registered value codec: {advice}, or "
        f"register its class (waybook.codecs.register_value({name}, 'myapp.name/1'))"
    )
    return UnregisteredValueError(_where(record_id) + msg + _NOTHING, path=path, record_id=record_id)


def _not_finite(value: float, path: str, record_id: str) -> NotJsonDataError:
    msg = f"{path} is {value!r}; JSON has no NaN or infinity: store null, a string or a finite number"
    return NotJsonDataError(_where(record_id) + msg + _NOTHING, path=path, record_id=record_id)


def _inside(exc: NotJsonDataError, path: str, record_id: str) -> NotJsonDataError:
    """An error from inside a registered value's codec, with the path to the value in front of it."""
    inner = exc.path
    where = f"{path}.fields" + (f" ({inner})" if inner else "")
    cls: Callable[..., NotJsonDataError] = type(exc)
    return cls(f"{_where(record_id)}{where}: {exc.reason}", path=path, record_id=record_id)


def _where(record_id: str) -> str:
    return f"record {record_id!r}: " if record_id else ""
