"""The canonical memory authority: an agent proposes, trusted host code reviews, adopts and moves the pin.

`create_authority(working=..., canonical=..., routes=..., actor=...)` returns an `Authority` with two
faces. `authority.agent` has `remember`, `query`, `explain` and `nominate` and nothing else: it is what a
model tool gets, and it holds no reference a tool could follow to a journal, the host face or the
options (its methods close over the authority; the face itself has no attributes). `authority.host` has
`advance_canonical` and `adopt_nomination`, for trusted code only.

Host calls run one at a time in arrival order (both methods share one queue); agent calls never wait in
it. A host request is copied and validated when the method is called; a malformed one is refused then.
A call keeps its turn until its journal calls have finished and the new pin is installed; a failed call
gives its turn up and leaves the pin where it was. `create_async_authority` gives the same semantics
with coroutines.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from itertools import count
from typing import Any, Final

import attrs

from waybook.codecs.canonical import digest_of
from waybook.journal.clock import new_id, utc_now
from waybook.journal.errors import (
    CapacityError,
    ConflictError,
    IntegrityError,
    JournalError,
    StaleWriterError,
)
from waybook.journal.head import GENESIS, Head
from waybook.journal.ledger import check_line
from waybook.journal.protocol import SessionJournal
from waybook.journal.records import (
    Header,
    MemoryAdoption,
    MemoryDelete,
    MemoryPinMoved,
    MemoryWrite,
    NewRecord,
    Record,
)
from waybook.memory.errors import AdoptionConflictError, ExplanationExpiredError, ProfileError, RequestError
from waybook.memory.nominations import NominatedRecord, Nomination, closure, nomination_digest
from waybook.memory.outcomes import (
    AdoptionReceipt,
    Explanation,
    PinReceipt,
    QueryResult,
    RememberReceipt,
    Route,
    fields_digest,
    head_json,
)
from waybook.memory.paths import PathError, check_extension, normalize
from waybook.memory.state import MemoryProjection, MemoryState
from waybook.memory.text import byte_length, content_digest, is_valid_unicode
from waybook.memory.turns import AsyncTurns, Turns
from waybook.projections.base import LiveProjection, replay

MAX_ADVANCE_RECORDS: Final = 16_384
MAX_PAGES: Final = 64
PAGE_RECORDS: Final = 1_000
PAGE_BYTES: Final = 64 * 1024 * 1024
MAX_CANONICAL_RECORDS: Final = 8_192
MAX_CANONICAL_BYTES: Final = 32 * 1024 * 1024
MAX_REPLACEMENTS: Final = 128
CACHE_ENTRIES: Final = 256
CACHE_BYTES: Final = 64 * 1024 * 1024


# --- the core -------------------------------------------------------------------------------------


class _Core:
    def __init__(
        self,
        *,
        working: SessionJournal,
        canonical: SessionJournal,
        routes: Iterable[Route],
        actor: str,
        session: SessionJournal | None,
        pin: Head | None,
    ) -> None:
        self.working = working
        self.canonical = canonical
        self.session = session
        self.actor = actor
        self.routes = {r.name: frozenset(r.purposes) for r in routes}
        self.working_live = LiveProjection(MemoryProjection(), working)
        self.canonical_live = LiveProjection(MemoryProjection(), canonical)
        self.working_id = self._ensure_header(working, self.working_live, "working-memory")
        self.canonical_id = self._ensure_header(canonical, self.canonical_live, "canonical-memory")
        if working is canonical or self.working_id == self.canonical_id:
            msg = (
                f"working and canonical memory must be distinct stores; both are {self.working_id!r}. "
                "Give the authority two different journals"
            )
            raise ProfileError(msg)
        self.binding = digest_of(
            {
                "kind": "waybook.binding/1",
                "canonical": self.canonical_id,
                "routes": {name: sorted(purposes) for name, purposes in sorted(self.routes.items())},
            }
        )
        start = Head(self.canonical_live.state.seq, self.canonical_live.state.digest) if pin is None else pin
        view = replay(MemoryProjection(), canonical, at=start.seq)
        if Head(view.seq, view.digest) != start:
            msg = f"{self.canonical_id}: the pin {start} is not a head of the canonical journal"
            raise IntegrityError(msg)
        self.pinned: tuple[Head, MemoryState] = (start, view)
        self.working_lock = threading.Lock()
        self.cache: OrderedDict[int, Explanation] = OrderedDict()
        self.cache_index: dict[tuple[Head, str], int] = {}
        self.cache_bytes = 0
        self.cache_lock = threading.Lock()
        self.clock = count(1)

    @staticmethod
    def _ensure_header(journal: SessionJournal, live: LiveProjection[MemoryState], kind: str) -> str:
        if live.state.seq == 0:
            header = Header(
                journal=f"{kind}-{new_id()}", creator="waybook.memory", metadata={"kind": kind, "scope": kind}
            )
            with contextlib.suppress(ConflictError):
                journal.append([NewRecord(id=new_id(), at=utc_now(), body=header)], expected=GENESIS)
            live.refresh()
        if live.state.journal_id is None:
            msg = f"{journal.name} has no header; it is not a memory journal"
            raise ProfileError(msg)
        return live.state.journal_id

    # --- agent calls (never queued) -----------------------------------------------------------

    def remember(
        self, request_id: str, puts: tuple[tuple[str, str], ...], tombstones: tuple[str, ...]
    ) -> RememberReceipt:
        with self.working_lock:
            for _attempt in range(8):
                self.working_live.refresh()
                state = self.working_live.state
                if request_id in state.requests:
                    return self._remember_receipt(request_id, state, puts, tombstones)
                bodies: list[MemoryWrite | MemoryDelete] = [
                    MemoryWrite(
                        path=key,
                        text=text,
                        digest=content_digest(text),
                        prior=state.files[key].digest if key in state.files else None,
                        command="remember",
                        call_id=request_id,
                    )
                    for key, text in puts
                ]
                gone = tuple(key for key in tombstones if key in state.files)
                if gone:
                    bodies.append(MemoryDelete(paths=gone, reason="remember", call_id=request_id))
                if not bodies:
                    msg = "remember needs at least one put, or a tombstone for a key that exists"
                    raise RequestError(msg)
                batch = [NewRecord(id=new_id(), at=utc_now(), body=body) for body in bodies]
                try:
                    self.working.append(batch, expected=Head(state.seq, state.digest))
                except StaleWriterError:
                    continue
                self.working_live.refresh()
                return self._remember_receipt(request_id, self.working_live.state, puts, tombstones)
        msg = f"{self.working_id}: remember lost the compare-and-append race 8 times; try again"
        raise ConflictError(msg)

    def _remember_receipt(
        self,
        request_id: str,
        state: MemoryState,
        puts: tuple[tuple[str, str], ...],
        tombstones: tuple[str, ...],
    ) -> RememberReceipt:
        first, last = state.requests[request_id]
        records = list(self.working.read(after=first - 1, limit=last - first + 1))
        written = {(r.body.path, r.body.digest) for r in records if isinstance(r.body, MemoryWrite)}
        if written != {(key, content_digest(text)) for key, text in puts}:
            msg = f"request id {request_id!r} was already used for different records; use a new request id"
            raise RequestError(msg)
        head = Head.of(records[-1])
        fields = {
            "kind": "waybook.remember_receipt/1",
            "authority": self.working_id,
            "request": request_id,
            "first_seq": first,
            "head": head_json(head),
        }
        return RememberReceipt(self.working_id, request_id, first, head, fields_digest(fields))

    def query(self, keys: Iterable[str] | None, prefix: str | None) -> QueryResult:
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
        self._check_route(route, purpose)
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

    def _check_route(self, route: str, purpose: str) -> None:
        if purpose not in self.routes.get(route, frozenset()):
            msg = f"no registered route {route!r} for purpose {purpose!r}; registered: {sorted(self.routes)}"
            raise ProfileError(msg)

    # --- host calls (run one at a time by the caller's turn queue) ---------------------------

    def advance(self, expected: Head, target: Head) -> PinReceipt:
        pin, view = self.pinned
        if expected != pin:
            msg = f"expected head {expected} does not match the current pin {pin}; nothing changed"
            raise ConflictError(msg)
        if target == pin:
            return PinReceipt.make(self.canonical_id, self.binding, pin, pin, "unchanged")
        if target.seq <= pin.seq:
            msg = (
                f"next head {target} is not a descendant of the pin {pin} (rollback or fork); nothing changed"
            )
            raise ConflictError(msg)
        if target.seq - pin.seq > MAX_ADVANCE_RECORDS:
            msg = (
                f"advancing from seq {pin.seq} to {target.seq} would prove {target.seq - pin.seq} records; "
                "at most "
                f"{MAX_ADVANCE_RECORDS} per call. Advance in reviewed chunks"
            )
            raise CapacityError(msg)
        new_view = self._proven_view(pin, view, target)
        receipt = PinReceipt.make(self.canonical_id, self.binding, pin, target, "advanced")
        self._install(target, new_view, receipt.receipt_sha256, pin)
        return receipt

    def _proven_view(self, pin: Head, view: MemoryState, target: Head) -> MemoryState:
        """Read the canonical feed from `pin` to `target` in bounded pages, prove it, and fold it."""
        seq, prev = pin.seq, pin.digest
        records: list[Record] = []
        for _page in range(MAX_PAGES):
            if seq >= target.seq:
                break
            lines = list(self.canonical.read_lines(after=seq, limit=min(PAGE_RECORDS, target.seq - seq)))
            if not lines:
                msg = (
                    f"{self.canonical_id}: the feed ends at seq {seq}, before the next head {target} (a gap)"
                )
                raise IntegrityError(msg)
            if sum(len(line) for line in lines) > PAGE_BYTES:
                msg = f"{self.canonical_id}: a page of the feed is larger than {PAGE_BYTES} bytes"
                raise CapacityError(msg)
            for line in lines:
                try:
                    record = check_line(line, seq + 1, prev, self.canonical_id)
                except JournalError as exc:
                    msg = f"{self.canonical_id}: malformed feed at seq {seq + 1}: {exc}"
                    raise IntegrityError(msg) from exc
                records.append(record)
                seq, prev = record.seq, record.digest
        if Head(seq, prev) != target:
            msg = f"{self.canonical_id}: the feed ends at {Head(seq, prev)}, not at the next head {target}"
            raise IntegrityError(msg)
        new_view = view.copy()
        projection = MemoryProjection()
        for record in records:
            projection.apply(new_view, record)
        return new_view

    def _install(self, head: Head, view: MemoryState, receipt: str, prior: Head) -> None:
        self.pinned = (head, view)  # one assignment: queries see the old pin or the new, never a mix
        if self.session is not None:
            body = MemoryPinMoved(
                canonical=self.canonical_id,
                prior_seq=prior.seq,
                prior_digest=prior.digest,
                new_seq=head.seq,
                new_digest=head.digest,
                receipt=receipt,
            )
            for _attempt in range(16):
                try:
                    self.session.append(
                        [NewRecord(id=new_id(), at=utc_now(), body=body)], expected=self.session.head()
                    )
                    break
                except StaleWriterError:
                    continue

    def adopt(
        self, expected: Head, nomination: Nomination, replacements: tuple[tuple[str, str], ...]
    ) -> AdoptionReceipt:
        self._check_route(nomination.route, nomination.purpose)
        if nomination.source != self.working_id or nomination.binding != self.binding:
            msg = "the nomination comes from another working journal or binding than this authority's"
            raise ProfileError(msg)
        self._check_reexport(nomination)
        self.canonical_live.refresh()
        current_state = self.canonical_live.state
        current = Head(current_state.seq, current_state.digest)
        pin, view = self.pinned
        replace = dict(replacements)
        puts: list[tuple[NominatedRecord, str | None]] = []
        conflicts: list[tuple[str, str | None, str]] = []
        for record in nomination.records:
            existing = current_state.files.get(record.key)
            if existing is None:
                if record.key in replace:
                    conflicts.append((record.key, None, record.digest))
                else:
                    puts.append((record, None))
            elif existing.digest == record.digest:
                continue
            elif replace.get(record.key) == existing.digest:
                puts.append((record, existing.digest))
            else:
                conflicts.append((record.key, existing.digest, record.digest))
        if not puts and not conflicts:
            return self._already_present(nomination, pin, view, current)
        if not (expected == pin == current):
            raise AdoptionConflictError(
                expected=expected,
                actual=current,
                conflicts=conflicts or [(r.key, None, r.digest) for r, _ in puts],
                reason="the expected head, the pin and the canonical head do not agree",
            )
        if conflicts:
            raise AdoptionConflictError(
                expected=expected, actual=current, conflicts=conflicts, reason="canonical records differ"
            )
        new_keys = sum(1 for r, prior in puts if prior is None)
        grown = current_state.total_bytes + sum(
            byte_length(r.text) - (current_state.files[r.key].size if prior else 0) for r, prior in puts
        )
        if len(current_state.files) + new_keys > MAX_CANONICAL_RECORDS or grown > MAX_CANONICAL_BYTES:
            msg = (
                f"adopting would grow canonical memory to {len(current_state.files) + new_keys} records and "
                f"{grown} bytes; the limits are {MAX_CANONICAL_RECORDS} records, {MAX_CANONICAL_BYTES} bytes"
            )
            raise CapacityError(msg)
        operation = (
            "memory_adopt_"
            + hashlib.sha256(
                "\n".join(
                    [self.actor, self.binding, nomination.digest, str(current.seq), current.digest]
                ).encode()
            ).hexdigest()[:48]
        )
        at = utc_now()
        batch = [
            NewRecord(
                id=operation,
                at=at,
                body=MemoryAdoption(
                    operation=operation,
                    actor=self.actor,
                    binding=self.binding,
                    nomination=nomination.digest,
                    source=nomination.source,
                    source_seq=nomination.source_head.seq,
                    source_digest=nomination.source_head.digest,
                    prior_seq=current.seq,
                    prior_digest=current.digest,
                    writes=len(puts),
                    replaced=tuple(sorted(r.key for r, prior in puts if prior)),
                ),
            ),
            *(
                NewRecord(
                    id=f"{operation}:{i}",
                    at=at,
                    body=MemoryWrite(
                        path=r.key,
                        text=r.text,
                        digest=r.digest,
                        prior=prior,
                        command="adopt",
                        call_id=operation,
                    ),
                )
                for i, (r, prior) in enumerate(puts, start=1)
            ),
        ]
        try:
            result = self.canonical.append(batch, expected=current)  # exactly one attempt
        except StaleWriterError:
            self.canonical_live.refresh()
            later = self.canonical_live.state
            if all(
                later.files.get(r.key) is not None and later.files[r.key].digest == r.digest
                for r in nomination.records
            ):
                return self._already_present(nomination, pin, view, Head(later.seq, later.digest))
            raise AdoptionConflictError(
                expected=expected,
                actual=Head(later.seq, later.digest),
                conflicts=[(r.key, None, r.digest) for r, _ in puts],
                reason="another writer changed canonical memory during the adoption",
            ) from None
        if [r.id for r in result.records] != [n.id for n in batch] or result.prior != current:
            msg = f"{self.canonical_id}: the journal did not commit the operation that was sent"
            raise IntegrityError(msg)
        new_view = self._proven_view(pin, view, result.head)
        self._prove_later_writes(result.head, new_view)
        receipt = AdoptionReceipt.make(
            actor=self.actor,
            authority=self.canonical_id,
            binding=self.binding,
            nomination=nomination.digest,
            prior=current,
            new=result.head,
            status="adopted",
            operation=operation,
            operation_digest=result.records[0].digest,
        )
        self._install(result.head, new_view, receipt.receipt_sha256, pin)
        return receipt

    def _prove_later_writes(self, ours: Head, view: MemoryState) -> None:
        """If other writes landed after ours, prove the journal's history continues from what we wrote.

        The pin stays at our head; the host reviews the later writes with advance_canonical. A later
        history that does not chain to our records is an IntegrityError (raised from `_proven_view`).
        """
        self.canonical_live.refresh()
        later = Head(self.canonical_live.state.seq, self.canonical_live.state.digest)
        if later != ours and later.seq - ours.seq <= MAX_ADVANCE_RECORDS:
            self._proven_view(ours, view, later)

    def _already_present(
        self, nomination: Nomination, pin: Head, view: MemoryState, current: Head
    ) -> AdoptionReceipt:
        if current != pin:
            if current.seq - pin.seq > MAX_ADVANCE_RECORDS:
                msg = f"the canonical head is {current.seq - pin.seq} records past the pin; advance in chunks"
                raise CapacityError(msg)
            new_view = self._proven_view(pin, view, current)
        receipt = AdoptionReceipt.make(
            actor=self.actor,
            authority=self.canonical_id,
            binding=self.binding,
            nomination=nomination.digest,
            prior=pin,
            new=current,
            status="already-present",
            operation=None,
            operation_digest=None,
        )
        if current != pin:
            self._install(current, new_view, receipt.receipt_sha256, pin)
        return receipt

    def _check_reexport(self, nomination: Nomination) -> None:
        """The working journal must export exactly this closure at the nomination's source head."""
        source = replay(MemoryProjection(), self.working, at=nomination.source_head.seq)
        if Head(source.seq, source.digest) != nomination.source_head:
            head = nomination.source_head
            msg = f"{self.working_id} lacks head {head}: the nomination is from another history"
            raise IntegrityError(msg)
        try:
            records = closure(source, nomination.roots)
        except (RequestError, CapacityError) as exc:
            msg = f"the working journal cannot re-export the nominated closure: {exc}"
            raise IntegrityError(msg) from exc
        digest = nomination_digest(
            route=nomination.route,
            purpose=nomination.purpose,
            source=nomination.source,
            binding=nomination.binding,
            head=nomination.source_head,
            roots=nomination.roots,
            records=records,
        )
        if records != nomination.records or digest != nomination.digest:
            msg = "the nominated closure differs from what the working journal exports at its source head"
            raise IntegrityError(msg)


# --- request copying ------------------------------------------------------------------------------


def _head(value: Any, what: str) -> Head:
    if not isinstance(value, Head):
        msg = f"{what} must be a Head (seq, digest), not {type(value).__name__}"
        raise RequestError(msg)
    return Head(value.seq, value.digest)


def _key(value: Any) -> str:
    try:
        key = normalize(value)
        check_extension(key)
    except PathError as exc:
        raise RequestError(str(exc)) from None
    return key


def _remember_request(
    request_id: Any, puts: Any, tombstones: Any
) -> tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]:
    if not isinstance(request_id, str) or not request_id:
        msg = "remember needs a request_id (a non-empty string) so a retry is idempotent"
        raise RequestError(msg)
    pairs = list(puts.items()) if isinstance(puts, Mapping) else list(puts or ())
    copied: list[tuple[str, str]] = []
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2 or not isinstance(pair[1], str):
            msg = "puts are (key, text) pairs with text a string"
            raise RequestError(msg)
        if not is_valid_unicode(pair[1]):
            msg = f"the text for {pair[0]!r} is not valid Unicode"
            raise RequestError(msg)
        copied.append((_key(pair[0]), pair[1]))
    if len({k for k, _ in copied}) != len(copied):
        msg = "a key appears twice among the puts"
        raise RequestError(msg)
    gone = tuple(_key(k) for k in (tombstones or ()))
    return request_id, tuple(copied), gone


def _replacements(value: Any, nomination: Nomination) -> tuple[tuple[str, str], ...]:
    pairs = list(value.items()) if isinstance(value, Mapping) else list(value or ())
    if len(pairs) > MAX_REPLACEMENTS:
        msg = f"at most {MAX_REPLACEMENTS} replacements per adoption, not {len(pairs)}"
        raise RequestError(msg)
    if not all(
        isinstance(p, tuple | list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs
    ):
        msg = "replacements are (key, reviewed canonical digest) pairs of strings"
        raise RequestError(msg)
    keys: list[str] = [p[0] for p in pairs]
    if len(set(keys)) != len(keys):
        msg = "a key appears twice among the replacements"
        raise RequestError(msg)
    unknown = sorted(set(keys) - set(nomination.keys))
    if unknown:
        msg = f"replacements name keys the nomination does not hold: {', '.join(unknown[:5])}"
        raise RequestError(msg)
    return tuple((k, d) for k, d in pairs)


def _nomination(value: Any) -> Nomination:
    if not isinstance(value, Nomination):
        msg = f"adopt_nomination takes a Nomination, not {type(value).__name__}"
        raise RequestError(msg)
    return value


# --- faces ----------------------------------------------------------------------------------------


class AgentFace:
    """What a model tool gets: remember, query, explain, nominate. It has no other attributes."""

    __slots__ = ()


class HostFace:
    """For trusted host code only: advance_canonical and adopt_nomination."""

    __slots__ = ()


@attrs.frozen
class Authority:
    agent: AgentFace
    host: HostFace


def _agent_face(core: _Core) -> AgentFace:
    class Agent(AgentFace):
        __slots__ = ()

        def remember(
            self,
            request_id: str,
            puts: Mapping[str, str] | Sequence[tuple[str, str]],
            tombstones: Sequence[str] = (),
        ) -> RememberReceipt:
            return core.remember(*_remember_request(request_id, puts, tombstones))

        def query(self, keys: Iterable[str] | None = None, *, prefix: str | None = None) -> QueryResult:
            return core.query(keys, prefix)

        def explain(self, key: str | None = None, *, handle: int | None = None) -> Explanation:
            return core.explain(key, handle)

        def nominate(self, keys: Sequence[str], route: str, purpose: str) -> Nomination:
            return core.nominate(tuple(_key(k) for k in keys), route, purpose)

    return Agent()


def _host_face(core: _Core) -> HostFace:
    turns = Turns()

    class Host(HostFace):
        __slots__ = ()

        def advance_canonical(self, expected_head: Head, next_head: Head) -> PinReceipt:
            expected, target = _head(expected_head, "expected_head"), _head(next_head, "next_head")
            with turns.turn(turns.take()):
                return core.advance(expected, target)

        def adopt_nomination(
            self,
            expected_canonical_head: Head,
            nomination: Nomination,
            replacements: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
        ) -> AdoptionReceipt:
            expected = _head(expected_canonical_head, "expected_canonical_head")
            nominated = _nomination(nomination)
            replace = _replacements(replacements, nominated)
            with turns.turn(turns.take()):
                return core.adopt(expected, nominated, replace)

    return Host()


def create_authority(
    *,
    working: SessionJournal,
    canonical: SessionJournal,
    routes: Iterable[Route],
    actor: str,
    session: SessionJournal | None = None,
    pin: Head | None = None,
) -> Authority:
    """An authority over two journals it borrows (it never closes them). The pin starts at `pin`, or at
    the canonical journal's head. With `session`, every pin move is also recorded there."""
    core = _Core(working=working, canonical=canonical, routes=routes, actor=actor, session=session, pin=pin)
    return Authority(agent=_agent_face(core), host=_host_face(core))


# --- asyncio --------------------------------------------------------------------------------------


class AsyncAgentFace:
    __slots__ = ()


class AsyncHostFace:
    __slots__ = ()


@attrs.frozen
class AsyncAuthority:
    agent: AsyncAgentFace
    host: AsyncHostFace


def create_async_authority(
    *,
    working: SessionJournal,
    canonical: SessionJournal,
    routes: Iterable[Route],
    actor: str,
    session: SessionJournal | None = None,
    pin: Head | None = None,
) -> AsyncAuthority:
    """The same authority with coroutine methods. Host calls queue in arrival order on the event loop;
    journal work runs in a worker thread so the loop is never blocked."""
    core = _Core(working=working, canonical=canonical, routes=routes, actor=actor, session=session, pin=pin)
    turns = AsyncTurns()

    class Agent(AsyncAgentFace):
        __slots__ = ()

        async def remember(
            self, request_id: str, puts: Any, tombstones: Sequence[str] = ()
        ) -> RememberReceipt:
            request = _remember_request(request_id, puts, tombstones)
            return await asyncio.to_thread(core.remember, *request)

        async def query(self, keys: Iterable[str] | None = None, *, prefix: str | None = None) -> QueryResult:
            return core.query(None if keys is None else list(keys), prefix)

        async def explain(self, key: str | None = None, *, handle: int | None = None) -> Explanation:
            return core.explain(key, handle)

        async def nominate(self, keys: Sequence[str], route: str, purpose: str) -> Nomination:
            copied = tuple(_key(k) for k in keys)
            return await asyncio.to_thread(core.nominate, copied, route, purpose)

    class Host(AsyncHostFace):
        __slots__ = ()

        async def advance_canonical(self, expected_head: Head, next_head: Head) -> PinReceipt:
            expected, target = _head(expected_head, "expected_head"), _head(next_head, "next_head")
            ticket = turns.take()
            await turns.acquire(ticket)
            try:
                return await asyncio.to_thread(core.advance, expected, target)
            finally:
                await turns.release()

        async def adopt_nomination(
            self, expected_canonical_head: Head, nomination: Nomination, replacements: Any = None
        ) -> AdoptionReceipt:
            expected = _head(expected_canonical_head, "expected_canonical_head")
            nominated = _nomination(nomination)
            replace = _replacements(replacements, nominated)
            ticket = turns.take()
            await turns.acquire(ticket)
            try:
                return await asyncio.to_thread(core.adopt, expected, nominated, replace)
            finally:
                await turns.release()

    return AsyncAuthority(agent=Agent(), host=Host())
