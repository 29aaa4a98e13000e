"""Reflection runs that are checked: the run edits an isolated branch of memory, and completing it
validates the result before it is merged.

`ReflectionBranch.begin(scheduler, run, memory)` copies the working memory as it is now (the base) into
a branch journal of its own (in memory, never the agent's journal) and gives the run a Memory port over
it (`branch.memory`). `branch.complete()` then checks the branch's notes:

- every note the run wrote parses: a text that opens a front-matter block (`---`) closes it, the block
  is YAML (a mapping), and every front-matter link names a `/memories/` path;
- every note has a non-empty front-matter description (`require_descriptions=False` skips this);
- every read-only note of the base is still there, at the same path, byte for byte;
- the limits held: no note was evicted to make room, and the result is within the memory's limits;
- the notes the run changed were not changed in the agent's memory since the base (else the merge
  would overwrite them).

All pass: the changes (writes and deletes) are written to the agent's memory as one batch through the
port, conditional on each changed note still holding the base's digest on the state the batch is
appended to (request id `reflect:<run>`; a note the agent changed meanwhile is a CONFLICT, never
overwritten), then the run finishes `merged` (or `no_changes`,
when the branch equals the base), which advances the cursors. Any rule broken: nothing is written, the
run finishes `failed` with the problems as its detail, and no cursor moves. Completing again after a
crash between the merge and the finish does not write twice.
"""

from __future__ import annotations

from typing import Final, Literal

import attrs

from waybook.journal import InMemoryJournal, front_matter, front_matter_problems
from waybook.memory._errors import RequestError
from waybook.memory.tools.reflection import ReflectionRun, ReflectionScheduler
from waybook.memory.working import DEFAULT_LIMITS, Limits, Memory, MemoryState
from waybook.model import MemoryDelete

Outcome = Literal["merged", "no_changes", "failed"]
MAX_DETAIL: Final = 2_000


@attrs.frozen
class CheckedOutcome:
    outcome: Outcome
    problems: tuple[str, ...]
    """Each broken rule, one line each (empty unless failed)."""
    written: tuple[str, ...]
    """The paths the merge wrote or deleted (empty unless merged)."""


class ReflectionBranch:
    """One reflection run's isolated copy of working memory, and the check that merges it."""

    def __init__(
        self, scheduler: ReflectionScheduler, run: ReflectionRun, memory: Memory, base: MemoryState
    ) -> None:
        self._scheduler = scheduler
        self._run = run
        self._target = memory
        self._base = base
        self._journal = InMemoryJournal(f"reflection-{run.run}")
        limits = base.limits or memory.limits
        self.memory = Memory(self._journal, scope=memory.scope, limits=limits)
        """The Memory port the run edits: the base's notes, nothing shared with the agent's journal."""
        if base.files:
            copied = self.memory.write_changes(
                writes={path: f.text for path, f in base.files.items()},
                call_id="base",
                command="base",
                host=True,  # a copy of the base, read-only notes included
            )
            if not copied.ok:
                assert copied.error is not None
                msg = f"the base memory could not be copied into the branch: {copied.error.message}"
                raise RequestError(msg)
        self._copied = self._journal.head().seq

    @classmethod
    def begin(cls, scheduler: ReflectionScheduler, run: ReflectionRun, memory: Memory) -> ReflectionBranch:
        """A branch for the active `run`, from `memory` (the agent's working memory) as it is now."""
        active = scheduler.state().active
        if active is None or active.run != run.run:
            msg = f"run {run.run} is not active; start it with scheduler.start() first"
            raise RequestError(msg)
        return cls(scheduler, run, memory, memory.state().copy())

    @property
    def run(self) -> ReflectionRun:
        return self._run

    def problems(self, *, require_descriptions: bool = True) -> tuple[str, ...]:
        """Every rule the branch breaks now (empty: it may be merged)."""
        result = self.memory.state()
        current = self._target.state()
        found: list[str] = []
        changed = _changed(self._base, result)
        for path in sorted(result.files):
            if path in changed:  # the run's own notes must parse (YAML front matter)
                found.extend(front_matter_problems(path, result.files[path].text))
            if require_descriptions and not (front_matter(result.files[path].text).description or "").strip():
                found.append(f"{path} has no front-matter description")
        for path, note in sorted(self._base.files.items()):
            if note.read_only and (path not in result.files or result.files[path].digest != note.digest):
                found.append(f"{path} is read-only and the run changed, moved or deleted it")
        evicted = sorted(
            {
                p
                for r in self._journal.read(after=self._copied)
                if isinstance(r.body, MemoryDelete) and r.body.reason == "evict"
                for p in r.body.paths
            }
        )
        if evicted:
            found.append(f"the limits did not hold: {', '.join(evicted)} evicted to make room")
        found.extend(_limit_problems(result, self._base.limits or self._target.limits))
        for path in sorted(_changed(self._base, result)):
            was = self._base.files.get(path)
            now = current.files.get(path)
            if (was.digest if was else None) != (now.digest if now else None):
                found.append(f"{path} changed in the agent's memory since the run began; run it again")
        return tuple(found)

    def complete(self, *, require_descriptions: bool = True) -> CheckedOutcome:
        """Validate the branch; merge it and finish the run `merged`/`no_changes`, or finish it `failed`."""
        request = f"reflect:{self._run.run}"
        result = self.memory.state()
        changed = sorted(_changed(self._base, result))
        if request not in self._target.state().requests:
            problems = self.problems(require_descriptions=require_descriptions)
            if problems:
                detail = "; ".join(problems)[:MAX_DETAIL]
                self._scheduler.finish(self._run, "failed", detail=detail)
                return CheckedOutcome("failed", problems, ())
            if not changed:
                self._scheduler.finish(self._run, "no_changes")
                return CheckedOutcome("no_changes", (), ())
            writes = {p: result.files[p].text for p in changed if p in result.files}
            deletes = tuple(p for p in changed if p not in result.files)
            checked = {p: (self._base.files[p].digest if p in self._base.files else None) for p in changed}
            merged = self._target.write_changes(
                writes=writes, deletes=deletes, call_id=request, command="reflect", expected=checked
            )
            if not merged.ok:
                assert merged.error is not None
                problem = f"the merge was refused ({merged.error.code}): {merged.error.message}"
                self._scheduler.finish(self._run, "failed", detail=problem[:MAX_DETAIL])
                return CheckedOutcome("failed", (problem,), ())
        self._scheduler.finish(self._run, "merged")
        return CheckedOutcome("merged", (), tuple(changed))


def _changed(base: MemoryState, result: MemoryState) -> set[str]:
    paths = set(base.files) | set(result.files)
    return {
        p
        for p in paths
        if (base.files[p].digest if p in base.files else None)
        != (result.files[p].digest if p in result.files else None)
    }


def _limit_problems(state: MemoryState, limits: Limits | None) -> list[str]:
    limits = limits or DEFAULT_LIMITS
    found = [
        f"the limits did not hold: {p} is {f.size} bytes, over {limits.max_file_bytes}"
        for p, f in sorted(state.files.items())
        if f.size > limits.max_file_bytes
    ]
    if state.total_bytes > limits.max_total_bytes:
        found.append(f"the limits did not hold: {state.total_bytes} bytes, over {limits.max_total_bytes}")
    if len(state.files) > limits.max_files:
        found.append(f"the limits did not hold: {len(state.files)} files, over {limits.max_files}")
    return found
