"""A memory identity's home: its working, canonical and pin journals in one store, created on first use.

`home(identity)` resolves what the harness says the memory belongs to (an agent, a project, a user:
`"coder"`, `"coder:waybook:alice"`) to three journals of one store, through one layout:

    store journal id                 role               what it holds
    memory:<identity>:working        working_memory     the agent's own notes (the Memory port's)
    memory:<identity>:canonical      canonical_memory   what the host reviewed (the authority's)
    memory:<identity>:pins           pin                the authority's pin records

The working and canonical journals' headers declare `require_description: true`: every note of a home's
memory needs a non-empty front-matter description, whoever writes it (the port, `remember`, an import).

The store is `store=` (a `JournalStore` or a store URL), else the default store: `file:$WAYBOOK_HOME/store`,
with `WAYBOOK_HOME` defaulting to `$XDG_DATA_HOME/waybook` (`~/.local/share/waybook` where XDG_DATA_HOME
is unset or not absolute, as the XDG base-directory specification says). Journals missing on first use
are created; a second harness racing the first opens what the first created.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

import attrs

from waybook.journal import ClosedOnExit, SessionJournal
from waybook.memory._errors import RequestError
from waybook.memory.working import Memory
from waybook.stores import JournalExistsError, JournalStore, open_store

ENV: Final = "WAYBOOK_HOME"
IDENTITY: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,95}")
ROLES: Final = (("working", "working_memory"), ("canonical", "canonical_memory"), ("pins", "pin"))


def waybook_home() -> Path:
    """`$WAYBOOK_HOME`, else `$XDG_DATA_HOME/waybook`, else `~/.local/share/waybook` (not created here)."""
    explicit = os.environ.get(ENV)
    if explicit:
        return Path(explicit).expanduser()
    data = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data) if data and Path(data).is_absolute() else Path.home() / ".local" / "share"
    return base / "waybook"


def default_store_url() -> str:
    """The URL of the default store: `file:` the `store` directory of the waybook home."""
    return f"file:{waybook_home() / 'store'}"


def journal_ids(identity: str) -> dict[str, str]:
    """The store journal ids of `identity`'s memory: working, canonical and pins."""
    check_identity(identity)
    return {name: f"memory:{identity}:{name}" for name, _ in ROLES}


def check_identity(identity: object) -> str:
    if type(identity) is not str or not IDENTITY.fullmatch(identity):
        msg = (
            f"memory identity {identity!r:.80} is not valid: use 1-96 letters, digits, '_', '.', ':' or '-', "
            "starting with a letter or digit (for example 'coder' or 'coder:waybook:alice')"
        )
        raise RequestError(msg)
    return identity


@attrs.define(eq=False)
class MemoryHome(ClosedOnExit):
    """One identity's memory journals, open. Close it (or use it as a context manager) when done; the
    store is closed with it only if `home()` opened it."""

    identity: str
    store: JournalStore
    working: SessionJournal
    canonical: SessionJournal
    pins: SessionJournal
    created: tuple[str, ...]
    """The journals this call created (first use), by name: "working", "canonical", "pins"."""
    owns_store: bool = False

    def memory(self, **options: object) -> Memory:
        """The Memory port over the working journal (scope: the identity); options go to `Memory`.

        Every note needs a non-empty front-matter description (`require_description=True`): the
        journals `home()` creates declare it in their headers, and the port holds a home made before
        they did to it as well."""
        options.setdefault("require_description", True)
        return Memory(self.working, scope=self.identity, **options)  # type: ignore[arg-type]

    def close(self) -> None:
        for journal in (self.working, self.canonical, self.pins):
            journal.close()
        if self.owns_store:
            self.store.close()


def home(identity: str, *, store: JournalStore | str | None = None) -> MemoryHome:
    """The memory of `identity` (its working, canonical and pin journals), created on first use."""
    ids = journal_ids(identity)
    owned = store is None or isinstance(store, str)
    opened: JournalStore
    if store is None or isinstance(store, str):
        opened = open_store(default_store_url() if store is None else store)
    else:
        opened = store
    journals: dict[str, SessionJournal] = {}
    created: list[str] = []
    try:
        for name, role in ROLES:
            journal_id = ids[name]
            if opened.exists(journal_id):
                journals[name] = opened.open(journal_id)
                continue
            metadata = (
                {"canonical": ids["canonical"]}
                if role == "pin"
                else {
                    "kind": role.replace("_", "-"),
                    "scope": identity,
                    "identity": identity,
                    "require_description": True,
                }
            )
            try:
                journals[name] = opened.create(journal_id, role=role, metadata=metadata)
                created.append(name)
            except JournalExistsError:  # another harness created it first: use theirs
                journals[name] = opened.open(journal_id)
    except BaseException:
        for journal in journals.values():
            journal.close()
        if owned:
            opened.close()
        raise
    return MemoryHome(
        identity=identity,
        store=opened,
        working=journals["working"],
        canonical=journals["canonical"],
        pins=journals["pins"],
        created=tuple(created),
        owns_store=owned,
    )
