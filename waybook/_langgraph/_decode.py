"""LangGraph's checkpoint serialization, decoded as data (shared by the import, the saver and the viewer).

LangGraph's own serializer (`JsonPlusSerializer`) rebuilds Python objects from what a checkpoint names:
a msgpack extension value holds a module, a name and arguments, and loading it imports the module and
calls the name (`os.system` works as well as `uuid.UUID`); its `pickle` type runs any code; its `json`
type revives LangChain `lc` constructors. A database is outside data, so waybook never uses that
serializer to import one. This decoder reads the same bytes and returns plain data only:

- msgpack and JSON values that are plain data (maps, arrays, strings, numbers, booleans, null);
- LangChain's message types, as the `message_to_dict` form `{"type": ..., "data": {...}}` the importer
  maps (msgpack's pydantic extensions and JSON `lc` constructors whose id is a message class);
- a short allow-list of value types LangGraph writes for ordinary state (uuid, datetime, decimal, set,
  deque, path, ...), as their plain payload: a string or a list, never the object.

Anything else (an extension naming another module or callable, a `pickle` value, an `lc` constructor
or secret outside the list, an unknown extension code or serialization type) is refused with
`LangGraphDecodeError` naming what was found. Nothing is imported and nothing is called, whatever the
bytes say.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from waybook.model import JournalError

MAX_DEPTH: Final = 200
"""Deepest nesting of arrays and maps a checkpoint value may have (LangGraph state is a few levels)."""

_MESSAGE_MODULES: Final = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "ChatMessage": "chat",
    "FunctionMessage": "function",
    "RemoveMessage": "remove",
    "HumanMessageChunk": "HumanMessageChunk",
    "AIMessageChunk": "AIMessageChunk",
    "SystemMessageChunk": "SystemMessageChunk",
    "ToolMessageChunk": "ToolMessageChunk",
    "ChatMessageChunk": "ChatMessageChunk",
    "FunctionMessageChunk": "FunctionMessageChunk",
}
"""LangChain message class -> its `type` (what `message_to_dict` names it)."""

_MESSAGE_HOMES: Final = frozenset(
    {
        "langchain_core.messages.human",
        "langchain_core.messages.ai",
        "langchain_core.messages.system",
        "langchain_core.messages.tool",
        "langchain_core.messages.chat",
        "langchain_core.messages.function",
        "langchain_core.messages.modifier",
        "langchain_core.messages",
        "langchain.schema.messages",
    }
)

_PLAIN_TYPES: Final = frozenset(
    {
        ("uuid", "UUID"),
        ("decimal", "Decimal"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("collections", "deque"),
        ("datetime", "datetime"),
        ("datetime", "date"),
        ("datetime", "time"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
        ("zoneinfo", "ZoneInfo"),
        ("ipaddress", "IPv4Address"),
        ("ipaddress", "IPv4Interface"),
        ("ipaddress", "IPv4Network"),
        ("ipaddress", "IPv6Address"),
        ("ipaddress", "IPv6Interface"),
        ("ipaddress", "IPv6Network"),
        ("pathlib", "Path"),
        ("pathlib", "PosixPath"),
        ("pathlib", "WindowsPath"),
        ("pathlib._local", "Path"),
        ("pathlib._local", "PosixPath"),
        ("pathlib._local", "WindowsPath"),
        ("re", "compile"),
        ("langchain_core.documents.base", "Document"),
        ("langgraph.types", "Send"),
        ("langgraph.types", "Interrupt"),
        ("langgraph.types", "Command"),
        ("langgraph.types", "Overwrite"),
    }
)
"""Value types decoded to their payload (the string, list or map LangGraph stored), never rebuilt."""

_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**64 - 1

_METHODS: Final = frozenset({("datetime", "datetime", "fromisoformat")})

_CONSTRUCTOR_CODES: Final = (0, 1, 2, 3, 4, 5)  # single arg, args, kwargs, method, pydantic v1, v2
_DELTA_SNAPSHOT: Final = 7


class LangGraphDecodeError(JournalError, ValueError):
    """A checkpoint value that is not plain data: waybook refuses it rather than rebuild it."""


def decode_typed(kind: object, data: object) -> Any:
    """The plain data a `(type, bytes)` pair from a LangGraph database holds; refuses anything else."""
    if not isinstance(kind, str):
        msg = f"a serialization type of {type(kind).__name__}, not text"
        raise LangGraphDecodeError(msg)
    if kind == "null":
        return None
    if not isinstance(data, bytes):
        msg = f"a {kind} value stored as {type(data).__name__}, not bytes"
        raise LangGraphDecodeError(msg)
    if kind in ("bytes", "bytearray"):
        return {"bytes": len(data)}
    if kind == "msgpack":
        return _msgpack(data)
    if kind == "json":
        return _json(data)
    if kind == "pickle":
        msg = "a pickle value (unpickling runs code the file names); waybook imports plain data only"
        raise LangGraphDecodeError(msg)
    msg = f"an unknown serialization type {kind[:40]!r}; waybook reads msgpack and json checkpoints"
    raise LangGraphDecodeError(msg)


def decode_json(data: object) -> Any:
    """A JSON column (a checkpoint's metadata) as plain data: `lc` objects are refused as in `json`."""
    if data is None:
        return {}
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if not isinstance(data, bytes):
        msg = f"metadata stored as {type(data).__name__}, not JSON text"
        raise LangGraphDecodeError(msg)
    return _json(data)


def _msgpack(data: bytes) -> Any:
    try:
        import ormsgpack
    except ImportError:
        msg = "reading LangGraph checkpoints needs ormsgpack: pip install 'waybook[langgraph]'"
        raise LangGraphDecodeError(msg) from None
    refused: list[str] = []

    def ext_hook(code: int, payload: bytes) -> Any:
        try:
            return _extension(code, payload)
        except LangGraphDecodeError as exc:
            refused.append(str(exc))
            raise

    def _extension(code: int, payload: bytes) -> Any:
        if code == _DELTA_SNAPSHOT:
            return ormsgpack.unpackb(payload, ext_hook=ext_hook, option=ormsgpack.OPT_NON_STR_KEYS)
        if code not in _CONSTRUCTOR_CODES:
            msg = f"a msgpack extension with code {code}, which is not plain data"
            raise LangGraphDecodeError(msg)
        parts = ormsgpack.unpackb(payload, ext_hook=ext_hook, option=ormsgpack.OPT_NON_STR_KEYS)
        if not isinstance(parts, list) or len(parts) < 3 or not all(isinstance(p, str) for p in parts[:2]):
            msg = f"a msgpack extension (code {code}) that is not (module, name, value)"
            raise LangGraphDecodeError(msg)
        return _named(code, parts)

    try:
        value = ormsgpack.unpackb(data, ext_hook=ext_hook, option=ormsgpack.OPT_NON_STR_KEYS)
    except (ValueError, TypeError, RecursionError) as exc:
        if refused:
            raise LangGraphDecodeError(refused[0]) from None
        msg = f"a msgpack value that does not decode ({exc})"
        raise LangGraphDecodeError(msg) from None
    return plain(value)


def _named(code: int, parts: list[Any]) -> Any:
    module, name, payload = parts[0], parts[1], parts[2]
    if name in _MESSAGE_MODULES and module in _MESSAGE_HOMES and code in (2, 4, 5):
        return _message(name, payload)
    if code == 3:
        method = parts[3] if len(parts) > 3 else None
        if (module, name, method) in _METHODS:
            return payload
        msg = (
            f"a msgpack extension calling {_dotted(module, name)}.{str(method)[:40]}, which is not plain data"
        )
        raise LangGraphDecodeError(msg)
    if (module, name) in _PLAIN_TYPES:
        if (module, name) == ("uuid", "UUID") and isinstance(payload, str) and len(payload) == 32:
            return f"{payload[:8]}-{payload[8:12]}-{payload[12:16]}-{payload[16:20]}-{payload[20:]}"
        return payload
    msg = (
        f"a msgpack extension naming {_dotted(module, name)}; waybook imports plain data and LangChain "
        "messages only and never imports or calls what a checkpoint names"
    )
    raise LangGraphDecodeError(msg)


def _message(name: str, payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        msg = f"a LangChain {name} whose fields are {type(payload).__name__}, not a map"
        raise LangGraphDecodeError(msg)
    kind = payload.get("type")
    return {"type": kind if isinstance(kind, str) else _MESSAGE_MODULES[name], "data": payload}


def _json(data: bytes) -> Any:
    refused: list[str] = []

    def hook(value: dict[str, Any]) -> Any:
        if "lc" not in value:
            return value
        ids = value.get("id")
        name = ids[-1] if isinstance(ids, list) and ids and isinstance(ids[-1], str) else None
        home = ".".join(str(i) for i in ids[:-1]) if isinstance(ids, list) else ""
        if value.get("type") == "constructor" and name in _MESSAGE_MODULES and home in _MESSAGE_HOMES:
            kwargs = value.get("kwargs")
            return _message(name, kwargs if kwargs is not None else {})
        shown = ".".join(str(i)[:60] for i in ids[:8]) if isinstance(ids, list) else repr(ids)[:60]
        refused.append(
            f"a JSON lc {str(value.get('type'))[:20]} naming {shown}; waybook imports plain data and "
            "LangChain messages only"
        )
        raise LangGraphDecodeError(refused[-1])

    try:
        text = data.decode("utf-8")
        value = json.loads(text, object_hook=hook)
    except LangGraphDecodeError:
        raise
    except (ValueError, RecursionError) as exc:
        msg = f"a JSON value that does not decode ({str(exc)[:80]})"
        raise LangGraphDecodeError(msg) from None
    return plain(value)


def plain(value: Any, depth: int = 0) -> Any:
    """`value` as JSON-safe data: non-text keys as text, non-finite numbers as text; bounded depth."""
    if depth > MAX_DEPTH:
        msg = f"a value nested deeper than {MAX_DEPTH} levels"
        raise LangGraphDecodeError(msg)
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return value if _INT_MIN <= value <= _INT_MAX else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [plain(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {
            key if isinstance(key, str) else str(key): plain(item, depth + 1) for key, item in value.items()
        }
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"bytes": len(value)}
    msg = f"a value of type {type(value).__name__}, which is not plain data"
    raise LangGraphDecodeError(msg)


def _dotted(module: str, name: str) -> str:
    return f"{module[:80]}.{name[:80]}"
