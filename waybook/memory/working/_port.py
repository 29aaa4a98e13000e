"""`Memory`: the agent-facing memory tool port over a working-memory journal (one journal per scope).

`execute(command)` takes one of the six commands (a typed command or the tool's JSON object) and returns
a `Result` value: `ok` with a typed value and, for writes, a receipt; or a `Failure` with a code. Caller
mistakes are never raised. Each write is one compare-and-append of the records the decision planned; a
writer that lost a race gets CONFLICT and nothing is half-applied.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from waybook.journal._clock import new_id, utc_now
from waybook.journal._protocol import SessionJournal
from waybook.memory._errors import require_role
from waybook.memory.working._checks import Write
from waybook.memory.working._commands import NAMES, Command, CommandError, check_call_id, parse
from waybook.memory.working._decide import DEFAULT_LIMITS, Limits, decide_command
from waybook.memory.working._patching import decide_changes
from waybook.memory.working._results import Failure, Receipt, Result, failed
from waybook.memory.working._state import MemoryProjection, MemoryState, Revision
from waybook.model._errors import (
    ConflictError,
    CorruptJournalError,
    DecodeError,
    IntegrityError,
    JournalError,
    MemoryRuleError,
    StorageError,
    TornTailError,
)
from waybook.model._head import GENESIS, Head
from waybook.model._records import Header, NewRecord
from waybook.projections._base import LiveProjection, replay


class ScopeMismatchError(JournalError, ValueError):
    """A Memory port was given a journal that belongs to another scope (a host programming error).

    A JournalError like every error of waybook's journals; still a ValueError, as it was."""


class Memory:
    """The Memory port for one scope. Not thread-safe: one port per writer; several may share a journal."""

    def __init__(
        self,
        journal: SessionJournal,
        *,
        scope: str,
        limits: Limits = DEFAULT_LIMITS,
        clock: Callable[[], str] = utc_now,
        ids: Callable[[], str] = new_id,
        require_description: bool = False,
    ) -> None:
        self._journal = journal
        self._scope = scope
        self._limits = limits
        self._clock = clock
        self._ids = ids
        self._live = LiveProjection(MemoryProjection(), journal)
        if self._live.state.seq == 0:
            header = Header(
                journal=f"memory-{ids()}",
                creator="waybook.memory",
                metadata={
                    "kind": "working-memory",
                    "scope": scope,
                    "limits": limits.as_json(),
                    **({"require_description": True} if require_description else {}),
                },
                role="working_memory",
            )
            with contextlib.suppress(ConflictError):  # another port created it first; read its header below
                journal.append([NewRecord(id=ids(), at=clock(), body=header)], expected=GENESIS)
            self._live.refresh()
        require_role(journal.name, self._live.state.role, "working_memory")
        if self._live.state.scope != scope:
            msg = f"{journal.name} holds memory of scope {self._live.state.scope!r}, not {scope!r}"
            raise ScopeMismatchError(msg)
        self._limits = _within(limits, self._live.state.limits)

    @property
    def scope(self) -> str:
        return self._scope

    @property
    def limits(self) -> Limits:
        return self._limits

    def execute(self, command: Mapping[str, Any] | Command, *, call_id: str | None = None) -> Result:
        """Run one command. Never raises for a caller's mistake or a storage problem: see `Result`."""
        try:
            name, parsed = parse(command)
            check_call_id(call_id)
        except CommandError as problem:
            given = command.get("command") if isinstance(command, Mapping) else NAMES.get(type(command))
            return failed(str(given or "unknown"), problem.code, str(problem), **(problem.details or {}))
        outcome = self._storage_guard(name, lambda: self._refresh_state())
        if isinstance(outcome, Result):
            return outcome
        decision = decide_command(parsed, outcome, self._limits, call_id)
        if isinstance(decision, Failure):
            return Result(False, name, error=decision)
        if isinstance(decision, Write):
            return self._commit(name, decision, outcome, call_id)
        return Result(True, name, value=decision)

    # --- the programmatic store API (for hosts, not for the model) ------------------------------

    def state(self) -> MemoryState:
        """The current files and histories (refreshed from the journal)."""
        return self._refresh_state()

    def history(self, path: str) -> tuple[Revision, ...]:
        return self._refresh_state().revisions(path)

    def as_of(self, seq: int) -> MemoryState:
        """Memory as it was at `seq` (time travel by folding the prefix)."""
        return replay(MemoryProjection(), self._journal, at=seq)

    def supersede(self, path: str, text: str, *, expected_digest: str, call_id: str | None = None) -> Result:
        """Compare-and-supersede: replace `path` only if its content digest is still `expected_digest`."""
        state = self._refresh_state()
        current = state.files.get(path)
        if current is None or current.digest != expected_digest:
            found = current.digest if current else None
            msg = f"{path} is not at digest {expected_digest[:12]} (found {str(found)[:12]}); nothing changed"
            return failed("create", "CONFLICT", msg, path=path, expected=expected_digest, actual=found)
        return self.execute({"command": "create", "path": path, "text": text}, call_id=call_id)

    def write_changes(
        self,
        *,
        writes: Mapping[str, str],
        deletes: tuple[str, ...] = (),
        moves: tuple[tuple[str, str], ...] = (),
        call_id: str,
        command: str,
    ) -> Result:
        """Whole-file changes made outside the tool (for example a git commit on an exported memory
        repository), with the port's rules, limits and codes, as one atomic batch under `call_id`."""
        state = self._storage_guard(command, lambda: self._refresh_state())
        if isinstance(state, Result):
            return state
        decision = decide_changes(
            state,
            self._limits,
            writes=dict(writes),
            deletes=deletes,
            moves=moves,
            call_id=call_id,
            command=command,
        )
        if isinstance(decision, Failure):
            return Result(False, command, error=decision)
        return self._commit(command, decision, state, call_id)

    # --- internals ----------------------------------------------------------------------------

    def _refresh_state(self) -> MemoryState:
        self._live.refresh()
        return self._live.state

    def _commit(self, name: str, decision: Write, state: MemoryState, call_id: str | None) -> Result:
        batch = [NewRecord(id=self._ids(), at=self._clock(), body=body) for body in decision.bodies]
        head = Head(state.seq, state.digest)  # the state the decision was made on
        appended = self._storage_guard(name, lambda: self._journal.append(batch, expected=head))
        if isinstance(appended, Result):
            return appended
        self._live.refresh()
        last = appended.records[-1]
        receipt = Receipt(
            journal=state.journal_id or self._journal.name,
            seq=last.seq,
            digest=last.digest,
            content_digest=decision.content_digest,
            call_id=call_id,
            dropped_links=decision.dropped_links,
        )
        return Result(True, name, value=decision.value, receipt=receipt)

    def _storage_guard(self, name: str, action: Callable[[], Any]) -> Any:
        """Run a journal action; turn journal failures into the port's error results."""
        try:
            return action()
        except MemoryRuleError as exc:  # the journal's memory rules: the same codes as the port's own
            return failed(name, exc.code, str(exc), path=exc.path, **(exc.details or {}))
        except ConflictError as exc:
            return failed(
                name, "CONFLICT", f"another writer changed memory first; read again and retry ({exc})"
            )
        except (TornTailError, CorruptJournalError, DecodeError, IntegrityError) as exc:
            return failed(
                name, "UNSAFE_STORAGE", f"the memory journal is damaged; nothing was changed ({exc})"
            )
        except (StorageError, OSError) as exc:
            return failed(name, "STORAGE_ERROR", f"the memory journal could not be written ({exc})")
        except JournalError as exc:
            return failed(name, "STORAGE_ERROR", f"the memory journal refused the write ({exc})")


def _within(port: Limits, journal: Limits | None) -> Limits:
    """The port's limits, lowered to the journal's where the journal's header declares smaller ones."""
    if journal is None:
        return port
    return Limits(
        max_file_bytes=min(port.max_file_bytes, journal.max_file_bytes),
        max_total_bytes=min(port.max_total_bytes, journal.max_total_bytes),
        max_files=min(port.max_files, journal.max_files),
    )
