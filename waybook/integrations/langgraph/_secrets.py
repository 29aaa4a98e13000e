"""Secrets masked in LangGraph values before the saver serializes them (`WaybookSaver(redact=...)`).

A channel value or a pending write is stored through the serde as opaque bytes, so it is masked as a
Python value first: every string in it (lists, tuples, dicts and their keys, and the fields of pydantic
models such as LangChain messages: content, tool call arguments, additional kwargs) goes through the
saver's `SecretMask`. A value with nothing to mask comes back as the very object, so the saver's
comparisons of a checkpoint's lists with its parent's stay cheap; a masked value is a copy of the same
type, so it round-trips through the serde as the original would.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from waybook._masking import SecretMask


def masked_value(mask: SecretMask, value: Any) -> Any:
    """`value` with every string in it masked; `value` itself when nothing changed."""
    if isinstance(value, str):
        return mask.value(value)
    kind = type(value)
    if kind is list or kind is tuple:
        items = [masked_value(mask, item) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if kind is list else tuple(items)
    if kind is dict:
        pairs = [(masked_value(mask, key), masked_value(mask, item)) for key, item in value.items()]
        if all(k is k2 and v is v2 for (k, v), (k2, v2) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    if isinstance(value, BaseModel):
        changes = {}
        for name in type(value).model_fields:
            field = getattr(value, name, None)
            masked = masked_value(mask, field)
            if masked is not field:
                changes[name] = masked
        return value.model_copy(update=changes) if changes else value
    return value
