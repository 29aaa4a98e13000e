"""Context accounting by request-context revision: how many tokens the context holds, and whether that
count can still be trusted.

Compaction decides from token counts, and counting messages alone is wrong: the system prompt, the tools,
the operations offered, the activation state (skills, the pinned memory contribution) and the model all
take part in what a request costs. Every request has a *revision*: the digest of its plan's parts (each
part's own digest, never the bytes sent) and of its transcript position (the node the request was built
at). A runtime records the plan with the assistant turn whose usage measured it
(`Session.turn(..., request=RequestContext(...))`), in the message's `details.request`:

    {"revision": "<64 hex>", "parts": {"model": "m-1", "system": "<64 hex>", "tools": ..., ...},
     "transcript": "<node id>"}

`context_usage(records, leaf)` answers "tokens in the context at this leaf, and is that count still
valid": valid while the path from the measured turn to the leaf only appends (a transcript append keeps
the count a valid base); a compaction or an exclusion on the path, a change of the pinned memory, or a
plan whose parts differ from the measured one (`plan=`: a tool, prompt, operation, activation or model
change) invalidates it and forces a full estimate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from waybook.codecs import digest_of
from waybook.model import (
    AssistantMessage,
    Compaction,
    ContextExclusion,
    LeafMoved,
    MemoryUsed,
    Node,
    Record,
    Reset,
    UnknownNodeError,
)

REQUEST_KEY: Final = "request"
"""The `details` key of an assistant message holding the request context its usage measured."""

SUMMARIZED_KEY: Final = "summarized_revision"
"""The `details` key of a compaction naming the revision of the context it summarized."""

PART_NAMES: Final = ("model", "system", "tools", "operations", "activation", "memory")

TOTAL_KEYS: Final = ("total", "total_tokens", "totalTokens")
COUNTED_KEYS: Final = ("input", "output", "cache_read", "cache_write", "cacheRead", "cacheWrite")
COUNTED_ALIASES: Final = (
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("cache_read_input_tokens", "cache_read"),
    ("cache_creation_input_tokens", "cache_write"),
)


@attrs.frozen
class RequestContext:
    """The parts of the plan a request to a model was built from (not the bytes sent).

    `system` the system prompt (text or blocks), `tools` the tool definitions, `operations` what else
    the request offers or sets (JSON), `activation` the activation state (activated skills, modes; JSON),
    `memory` the SHA-256 of the pinned memory contribution (the index or compiled block the prompt
    carries; `MemoryUsed.index_sha256`). Each part is kept as its digest.
    """

    model: str | None = None
    system: Any = None
    tools: Any = ()
    operations: Any = ()
    activation: Any = None
    memory: str | None = None

    def parts(self) -> dict[str, str | None]:
        """Each part's digest (the model and the memory digest as given)."""
        return {
            "model": self.model,
            "system": digest_of(self.system),
            "tools": digest_of(self.tools),
            "operations": digest_of(self.operations),
            "activation": digest_of(self.activation),
            "memory": self.memory,
        }

    def revision(self, transcript: str | None) -> str:
        """The revision of a request built from this plan at the transcript position `transcript`."""
        return revision_of(self.parts(), transcript)

    def describe(self, transcript: str | None) -> dict[str, Any]:
        """What an assistant message records in `details.request`."""
        parts = self.parts()
        return {"revision": revision_of(parts, transcript), "parts": parts, "transcript": transcript}


def revision_of(parts: Mapping[str, Any], transcript: str | None) -> str:
    return digest_of({"parts": dict(parts), "transcript": transcript})


@attrs.frozen
class ContextUsage:
    """Tokens in the context at a leaf, as the last usage observation on its path measured them.

    `tokens` is that measurement (None when the path has none); it covers the context up to and including
    `measured_at`, and `appended` are the nodes after it on the path (estimate them to add). `valid` says
    whether the measurement still counts: False forces a full estimate, and `reason` says why. `revision`
    is the measured request's revision (None for a usage recorded without its request context).
    """

    tokens: int | None
    valid: bool
    revision: str | None
    measured_at: str | None = None
    appended: tuple[str, ...] = ()
    reason: str = ""
    parts: Mapping[str, Any] | None = None
    memory: str | None = None
    """The pinned memory contribution in effect (the last `MemoryUsed`'s digest), as of the records."""


def usage_tokens(usage: Mapping[str, Any] | None) -> int | None:
    """The tokens a usage observation counts: its total when given, else input + output + cache."""
    if not usage:
        return None
    for key in TOTAL_KEYS:
        if type(usage.get(key)) is int:
            return int(usage[key])
    counted = {key: usage[key] for key in COUNTED_KEYS if type(usage.get(key)) is int}
    for alias, key in COUNTED_ALIASES:
        if type(usage.get(alias)) is int:
            counted.setdefault(key, usage[alias])
    return sum(counted.values()) if counted else None


def request_of(message: AssistantMessage) -> Mapping[str, Any] | None:
    """The request context an assistant message recorded, when it is well formed."""
    request = (message.details or {}).get(REQUEST_KEY)
    if not isinstance(request, Mapping) or not isinstance(request.get("revision"), str):
        return None
    if not isinstance(request.get("parts"), Mapping):
        return None
    return request


def context_usage(
    records: Iterable[Record], leaf: str | None = None, *, plan: RequestContext | None = None
) -> ContextUsage:
    """Tokens in the context at `leaf` (default: the leaf after the records) and whether the count is still
    valid for `plan`, the request about to be sent (default: judge by the records alone)."""
    parents: dict[str, str | None] = {}
    bodies: dict[str, Any] = {}
    current: str | None = None
    memory: str | None = None
    for record in records:
        body = record.body
        if isinstance(body, Node):
            parents[record.id] = body.parent
            bodies[record.id] = body
            current = record.id
        elif isinstance(body, LeafMoved):
            current = body.to_leaf
        elif isinstance(body, Reset):
            current = None
        elif isinstance(body, MemoryUsed):
            memory = body.block_sha256 or body.index_sha256
    if leaf is not None and leaf not in parents:
        msg = f"context_usage: {leaf!r} is not a node of these records; give a node id (or leaf=None)"
        raise UnknownNodeError(msg, record_id=leaf)
    at = current if leaf is None else leaf
    path: list[str] = []
    node = at
    while node is not None and node in parents:
        path.append(node)
        node = parents[node]
    path.reverse()
    return _measure(path, bodies, memory, plan)


def _measure(
    path: list[str], bodies: Mapping[str, Any], memory: str | None, plan: RequestContext | None
) -> ContextUsage:
    measured = None
    for index in range(len(path) - 1, -1, -1):
        body = bodies[path[index]]
        if isinstance(body, AssistantMessage) and usage_tokens(body.usage) is not None:
            measured = index
            break
    if measured is None:
        return ContextUsage(
            None, valid=False, revision=None, reason="no usage is recorded on the path", memory=memory
        )
    message = bodies[path[measured]]
    request = request_of(message)
    tokens = usage_tokens(message.usage)
    appended = tuple(path[measured + 1 :])
    revision = None if request is None else str(request["revision"])
    parts = None if request is None else dict(request["parts"])
    usage = ContextUsage(tokens, True, revision, path[measured], appended, "", parts, memory)
    if request is None:
        return attrs.evolve(usage, valid=False, reason="the usage was recorded without its request context")
    for node in appended:
        body = bodies[node]
        if isinstance(body, Compaction):
            return attrs.evolve(usage, valid=False, reason=f"compacted at {node} after the measurement")
        if isinstance(body, ContextExclusion):
            return attrs.evolve(usage, valid=False, reason=f"{body.target} was excluded at {node}")
    if memory is not None and parts is not None and parts.get("memory") not in (None, memory):
        return attrs.evolve(usage, valid=False, reason="the pinned memory changed after the measurement")
    if plan is not None:
        now = plan.parts()
        changed = [name for name in PART_NAMES if now.get(name) != (parts or {}).get(name)]
        if changed:
            return attrs.evolve(usage, valid=False, reason=f"the request's {', '.join(changed)} changed")
    return usage
