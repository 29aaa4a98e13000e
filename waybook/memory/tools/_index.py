"""The memory index a prompt carries: a bounded, deterministic listing of one pinned revision set.

`render_index(state, limit=...)` lists paths, descriptions (from front matter) and sizes of the files of a
memory state folded to a pin (a seq). The result names the pin, the revision (record) id of every file
shown, the limit, and a SHA-256 of the exact bytes: the same pin always renders the same bytes.

`load_index(open_journal, pin=..., policy=...)` is what a host calls per prompt: an unavailable memory
journal is a typed outcome the caller must handle with an explicit policy, never a silent omission. The
policy is the host's decision: `"require"`, `"continue"`, or a callable that is given the reason and
returns one of them (it may look at whatever it likes: the turn, the agent, how long memory has been out).

The record a session keeps (`waybook.memory.used/1`) names the journal, head, revision ids shown, limit
and whether the index was pinned or live: `replay_index(journal, record)` renders the same bytes again
from it, and proves they are the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

import attrs

from waybook.journal import SessionJournal, front_matter
from waybook.memory._errors import RequestError
from waybook.memory.working import MemoryProjection, MemoryState
from waybook.model import IntegrityError, JournalError, MemoryUsed
from waybook.projections import replay

if TYPE_CHECKING:
    from waybook._session import Session


DEFAULT_LIMIT: Final = 50
"""Entries an index shows when no limit is given (and what records older than `limit` used)."""


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
    pinned: bool = False
    """True when loaded at a pin the host chose (`load_index(pin=...)`); False when live (the head)."""


def render_index(state: MemoryState, *, limit: int = DEFAULT_LIMIT) -> MemoryIndex:
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
    decision: Decision = "continue"
    """What the policy decided: go on without memory (the only outcome that returns a value)."""


class MemoryRequiredError(JournalError):
    """The `require` policy: memory could not be read, so the prompt must not go on without it.

    `reason` says why memory was unavailable (what a session records with the refusal)."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


Decision = Literal["require", "continue"]
Policy: TypeAlias = Decision | Callable[[str], Decision]
"""What a turn does when memory cannot be read: `"require"` (refuse the turn), `"continue"` (go on
without memory), or the host's own decision: a callable given the reason that returns one of them."""
POLICIES: Final = ("require", "continue")
HOST_POLICY: Final = "host"
"""What a record names as its policy when a host's callable decided nothing (memory was available)."""


def load_index(
    open_journal: Callable[[], SessionJournal],
    *,
    pin: int | None = None,
    limit: int = DEFAULT_LIMIT,
    policy: Policy,
    session: Session | None = None,
) -> MemoryIndex | MemoryUnavailable:
    """The index at `pin` (default: the journal's head). `policy` decides what an unavailable journal does.

    With `session`, the outcome is recorded there (`waybook.memory.used/1`) before the turn that uses it:
    the head and index digest rendered, the decision to go on without memory (`continue`), or the
    refusal to go on without it (`require`, recorded before MemoryRequiredError is raised).
    With a callable `policy`, the host decides: it is called with the reason memory is unavailable and
    returns "require" or "continue" (the record names that decision); it is not called when memory is
    available.
    """
    if not callable(policy) and policy not in POLICIES:
        msg = (
            f"unknown unavailable-memory policy {policy!r}; use one of {', '.join(POLICIES)}, or a "
            "callable that takes the reason and returns one of them"
        )
        raise RequestError(msg)
    if type(limit) is not int or limit < 0:
        msg = f"limit must be a non-negative int, not {limit!r:.40}"
        raise RequestError(msg)
    try:
        outcome = _load(open_journal, pin=pin, limit=limit, policy=policy)
    except MemoryRequiredError as exc:
        if session is not None:  # the refusal is a fact of the session too, recorded before it is raised
            record_memory_use(session, MemoryUnavailable(reason=exc.reason), policy="require")
        raise
    if session is not None:
        named = policy if isinstance(policy, str) else HOST_POLICY
        decided = outcome.decision if isinstance(outcome, MemoryUnavailable) else None
        record_memory_use(session, outcome, policy=decided or named)
    return outcome


def record_memory_use(session: Session, outcome: MemoryIndex | MemoryUnavailable, *, policy: str) -> None:
    """Record in `session` what memory the next turn carries (per-turn provenance; `waybook show`): for
    an index, everything `replay_index` needs to render the same bytes again."""
    if isinstance(outcome, MemoryIndex):
        body = MemoryUsed(
            memory=outcome.journal,
            seq=outcome.as_of,
            digest=outcome.digest,
            index_sha256=outcome.sha256,
            policy=policy,
            revisions=outcome.revisions,
            limit=outcome.limit,
            pinned=outcome.pinned,
        )
    else:
        body = MemoryUsed(memory=None, unavailable=outcome.reason, policy=policy)
    session.append(body)


def replay_index(journal: SessionJournal, used: MemoryUsed) -> MemoryIndex:
    """The index a `waybook.memory.used/1` record says a turn carried, rendered again from `journal` (the
    memory journal it names): the same bytes, or an IntegrityError saying what differs. A record written
    before the limit was recorded is rendered with the default limit (50), which is what it used."""
    if used.memory is None or used.seq is None or used.index_sha256 is None:
        msg = "the record names no memory index (memory was unavailable, or it recorded a compiled block)"
        raise RequestError(msg)
    state = replay(MemoryProjection(), journal, at=used.seq)
    if (state.journal_id, state.seq, state.digest) != (used.memory, used.seq, used.digest):
        msg = (
            f"{journal.name} at seq {used.seq} is {state.journal_id} ({state.digest[:12]}), not the memory "
            f"the record names: {used.memory} ({str(used.digest)[:12]})"
        )
        raise IntegrityError(msg)
    index = render_index(state, limit=DEFAULT_LIMIT if used.limit is None else used.limit)
    index = attrs.evolve(index, pinned=bool(used.pinned))
    if used.revisions and index.revisions != used.revisions:
        msg = f"the index at seq {used.seq} shows other revisions than the record names"
        raise IntegrityError(msg)
    if index.sha256 != used.index_sha256:
        msg = f"the index rendered again at seq {used.seq} is not the bytes the record names"
        raise IntegrityError(msg)
    return index


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
        return _unavailable(str(exc), policy, exc)
    if pin is not None and state.seq != pin:
        return _unavailable(f"the memory journal has no seq {pin} (its head is {state.seq})", policy, None)
    return attrs.evolve(render_index(state, limit=limit), pinned=pin is not None)


def _unavailable(reason: str, policy: Policy, cause: BaseException | None) -> MemoryUnavailable:
    """What the policy decides for an unavailable memory: MemoryRequiredError, or going on without it."""
    decision = policy(reason) if callable(policy) else policy
    if decision not in POLICIES:
        msg = (
            f"the unavailable-memory policy returned {decision!r:.40}; it must return 'require' or 'continue'"
        )
        raise RequestError(msg)
    if decision == "require":
        msg = f"memory is required but unavailable: {reason}"
        raise MemoryRequiredError(msg, reason=reason) from cause
    return MemoryUnavailable(reason=reason, decision="continue")
