"""The memory index a prompt carries: a bounded, deterministic listing of one pinned revision set.

`render_index(state, limit=...)` lists paths, descriptions (from front matter) and sizes of the files of a
memory state folded to a pin (a seq). The result names the pin, the revision (record) id of every file
shown, the limit, and a SHA-256 of the exact bytes: the same pin always renders the same bytes.

`load_index(open_journal, pin=..., policy=...)` is what a host calls per prompt: an unavailable memory
journal is a typed outcome the caller must handle with an explicit policy, never a silent omission.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Literal

import attrs

from waybook.journal._protocol import SessionJournal
from waybook.journal._roles.memory_text import front_matter
from waybook.memory._errors import RequestError
from waybook.memory.working._state import MemoryProjection, MemoryState
from waybook.model._errors import JournalError
from waybook.model._records import MemoryUsed
from waybook.projections._base import replay

if TYPE_CHECKING:
    from waybook._session import Session


@attrs.frozen
class MemoryIndex:
    text: str
    as_of: int
    revisions: tuple[str, ...]
    limit: int
    truncated: int
    sha256: str
    journal: str | None = None
    """The id of the memory journal rendered (its header's journal id)."""
    digest: str = ""
    """The digest of the record at `as_of`: with `as_of`, the head the index was rendered from."""


def render_index(state: MemoryState, *, limit: int = 50) -> MemoryIndex:
    """The index of `state`'s files (sorted by path), at most `limit` entries."""
    files = sorted(state.files.values(), key=lambda f: f.path)
    shown = files[: max(limit, 0)]
    lines = [f"Memory index at seq {state.seq} ({len(files)} files):"]
    for file in shown:
        description = front_matter(file.text).description
        about = f": {' '.join(description.split())}" if description else ""
        lines.append(f"- {file.path} ({file.size} bytes){about}")
    truncated = len(files) - len(shown)
    if truncated:
        lines.append(f"- … and {truncated} more (view /memories to list them)")
    text = "\n".join(lines) + "\n"
    return MemoryIndex(
        text=text,
        as_of=state.seq,
        revisions=tuple(f.revision for f in shown),
        limit=limit,
        truncated=truncated,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        journal=state.journal_id,
        digest=state.digest,
    )


@attrs.frozen
class MemoryUnavailable:
    """The memory journal could not be read. Under the `continue` policy the prompt goes on without memory,
    and this value says so (and why) so the host can record it."""

    reason: str


class MemoryRequiredError(JournalError):
    """The `require` policy: memory could not be read, so the prompt must not go on without it.

    `reason` says why memory was unavailable (what a session records with the refusal)."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


Policy = Literal["require", "continue"]
POLICIES: Final = ("require", "continue")


def load_index(
    open_journal: Callable[[], SessionJournal],
    *,
    pin: int | None = None,
    limit: int = 50,
    policy: Policy,
    session: Session | None = None,
) -> MemoryIndex | MemoryUnavailable:
    """The index at `pin` (default: the journal's head). `policy` decides what an unavailable journal does.

    With `session`, the outcome is recorded there (`waybook.memory.used/1`) before the turn that uses it:
    the head and index digest rendered, the decision to go on without memory (`continue`), or the
    refusal to go on without it (`require`, recorded before MemoryRequiredError is raised).
    """
    if policy not in POLICIES:
        msg = f"unknown unavailable-memory policy {policy!r}; use one of {', '.join(POLICIES)}"
        raise RequestError(msg)
    try:
        outcome = _load(open_journal, pin=pin, limit=limit, policy=policy)
    except MemoryRequiredError as exc:
        if session is not None:  # the refusal is a fact of the session too, recorded before it is raised
            record_memory_use(session, MemoryUnavailable(reason=exc.reason), policy=policy)
        raise
    if session is not None:
        record_memory_use(session, outcome, policy=policy)
    return outcome


def record_memory_use(session: Session, outcome: MemoryIndex | MemoryUnavailable, *, policy: Policy) -> None:
    """Record in `session` what memory the next turn carries (per-turn provenance; `waybook show`)."""
    if isinstance(outcome, MemoryIndex):
        body = MemoryUsed(
            memory=outcome.journal,
            seq=outcome.as_of,
            digest=outcome.digest,
            index_sha256=outcome.sha256,
            policy=policy,
        )
    else:
        body = MemoryUsed(memory=None, unavailable=outcome.reason, policy=policy)
    session.append(body)


def _load(
    open_journal: Callable[[], SessionJournal], *, pin: int | None, limit: int, policy: Policy
) -> MemoryIndex | MemoryUnavailable:
    try:
        journal = open_journal()
        try:
            state = replay(MemoryProjection(), journal, at=pin)
        finally:
            journal.close()
    except (JournalError, OSError) as exc:
        if policy == "require":
            msg = f"memory is required but unavailable: {exc}"
            raise MemoryRequiredError(msg, reason=str(exc)) from exc
        return MemoryUnavailable(reason=str(exc))
    if pin is not None and state.seq != pin:
        reason = f"the memory journal has no seq {pin} (its head is {state.seq})"
        if policy == "require":
            msg = f"memory is required but unavailable: {reason}"
            raise MemoryRequiredError(msg, reason=reason)
        return MemoryUnavailable(reason=reason)
    return render_index(state, limit=limit)
