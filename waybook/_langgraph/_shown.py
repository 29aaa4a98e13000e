"""A `WaybookSaver` checkpoint record's data as a reader is shown it: every stored value decoded as data.

The saver stores channel values as `[serde type, base64]` (so LangGraph gets back exactly what it wrote);
a person reading the journal (`waybook view`, `serve`) is shown what those bytes hold instead, decoded by
the safe decoder (`_decode`: plain data and LangChain messages only, nothing imported or called). A value
the decoder refuses (an encrypting serde's, a type outside its list) is shown as what it is and its size,
never as base64.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from waybook._langgraph._decode import LangGraphDecodeError, decode_typed

_STORED: tuple[str, ...] = ("set", "add")


def shown_checkpoint(data: Any) -> Any:
    """`data` of a `langgraph.checkpoint` record with each `[type, base64]` value decoded."""
    if not isinstance(data, dict):
        return data
    shown = dict(data)
    for name in ("checkpoint", "metadata"):
        if f"{name}_blob" in shown:
            shown[name] = shown_blob(shown.pop(f"{name}_blob"))
    values = shown.get("values")
    if isinstance(values, dict):
        shown["values"] = {channel: _shown_ref(ref) for channel, ref in values.items()}
    return shown


def _shown_ref(ref: Any) -> Any:
    if not isinstance(ref, dict):
        return ref
    return {key: shown_blob(value) if key in _STORED else value for key, value in ref.items()}


def shown_blob(blob: Any) -> Any:
    """The data a stored `[type, base64]` value holds, or a note saying why it is not shown."""
    if not (isinstance(blob, list) and len(blob) == 2 and all(isinstance(part, str) for part in blob)):
        return blob
    kind, text = blob
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return {"not shown": "a stored value that is not base64"}
    try:
        return decode_typed(kind, raw)
    except LangGraphDecodeError as exc:
        return {"not shown": str(exc), "type": kind[:40], "bytes": len(raw)}
