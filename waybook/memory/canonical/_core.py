"""The authority's core: its journals, binding and pin, and the agent-side calls (never queued).

Host calls live in advancing.py and adopting.py and run one at a time (turns.py); the faces that expose
both are in faces.py. Nothing outside this package holds a `Core`: the agent face reaches it only
through a registry keyed by the face itself (faces.py), so no attribute of the face leads here.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterable
from itertools import count
from typing import Final

from waybook.journal import SessionJournal, byte_length, content_digest, new_id, utc_now
from waybook.memory._errors import (
    AUTHORITY_LIMITS,
    ExplanationExpiredError,
    ProfileError,
    RequestError,
    require_role,
)
from waybook.memory.canonical._nominations import NominatedRecord, Nomination, closure, nomination_digest
from waybook.memory.canonical._outcomes import Explanation, QueryResult, RememberReceipt, Route, binding_of
from waybook.memory.canonical._physical import physical_identity
from waybook.memory.canonical._pins import PinLog
from waybook.memory.canonical.receipts import remember_receipt
from waybook.memory.working import MemoryProjection, MemoryState
from waybook.model import (
    GENESIS,
    ConflictError,
    Head,
    Header,
    IntegrityError,
    MemoryDelete,
    MemoryPinMoved,
    MemoryWrite,
    NewRecord,
    StaleWriterError,
)
from waybook.projections import LiveProjection, replay

CACHE_ENTRIES: Final = AUTHORITY_LIMITS.cache_entries
CACHE_BYTES: Final = AUTHORITY_LIMITS.cache_bytes
REMEMBER_ATTEMPTS: Final = 8
# The design's messages (docs/canonical-memory.md): each error's message starts with its text.
UNBOUND_ROUTE: Final = "The memory nomination is not bound to this adoption route"
NOT_DISTINCT: Final = "Working and canonical memory must be distinct physical authorities"


class Core:
    def __init__(
        self,
        *,
        working: SessionJournal,
        canonical: SessionJournal,
        routes: Iterable[Route],
        actor: str,
        session: SessionJournal | None,
        pins: SessionJournal | None,
    ) -> None:
        if (session is None) == (pins is None):
            msg = (
                "an authority records its pin durably: give session= (the session journal the agent "
                "works in) or pins= (a pin journal), exactly one"
            )
            raise ProfileError(msg)
        if working is canonical:
            msg = f"{NOT_DISTINCT}: one journal, {working.name!r}, was given as both"
            raise ProfileError(msg)
        place = physical_identity(working)
        if place is not None and place == physical_identity(canonical):
            msg = (
                f"{NOT_DISTINCT}: {working.name!r} and {canonical.name!r} are two handles on one store "
                f"({place[0]} {' '.join(place[1:])}). Give working and canonical memory journals of their own"
            )
            raise ProfileError(msg)
        self.working = working
        self.canonical = canonical
        self.actor = actor
        self.routes = {r.name: frozenset(r.purposes) for r in routes}
        self.working_live = LiveProjection(MemoryProjection(), working)
        self.canonical_live = LiveProjection(MemoryProjection(), canonical)
        self.working_id = _ensure_header(working, self.working_live, "working_memory")
        self.canonical_id = _ensure_header(canonical, self.canonical_live, "canonical_memory")
        if self.working_id == self.canonical_id:
            msg = f"{NOT_DISTINCT}: both are {self.working_id!r}. Give the authority two different journals"
            raise ProfileError(msg)
        header = next(iter(canonical.read(limit=1))).body
        assert isinstance(header, Header)
        self.binding = binding_of(header)
        pin_journal = session if session is not None else pins
        assert pin_journal is not None
        self.pin_log = PinLog(pin_journal, self.canonical_id, create=session is None)
        self.projection = MemoryProjection(shared=True)
        self.header_head = self._head_at(1)
        self.pinned: tuple[Head, MemoryState] = self._view_at(self.pin_log.last() or self.header_head)
        self.working_lock = threading.Lock()
        self.cache: OrderedDict[int, Explanation] = OrderedDict()
        self.cache_index: dict[tuple[Head, str], int] = {}
        self.cache_bytes = 0
        self.cache_lock = threading.Lock()
        self.clock = count(1)

    # --- the pin ----------------------------------------------------------------------------------

    def sync_pin(self) -> tuple[Head, MemoryState]:
        """The recorded pin (another authority or a lost reply may have moved it) and its view."""
        recorded = self.pin_log.last() or self.header_head
        if recorded != self.pinned[0]:
            self.pinned = self._view_at(recorded, self.pinned)
        return self.pinned

    def install(self, view: MemoryState, record: MemoryPinMoved) -> None:
        """Record the call's outcome in the pin journal; only once that has committed does the pin move.
        An outcome the pin journal already holds (the same receipt, the pin where it left it) is not
        recorded twice: a call that changes nothing writes nothing."""
        if not (
            self.pin_log.has_receipt(record.receipt)
            and self.pinned[0] == Head(record.new_seq, record.new_digest)
        ):
            self.pin_log.record(record)
        self.pinned = (Head(record.new_seq, record.new_digest), view)  # one assignment

    def _view_at(
        self, head: Head, current: tuple[Head, MemoryState] | None = None
    ) -> tuple[Head, MemoryState]:
        """The canonical view at `head`: folded forward from `current` (the view at the pin) when `head`
        is ahead of it (another authority moved the pin), else from the header. The view's containers
        fork in O(1), so an advance folds only the records since the pin onto a fork (advancing.py)."""
        if current is not None and current[0].seq < head.seq:
            view = current[1].copy()
            for record in self.canonical.read(after=current[0].seq, limit=head.seq - current[0].seq):
                view = self.projection.apply(view, record)
        else:
            view = replay(self.projection, self.canonical, at=head.seq)
        if Head(view.seq, view.digest) != head:
            msg = f"{self.canonical_id}: the recorded pin {head} is not a head of the canonical journal"
            raise IntegrityError(msg)
        if view.open_adoption is not None:
            msg = f"{self.canonical_id}: the recorded pin {head} lies inside adoption {view.open_adoption}"
            raise IntegrityError(msg)
        return head, view

    def _head_at(self, seq: int) -> Head:
        record = next(iter(self.canonical.read(after=seq - 1, limit=1)))
        return Head.of(record)

    # --- agent calls (never queued) -----------------------------------------------------------

    def remember(
        self, request_id: str, puts: tuple[tuple[str, str], ...], tombstones: tuple[str, ...]
    ) -> RememberReceipt:
        """Write puts and tombstones to working memory; the journal's memory rules refuse what the Memory
        port would refuse (MemoryRuleError with the port's code), before anything is written."""
        with self.working_lock:
            for _attempt in range(REMEMBER_ATTEMPTS):
                self.working_live.refresh()
                state = self.working_live.state
                if request_id in state.requests:
                    return self._replayed(request_id, state, puts, tombstones)
                bodies: list[MemoryWrite | MemoryDelete] = []
                gone = tuple(key for key in tombstones if key in state.files)
                if gone:
                    bodies.append(MemoryDelete(paths=gone, reason="remember", call_id=request_id))
                bodies.extend(
                    MemoryWrite(
                        path=key,
                        text=text,
                        digest=content_digest(text),
                        prior=state.files[key].digest if key in state.files else None,
                        command="remember",
                        call_id=request_id,
                    )
                    for key, text in puts
                )
                if not bodies:
                    msg = "remember needs at least one put, or a tombstone for a key that exists"
                    raise RequestError(msg)
                batch = [NewRecord(id=new_id(), at=utc_now(), body=body) for body in bodies]
                try:
                    self.working.append(batch, expected=Head(state.seq, state.digest))
                except StaleWriterError:
                    continue
                self.working_live.refresh()
                return self._replayed(request_id, self.working_live.state, puts, tombstones)
        msg = (
            f"{self.working_id}: remember lost the race to other writers {REMEMBER_ATTEMPTS} times; try again"
        )
        raise ConflictError(msg)

    def _replayed(
        self,
        request_id: str,
        state: MemoryState,
        puts: tuple[tuple[str, str], ...],
        tombstones: tuple[str, ...],
    ) -> RememberReceipt:
        first, last = state.requests[request_id]
        records = list(self.working.read(after=first - 1, limit=last - first + 1))
        written = {(r.body.path, r.body.digest) for r in records if isinstance(r.body, MemoryWrite)}
        deleted = {p for r in records if isinstance(r.body, MemoryDelete) for p in r.body.paths}
        existed = replay(MemoryProjection(), self.working, at=first - 1).files if tombstones else {}
        if written != {(key, content_digest(text)) for key, text in puts} or deleted != {
            key for key in tombstones if key in existed
        }:
            msg = f"request id {request_id!r} was already used for different records; use a new request id"
            raise RequestError(msg)
        return remember_receipt(self.working_id, request_id, first, Head.of(records[-1]))

    def query(self, keys: tuple[str, ...] | None, prefix: str | None) -> QueryResult:
        """Canonical memory at the pin: `keys` (validated copies, or None for every key under `prefix`)."""
        pin, view = self.pinned  # a running query keeps the pin it began with
        if keys is None:
            chosen = sorted(k for k in view.files if prefix is None or k.startswith(prefix))
        else:
            chosen = [k for k in keys if k in view.files]
        records = tuple(NominatedRecord(k, view.files[k].text, view.files[k].digest) for k in chosen)
        return QueryResult(self.canonical_id, pin, records)

    def explain(self, key: str | None, handle: int | None) -> Explanation:
        with self.cache_lock:
            if handle is not None:
                explanation = self.cache.get(handle)
                if explanation is None:
                    msg = f"explanation {handle} is no longer cached; explain the key again"
                    raise ExplanationExpiredError(msg)
                self.cache.move_to_end(handle)
                return explanation
            if key is None:
                msg = "explain needs a key or a handle"
                raise RequestError(msg)
            pin, view = self.pinned
            known = self.cache_index.get((pin, key))
            if known is not None and known in self.cache:
                self.cache.move_to_end(known)
                return self.cache[known]
            file = view.files.get(key)
            revisions = view.revisions(key)
            explanation = Explanation(
                handle=next(self.clock),
                key=key,
                head=pin,
                present=file is not None,
                digest=file.digest if file else None,
                text=file.text if file else None,
                revisions=revisions,
                adopted_by=tuple(
                    dict.fromkeys(
                        r.call_id for r in revisions if r.call_id and r.call_id.startswith("memory_adopt_")
                    )
                ),
            )
            self.cache[explanation.handle] = explanation
            self.cache_index[(pin, key)] = explanation.handle
            self.cache_bytes += byte_length(explanation.text or "") + 256 * (1 + len(revisions))
            while len(self.cache) > CACHE_ENTRIES or self.cache_bytes > CACHE_BYTES:
                _, old = self.cache.popitem(last=False)
                self.cache_index.pop((old.head, old.key), None)
                self.cache_bytes -= byte_length(old.text or "") + 256 * (1 + len(old.revisions))
            return explanation

    def nominate(self, keys: tuple[str, ...], route: str, purpose: str) -> Nomination:
        self.check_route(route, purpose)
        with self.working_lock:
            self.working_live.refresh()
            state = self.working_live.state
            records = closure(state, keys)
            head = Head(state.seq, state.digest)
        digest = nomination_digest(
            route=route,
            purpose=purpose,
            source=self.working_id,
            binding=self.binding,
            head=head,
            roots=keys,
            records=records,
        )
        return Nomination(route, purpose, self.working_id, self.binding, head, keys, records, digest)

    def check_route(self, route: str, purpose: str) -> None:
        if purpose not in self.routes.get(route, frozenset()):
            msg = (
                f"{UNBOUND_ROUTE}: no registered route {route!r} for purpose {purpose!r}; registered: "
                f"{sorted(self.routes)}"
            )
            raise ProfileError(msg)


def _ensure_header(journal: SessionJournal, live: LiveProjection[MemoryState], role: str) -> str:
    """The journal id of a memory journal of `role`, writing its header if the journal is empty."""
    if live.state.seq == 0:
        kind = role.replace("_", "-")
        header = Header(
            journal=f"{kind}-{new_id()}",
            creator="waybook.memory",
            metadata={"kind": kind, "scope": kind},
            role=role,
        )
        with contextlib.suppress(ConflictError):  # another authority or port wrote it first; read it below
            journal.append([NewRecord(id=new_id(), at=utc_now(), body=header)], expected=GENESIS)
        live.refresh()
    require_role(journal.name, live.state.role, role)
    assert live.state.journal_id is not None
    return live.state.journal_id
