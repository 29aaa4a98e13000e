"""Forking a session into a new journal, and proving where a fork came from.

A fork copies the source's records 2..k verbatim (ids, timestamps, bodies), where record k is the node
forked from, behind a new header whose metadata names the source: `forked_from` = {journal, seq,
digest, node, at}. A fork into a journal that holds only its own header keeps that header (its id is
the fork's) and names the source in an annotation of the node instead, right after the copies (type
`waybook.fork`, the same data). The copies sit at the same seqs as in the source, so a reader holding
both proves the fork with `check_fork`: the source's record k has the digest the fork names (and the
source's chain proves every record before it), and each copy equals the source record at its seq. The
source is only read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from waybook.model import (
    SEALED_SCHEMA,
    Annotation,
    Header,
    IntegrityError,
    InvalidRecordError,
    NewRecord,
    Record,
    UnknownNodeError,
)

FORK_KEY: Final = "forked_from"
"""The header metadata key of a fork's provenance."""

FORK_TYPE: Final = "waybook.fork"
"""The annotation type naming a fork's provenance when the fork kept the header its journal had."""


class ForkProvenanceError(IntegrityError):
    """A journal's fork provenance does not match the journal it names. Do not trust it as a fork."""


@attrs.frozen
class ForkPoint:
    """Where a fork came from: the source journal, the seq and digest of the node forked from, and when."""

    journal: str
    seq: int
    digest: str
    node: str
    at: str

    def as_metadata(self) -> dict[str, Any]:
        return {
            "journal": self.journal,
            "seq": self.seq,
            "digest": self.digest,
            "node": self.node,
            "at": self.at,
        }


@attrs.frozen
class ForkPlan:
    """What a fork writes, decided before anything is written: the header and the copied records."""

    header: Header
    header_at: str
    copies: tuple[NewRecord, ...]
    point: ForkPoint


def plan_fork(source: Iterable[Record], node_id: str, *, name: str, journal_id: str, at: str) -> ForkPlan:
    """The fork of `source` (a session journal's records, from seq 1) at the node `node_id`.

    Raises UnknownNodeError when `node_id` is not a node of the source, InvalidRecordError when the source
    is not a session journal.
    """
    records = iter(source)
    first = next(records, None)
    if first is None or not isinstance(first.body, Header):
        msg = f"cannot fork {name}: it has no header (an empty journal has nothing to fork)"
        raise InvalidRecordError(msg, journal=name)
    if first.body.role != "session":
        msg = f"cannot fork a {first.body.role} journal; only session journals fork"
        raise InvalidRecordError(msg, journal=name)
    copies: list[NewRecord] = []
    found: Record | None = None
    for record in records:
        copies.append(NewRecord(id=record.id, at=record.at, body=record.body, salt=record.salt))
        if record.id == node_id:
            found = record
            break
    if found is None or not found.body.IS_NODE:
        what = "is not a node (a message or entry)" if found is not None else "is not in the journal"
        msg = f"cannot fork at {node_id!r}: it {what}; give the id of a message to fork from"
        raise UnknownNodeError(msg, journal=name, record_id=node_id)
    source_header = first.body
    point = ForkPoint(journal=source_header.journal, seq=found.seq, digest=found.digest, node=node_id, at=at)
    metadata = {**source_header.metadata, FORK_KEY: point.as_metadata()}
    header = Header(
        journal=journal_id,
        creator=source_header.creator,
        metadata=metadata,
        role="session",
        schema=SEALED_SCHEMA,
    )
    return ForkPlan(header=header, header_at=first.at, copies=tuple(copies), point=point)


def provenance(plan: ForkPlan, annotation_id: str) -> NewRecord:
    """The record naming `plan`'s source when the fork keeps its journal's own header: an annotation of
    the node, right after the copies (it does not move the leaf)."""
    body = Annotation(target=plan.point.node, type=FORK_TYPE, data=plan.point.as_metadata())
    return NewRecord(id=annotation_id, at=plan.point.at, body=body)


def fork_point(header: Header | Annotation) -> ForkPoint | None:
    """The provenance a fork's header (or its `waybook.fork` annotation) names (None for a journal that
    is not a fork)."""
    if isinstance(header, Annotation):
        given = header.data if header.type == FORK_TYPE else None
    else:
        given = header.metadata.get(FORK_KEY)
    if not isinstance(given, Mapping):
        return None
    try:
        return ForkPoint(
            journal=str(given["journal"]),
            seq=int(given["seq"]),
            digest=str(given["digest"]),
            node=str(given["node"]),
            at=str(given.get("at", "")),
        )
    except (KeyError, TypeError, ValueError):
        return None


def check_fork(fork: Iterable[Record], source: Iterable[Record], *, name: str = "") -> ForkPoint:
    """Prove `fork` came from `source`: the point its header names is in the source with that digest, and
    every copied record equals the source's record at its seq. Raises ForkProvenanceError naming the
    first difference. Both journals' chains are their own to verify (`waybook verify`)."""
    records = iter(fork)
    first = next(records, None)
    point = fork_point(first.body) if first is not None and isinstance(first.body, Header) else None
    if point is None:  # a fork that kept its journal's header: the annotation after the copies names it
        copies: list[Record] = []
        for record in records:
            if isinstance(record.body, Annotation) and record.body.type == FORK_TYPE:
                point = fork_point(record.body)
                if point is not None and record.seq != point.seq + 1:
                    msg = f"{name}: the fork's annotation at seq {record.seq} does not follow the copies"
                    raise ForkProvenanceError(msg)
                break
            copies.append(record)
        records = iter(copies)
    if point is None:
        msg = (
            f"{name}: names no fork provenance ({FORK_KEY!r} in its header's metadata, or a {FORK_TYPE!r} "
            "annotation)"
        )
        raise ForkProvenanceError(msg)
    originals = iter(source)
    source_header = next(originals, None)
    if source_header is None or not isinstance(source_header.body, Header):
        msg = f"{name}: the source has no header"
        raise ForkProvenanceError(msg)
    if source_header.body.journal != point.journal:
        msg = f"{name}: the fork names source {point.journal!r}, not {source_header.body.journal!r}"
        raise ForkProvenanceError(msg)
    for original in originals:
        if original.seq > point.seq:
            break
        copy = next(records, None)
        if copy is None or (copy.id, copy.at, copy.body) != (original.id, original.at, original.body):
            msg = f"{name}: seq {original.seq} is not the source's record {original.id!r}"
            raise ForkProvenanceError(msg)
        if original.seq == point.seq and (original.digest != point.digest or original.id != point.node):
            msg = (
                f"{name}: the source's seq {point.seq} has digest {original.digest[:12]} (node "
                f"{original.id!r}), not {point.digest[:12]} ({point.node!r}) as the fork's header says"
            )
            raise ForkProvenanceError(msg)
        if original.seq == point.seq:
            return point
    msg = f"{name}: the source ends before seq {point.seq}, the point the fork names"
    raise ForkProvenanceError(msg)
