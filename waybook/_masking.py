"""Secrets masked before a record is written: `Session(..., redact=True)` and `waybook import --redact`.

The detector is the one `export --redact` uses (waybook._redact): each secret becomes `[REDACTED:<kind>]`
in the record's content (text, thinking, tool call arguments, a compaction's summary, custom data, an
annotation's data) and details, before the record is sealed or its content offloaded to a blob, so the
secret's bytes never reach the journal, the store or its blobs. A message record says what was masked
where in `details["waybook.redacted"]` (docs/journal-contract.md): one entry per place and kind, in
order,

    {"field": "content", "block": 0, "kind": "github-token", "count": 1}
    {"field": "details", "kind": "password", "count": 2}

Custom entries, annotations and headers (their metadata) have no details: the masks in them are the
record. Masking is
idempotent (masked text is never matched again), so re-importing a grown source masks it the same way.
A masked thinking block loses its provider signature: it covered the text as written and matches nothing
after masking (Claude's carries the thinking itself, encrypted for the provider), and a context leaves
unsigned thinking out (waybook.projections).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Final

import msgspec

from waybook._redact import Redactor, RedactPatternError, compile_patterns
from waybook.model import (
    Annotation,
    AssistantMessage,
    Compaction,
    CustomEntry,
    Header,
    InvalidArgumentError,
    NewRecord,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

__all__ = ["REDACTED", "Found", "Redact", "SecretMask", "secret_mask"]

REDACTED: Final = "waybook.redacted"
"""The details key that lists what was masked where."""

Found = list[dict[str, Any]]
"""What was masked where: `{"field", ["block",] "kind", "count"}` entries, in order."""

_WITH_DETAILS: Final = (UserMessage, AssistantMessage, SystemMessage, ToolResult, Compaction)


class SecretMask:
    """Masks secrets in content and records; `patterns` are extra regular expressions tried after the
    built-in detector (as `export --redact-pattern`). Thread-safe (an integration's writers share one):
    each masking holds a lock, so what it reports found is its own."""

    def __init__(self, patterns: Sequence[str] = ()) -> None:
        try:
            extra = compile_patterns(patterns)
        except RedactPatternError as exc:
            msg = f"redact: {exc}"
            raise InvalidArgumentError(msg) from exc
        self._redactor = Redactor(extra=extra)
        self._lock = threading.Lock()

    def content(self, content: Any) -> tuple[Any, Found]:
        """`content` (a tuple of blocks) with its secrets masked, and what was masked where."""
        if type(content) is not tuple:
            return content, []
        found: Found = []
        blocks = []
        for index, block in enumerate(content):
            masked, counts = self._counted(lambda b: _block(self._redactor, b), block)
            blocks.append(masked)
            found += [{"field": "content", "block": index, "kind": k, "count": n} for k, n in counts]
        if not found:
            return content, []
        return tuple(blocks), found

    def body(self, body: Any, found: Found = ()) -> Any:  # type: ignore[assignment]
        """`body` with every secret in its content and details masked; `found` (what masking its content
        before offloading found) and what this finds are listed in its details."""
        found = list(found)
        changes: dict[str, Any] = {}
        if type(body) in _WITH_DETAILS or type(body) is CustomEntry:
            content, more = self.content(body.content) if hasattr(body, "content") else (None, [])
            if more:
                changes["content"] = content
                found += more
        if type(body) is Compaction:
            summary, counts = self._counted(self._redactor.text, body.summary)
            if counts:
                changes["summary"] = summary
                found += [{"field": "summary", "kind": k, "count": n} for k, n in counts]
        if type(body) is Header and body.metadata:
            metadata, counts = self._counted(self._redactor.value, body.metadata)
            if counts:
                changes["metadata"] = metadata
        if type(body) in (CustomEntry, Annotation) and body.data is not None:
            data, counts = self._counted(self._redactor.value, body.data)
            if counts:
                changes["data"] = data
        if type(body) in _WITH_DETAILS:
            details = body.details
            if details:
                masked, counts = self._counted(self._redactor.value, details)
                if counts:
                    details = masked
                    found += [{"field": "details", "kind": k, "count": n} for k, n in counts]
            if found:
                changes["details"] = {**(details or {}), REDACTED: found}
        return msgspec.structs.replace(body, **changes) if changes else body

    def value(self, value: Any) -> Any:
        """A JSON value with its secrets masked as details and custom data are (`value` itself when
        nothing changed): what a writer compares a given value with the stored, masked one by."""
        with self._lock:
            return self._redactor.value(value)

    def secrets_in(self, texts: Sequence[str]) -> list[str]:
        """The kinds of secret still in `texts` (nothing masked or counted): a writer's last check of
        what it is about to store."""
        with self._lock:
            return self._redactor.kinds_in(texts)

    def record(self, record: NewRecord) -> NewRecord:
        """`record` with its body masked (`body`)."""
        body = self.body(record.body)
        return record if body is record.body else msgspec.structs.replace(record, body=body)

    def _counted(self, mask: Callable[[Any], Any], value: Any) -> tuple[Any, list[tuple[str, int]]]:
        with self._lock:
            before = dict(self._redactor.counts)
            masked = mask(value)
            after = self._redactor.counts
            counts = [
                (kind, n - before.get(kind, 0)) for kind, n in after.items() if n != before.get(kind, 0)
            ]
        return masked, sorted(counts)


Redact = bool | Sequence[str] | SecretMask
"""A writer's `redact` option: True (the built-in detector), False, or extra patterns (or a mask)."""


def _block(redactor: Redactor, block: Any) -> Any:
    if type(block) is TextBlock:
        text = redactor.text(block.text)
        return block if text is block.text else msgspec.structs.replace(block, text=text)
    if type(block) is ThinkingBlock:
        thinking = redactor.text(block.thinking)
        if thinking is block.thinking:
            return block
        return msgspec.structs.replace(block, thinking=thinking, signature=None)  # it signed the secret
    if type(block) is ToolCallBlock:
        arguments = redactor.value(block.arguments)
        return block if arguments is block.arguments else msgspec.structs.replace(block, arguments=arguments)
    return block  # images and blob references: bytes the detector does not read


def secret_mask(redact: object, *, who: str) -> SecretMask | None:
    """The mask a writer's `redact` option asks for: False (none), True (the built-in detector), or a
    list of extra patterns (the built-in detector and those). InvalidArgumentError for anything else
    or a pattern that does not compile."""
    if redact is False or redact is None:
        return None
    if redact is True:
        return SecretMask()
    if isinstance(redact, SecretMask):
        return redact
    if isinstance(redact, (list, tuple)) and all(type(p) is str for p in redact):
        return SecretMask(redact)
    msg = (
        f"{who}'s redact is True (mask secrets with the built-in detector), False, or a list of extra "
        f"regular expressions to mask too; not {redact!r:.60}"
    )
    raise InvalidArgumentError(msg)
