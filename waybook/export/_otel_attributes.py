"""What a record says about a span beyond its shape: the provider a model name suggests, the memory a
prompt carried, a memory write's receipt. Pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from waybook.export._otel_content import Attributes
from waybook.export._otel_names import gen_ai
from waybook.model import MemoryPinMoved, MemoryUsed


def provider_of(model: str | None) -> str | None:
    """`gen_ai.provider.name` guessed from a model's name (the conventions ask for the instrumentation's
    best knowledge); None when the name says nothing."""
    name = (model or "").lower()
    values = gen_ai.GenAiProviderNameValues
    if "claude" in name:
        return values.ANTHROPIC.value
    if name.startswith(("gpt-", "gpt4", "o1", "o3", "o4", "chatgpt", "codex")):
        return values.OPENAI.value
    if "gemini" in name:
        return values.GCP_GEMINI.value
    return None


def memory_attributes(body: MemoryUsed | MemoryPinMoved) -> Attributes:
    """What memory the next model call's prompt carried, or the canonical memory pin it read from."""
    found: Attributes = {}
    if isinstance(body, MemoryUsed):
        values: dict[str, Any] = {
            "journal": body.memory,
            "seq": body.seq,
            "digest": body.digest,
            "sha256": body.block_sha256 or body.index_sha256,
            "unavailable": body.unavailable,
        }
        prefix = "waybook.memory.used"
    else:
        values = {
            "journal": body.canonical,
            "seq": body.new_seq,
            "digest": body.new_digest,
            "receipt": body.receipt,
            "status": body.status,
        }
        prefix = "waybook.memory.pin"
    for key, value in values.items():
        if value is not None:
            found[f"{prefix}.{key}"] = value
    return found


def receipt_attributes(details: Mapping[str, Any] | None) -> Attributes:
    """A memory write's receipt in a tool result (`Receipt.as_details()`): where the write is proven."""
    receipt = (details or {}).get("memory_receipt")
    if not isinstance(receipt, Mapping):
        return {}
    found: Attributes = {}
    for key in ("journal", "seq", "digest", "content_digest"):
        value = receipt.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            found[f"waybook.memory.receipt.{key}"] = value
    return found
