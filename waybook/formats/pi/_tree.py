"""Where each Pi entry goes in the tree, by Pi's own loader rules, as record ids a journal accepts.

Pi's session manager (packages/coding-agent/src/core/session-manager.ts) reads entries into a map by
id, the later of two entries with one id winning; it walks `parentId` links up to the first entry whose
parent is missing, falsy or not in the map; its tree treats an entry whose `parentId` is its own id, or
names no entry, as a root; and it resumes at the last entry of the file. A journal is stricter: every id
is fresh, and a node's parent is written before it. So this module gives every entry a record id (the
entry's own where it can, else one derived that no id in the file uses), resolves each `parentId` to
the record id Pi would follow (or None for a root), and orders entries so a parent comes first (an entry
whose parent is on a later line waits for it). Every such decision is reported as an inferred note.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from waybook.formats.pi._form import CARRIER, TRAILER
from waybook.journal import ID_PATTERN

RESUME: Final = "pi: resumes at the last entry of the file"
"""The reason of the leaf move import adds when the file's last entry is not the last node placed."""


@attrs.frozen
class Placed:
    """One entry, with the record id it becomes (None: it only carries waybook records) and the record
    id of its parent (None: a root)."""

    line: int
    entry: dict[str, Any]
    record_id: str | None
    parent: str | None


@attrs.frozen
class Placement:
    entries: tuple[Placed, ...]
    notes: tuple[tuple[int, str], ...]
    last: str | None
    """The record id of the file's last entry: where Pi resumes (None: no node entry)."""
    taken: frozenset[str]
    """Every id of the file and every id derived for it: a further derived id avoids them all."""


def fresh(base: str, taken: set[str]) -> str:
    """`base`, or `base.2`, `base.3`, ...: the first that `taken` does not hold (and then it does)."""
    candidate, n = base, 1
    while candidate in taken or not ID_PATTERN.fullmatch(candidate):
        n += 1
        candidate = f"{base[:120]}.{n}"
    taken.add(candidate)
    return candidate


def _carrier_only(entry: dict[str, Any]) -> bool:
    return entry.get("type") == "custom" and entry.get("customType") == TRAILER


def place(entries: list[tuple[int, dict[str, Any]]], *, reserved: set[str]) -> Placement:
    """The entries (after migration to version 3) in an order a journal accepts, with their record ids
    and parents; `reserved` holds ids already used (the header's)."""
    taken = set(reserved)
    for _, entry in entries:
        if isinstance(entry.get("id"), str):
            taken.add(entry["id"])
    notes: list[tuple[int, str]] = []
    last_of: dict[str, int] = {}
    for i, (_, entry) in enumerate(entries):
        if isinstance(entry.get("id"), str) and not _carrier_only(entry):
            last_of[entry["id"]] = i
    record_ids: list[str | None] = []
    by_pi_id: dict[str, str] = {}
    for i, (line, entry) in enumerate(entries):
        pi_id = entry.get("id")
        if _carrier_only(entry):
            record_ids.append(None)
            continue
        if not isinstance(pi_id, str):
            rid = fresh(f"l{line}", taken)
            notes.append((line, f"the entry has no id; imported as {rid!r}"))
        elif last_of[pi_id] != i:
            rid = fresh(_usable(pi_id), taken)
            notes.append(
                (line, f"id {pi_id!r} is used again later (Pi keeps the later entry); this one is {rid!r}")
            )
        elif pi_id in reserved or not ID_PATTERN.fullmatch(pi_id):
            rid = fresh(_usable(pi_id), taken)
            notes.append((line, f"id {pi_id!r} cannot be a record id here; imported as {rid!r}"))
        else:
            rid = pi_id
        record_ids.append(rid)
        if isinstance(pi_id, str) and last_of.get(pi_id) == i:
            by_pi_id[pi_id] = rid
    parents: list[str | None] = []
    for (line, entry), own in zip(entries, record_ids, strict=True):
        parent = entry.get("parentId")
        if own is None or not parent:
            parents.append(None)
            continue
        if not isinstance(parent, str):
            notes.append((line, f"parentId {parent!r} is not an entry id; imported as a root"))
            parents.append(None)
        elif parent == entry.get("id"):
            notes.append((line, "parentId names the entry itself; imported as a root, as Pi's tree does"))
            parents.append(None)
        elif parent not in by_pi_id:
            notes.append((line, f"parentId {parent!r} names no entry of the file; imported as a root"))
            parents.append(None)
        else:
            parents.append(by_pi_id[parent])
    ordered = _parents_first(entries, record_ids, parents, notes)
    last = next((rid for rid in reversed(record_ids) if rid is not None), None)
    if entries and record_ids[-1] is None:
        last = None  # a waybook export's trailer: its carried records set the leaf
    return Placement(entries=tuple(ordered), notes=tuple(notes), last=last, taken=frozenset(taken))


def _usable(pi_id: str) -> str:
    """A record-id spelling of a Pi id (Pi ids are any string)."""
    kept = "".join(c if c.isascii() and (c.isalnum() or c in "_.:-") else "-" for c in pi_id)[:100]
    return kept if kept[:1].isalnum() else f"e{kept}"


def _parents_first(
    entries: list[tuple[int, dict[str, Any]]],
    record_ids: list[str | None],
    parents: list[str | None],
    notes: list[tuple[int, str]],
) -> list[Placed]:
    """File order, except that an entry whose parent is on a later line waits until its parent is
    placed; entries whose parents form a cycle (Pi would walk it forever) start as roots."""
    placed: list[Placed] = []
    done: set[str] = set()
    waiting: dict[str, list[int]] = {}
    blocked: set[int] = set()

    def put(i: int, parent: str | None) -> None:
        stack = [(i, parent)]
        while stack:
            j, par = stack.pop()
            line, entry = entries[j]
            rid = record_ids[j]
            placed.append(Placed(line=line, entry=entry, record_id=rid, parent=par))
            blocked.discard(j)
            if rid is not None:
                done.add(rid)
                stack.extend((k, rid) for k in reversed(waiting.pop(rid, [])))

    for i, parent in enumerate(parents):
        if parent is None or parent in done:
            put(i, parent)
        else:
            waiting.setdefault(parent, []).append(i)
            blocked.add(i)
            if entries[i][1].get(CARRIER) is None:
                notes.append((entries[i][0], f"its parent {parent!r} is on a later line; imported after it"))
    while blocked:
        first = min(blocked)
        waiting[parents[first] or ""].remove(first)
        notes.append((entries[first][0], "its parentId links form a cycle; imported as a root"))
        put(first, None)
    return placed
