"""Seed blocks: the notes a new memory starts with, written once, on first use, in one batch.

`seed_blocks(memory)` writes the default blocks (`/memories/persona.md`, `user.md`, `project.md`, each
with front matter and a description) through the Memory port's rules as one batch under the request id
`waybook-seed`, and returns a `SeedReceipt` derived from the journal. Once that request is in the
journal, seeding again writes nothing and returns the same receipt: a note the agent later edited,
moved or deleted is never put back. A harness passes its own set (`SeedBlock`s, or a mapping of path to
full text); a block whose path already holds a note is left out of the batch, so nothing is overwritten.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import attrs

from waybook.journal import SessionJournal, description_line, front_matter
from waybook.memory._errors import RequestError
from waybook.memory.tools._home import MemoryHome
from waybook.memory.working import Memory, MemoryState

SEED_REQUEST: Final = "waybook-seed"


@attrs.frozen
class SeedBlock:
    """One seed note: its path, its one-line description and its body (after the front matter)."""

    path: str
    description: str
    body: str
    read_only: bool = False

    @property
    def text(self) -> str:
        lines = ["---", description_line(self.description)]
        if self.read_only:
            lines.append("read_only: true")
        return "\n".join([*lines, "---", ""]) + self.body


DEFAULT_BLOCKS: Final = (
    SeedBlock(
        "/memories/persona.md",
        "who the agent is and how it works: voice, habits, what it has learned about its own work",
        "# Persona\n\n(Nothing yet. Note here how you like to work and what you learned about it.)\n",
    ),
    SeedBlock(
        "/memories/user.md",
        "the person the agent works with: name, preferences, what they asked to be remembered",
        "# User\n\n(Nothing yet. Note the user's preferences and standing requests here.)\n",
    ),
    SeedBlock(
        "/memories/project.md",
        "the project at hand: goals, conventions, decisions and where things are",
        "# Project\n\n(Nothing yet. Note the project's conventions and decisions here.)\n",
    ),
)


@attrs.frozen
class SeedReceipt:
    """Where the seed batch is: the journal, its first and last seq and the last record's digest, and the
    paths it wrote. `written` is True only for the call that wrote it. `seq` is 0 when there was nothing
    to write (every block's path already held a note on first use)."""

    journal: str
    call_id: str
    first_seq: int
    seq: int
    digest: str | None
    paths: tuple[str, ...]
    written: bool


def seed_blocks(
    memory: Memory | MemoryHome | SessionJournal,
    blocks: Iterable[SeedBlock] | Mapping[str, str] | None = None,
    *,
    scope: str | None = None,
) -> SeedReceipt:
    """Write `blocks` (default: `DEFAULT_BLOCKS`) into a new memory once; a later call writes nothing.

    `memory` is a Memory port, an identity's `MemoryHome` (its working memory), or a working-memory
    journal (then `scope` names its scope, default: the scope its header declares). A block the port
    refuses (a bad path, a limit) raises RequestError and writes nothing.
    """
    if isinstance(memory, MemoryHome):
        port = memory.memory()
    elif isinstance(memory, Memory):
        port = memory
    else:
        port = Memory(memory, scope=scope or _scope_of(memory))
    texts = _texts(DEFAULT_BLOCKS if blocks is None else blocks)
    state = port.state()
    if SEED_REQUEST in state.requests:
        return _receipt(port, state, written=False)
    writes = {path: text for path, text in texts.items() if path not in state.files}
    if not writes:
        return SeedReceipt(state.journal_id or "", SEED_REQUEST, 0, 0, None, (), written=False)
    result = port.write_changes(writes=writes, call_id=SEED_REQUEST, command="seed_blocks", host=True)
    if not result.ok:
        assert result.error is not None
        again = port.state()
        if SEED_REQUEST in again.requests:  # another harness seeded first
            return _receipt(port, again, written=False)
        problem = f"{result.error.code}): {result.error.message}"
        msg = f"the seed blocks were refused ({problem}; nothing was written"
        raise RequestError(msg)
    return _receipt(port, port.state(), written=True)


def _texts(blocks: Iterable[SeedBlock] | Mapping[str, str]) -> dict[str, str]:
    pairs = (
        list(blocks.items())
        if isinstance(blocks, Mapping)
        else [(b.path, b.text) if isinstance(b, SeedBlock) else (b, None) for b in blocks]
    )
    texts: dict[str, str] = {}
    for path, text in pairs:
        if type(path) is not str or type(text) is not str:
            msg = "seed blocks are SeedBlock values, or a mapping of path to the note's full text"
            raise RequestError(msg)
        if path in texts:
            msg = f"the seed blocks name {path} twice"
            raise RequestError(msg)
        texts[path] = text
    if not texts:
        msg = "give at least one seed block"
        raise RequestError(msg)
    return texts


def _receipt(port: Memory, state: MemoryState, *, written: bool) -> SeedReceipt:
    first, last = state.requests[SEED_REQUEST]
    at_last = port.as_of(last)
    before = port.as_of(first - 1)
    paths = tuple(sorted(p for p, f in at_last.files.items() if before.files.get(p) != f))
    return SeedReceipt(
        journal=state.journal_id or "",
        call_id=SEED_REQUEST,
        first_seq=first,
        seq=last,
        digest=at_last.digest,
        paths=paths,
        written=written,
    )


def _scope_of(journal: SessionJournal) -> str:
    first = next(iter(journal.read(limit=1)), None)
    scope = getattr(first.body, "metadata", {}).get("scope") if first is not None else None
    if not isinstance(scope, str):
        msg = f"{journal.name} declares no memory scope; pass scope= or a Memory port"
        raise RequestError(msg)
    return scope


def described(text: str) -> bool:
    """Whether a note's text has a non-empty front-matter description."""
    return bool((front_matter(text).description or "").strip())
