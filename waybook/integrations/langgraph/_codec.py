"""How LangGraph values become JSON in a checkpoint record, and back.

Channel values and pending writes go through the saver's serde (LangGraph's `JsonPlusSerializer` by
default, or the caller's, an encrypting one included) and are stored as `[type, base64]`, so every value
comes back exactly as LangGraph wrote it. The checkpoint's own fields and its metadata are stored as
plain JSON when they are plain JSON (so an auditor reads them in the journal), else through the serde.
"""

from __future__ import annotations

import base64
import math
from typing import Any, Protocol

from waybook.integrations.langgraph._errors import CheckpointValueError
from waybook.integrations.langgraph._state import Blob

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


class TypedSerde(Protocol):
    def dumps_typed(self, obj: Any) -> tuple[str, bytes]: ...

    def loads_typed(self, data: tuple[str, bytes]) -> Any: ...


def dump(serde: TypedSerde, value: Any) -> Blob:
    kind, data = serde.dumps_typed(value)
    return [kind, base64.b64encode(data).decode("ascii")]


def load(serde: TypedSerde, blob: Any) -> Any:
    """The value `dump` stored as `blob`; a blob that is not `[type, base64]` is a CheckpointValueError."""
    if not (type(blob) is list and len(blob) == 2 and type(blob[0]) is str and type(blob[1]) is str):
        raise CheckpointValueError(str(type(blob).__name__), "not a [type, base64] pair")
    kind, data = blob
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError as exc:
        raise CheckpointValueError(kind, f"its bytes are not base64 ({exc})") from None
    return serde.loads_typed((kind, raw))


def is_plain_json(value: Any) -> bool:
    """True if `value` survives a JSON round trip unchanged (lists, str-keyed dicts, finite numbers)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(_INT_MIN <= value <= _INT_MAX)
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(is_plain_json(item) for item in value)
    if kind is dict:
        return all(type(key) is str and is_plain_json(item) for key, item in value.items())
    return False


def dump_field(serde: TypedSerde, data: dict[str, Any], name: str, value: Any) -> None:
    """Store `value` under `name` as JSON if it is plain JSON, else under `name_blob` via the serde."""
    if is_plain_json(value):
        data[name] = value
    else:
        data[f"{name}_blob"] = dump(serde, value)


def load_field(serde: TypedSerde, data: dict[str, Any], name: str) -> Any:
    """The value `dump_field` stored, as a fresh copy: LangGraph changes what a saver returns in place."""
    if f"{name}_blob" in data:
        return load(serde, data[f"{name}_blob"])
    return _copy(data.get(name))


def _copy(value: Any) -> Any:
    if type(value) is dict:
        return {key: _copy(item) for key, item in value.items()}
    if type(value) is list:
        return [_copy(item) for item in value]
    return value
