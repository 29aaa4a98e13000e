"""The pin is a projection: the last pin record for a canonical journal in a session or pin journal.

Every host call of an authority ends by recording its outcome (`waybook.memory.pin_moved/1`: prior and
new canonical heads, status and the receipt's fields) in the authority's pin journal, and the pin moves
only once that record has committed. A new authority over the same journals starts at the recorded pin;
with no pin record yet it starts at the canonical journal's header (nothing reviewed).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Final

from waybook.journal import SessionJournal, new_id, utc_now
from waybook.memory._errors import ProfileError
from waybook.model import ConflictError, Head, Header, MemoryPinMoved, NewRecord, StaleWriterError

RECORD_ATTEMPTS: Final = 16
PIN_ROLES: Final = ("session", "pin")


class PinLog:
    """Reads and records the pin of one canonical journal in a session (role `session`) or pin journal."""

    def __init__(self, journal: SessionJournal, canonical: str, *, create: bool) -> None:
        self.journal = journal
        self.canonical = canonical
        self._lock = threading.Lock()
        self._seen = 0
        self._last: Head | None = None
        self._arrived: Head | None = None
        self._receipts: set[str] = set()
        if create and journal.head().seq == 0:
            header = Header(
                journal=f"pins-{new_id()}",
                creator="waybook.memory",
                metadata={"canonical": canonical},
                role="pin",
            )
            with contextlib.suppress(ConflictError):  # another authority created it first
                journal.append([NewRecord(id=new_id(), at=utc_now(), body=header)], expected=journal.head())
        first = next(iter(journal.read(limit=1)), None)
        role = first.body.role if first is not None and isinstance(first.body, Header) else None
        if role not in PIN_ROLES:
            msg = (
                f"{journal.name} is a {role or 'headerless'} journal; an authority records its pin in a "
                "session journal (role 'session') or a pin journal (role 'pin')"
            )
            raise ProfileError(msg)
        serves = (
            first.body.metadata.get("canonical")
            if first is not None and isinstance(first.body, Header)
            else None
        )
        if role == "pin" and serves not in (None, canonical):
            msg = f"{journal.name} records the pin of {serves!r}, not of {canonical!r}; give each its own"
            raise ProfileError(msg)

    def last(self) -> Head | None:
        """The canonical head of the last pin record for this canonical journal, or None."""
        with self._lock:
            for record in self.journal.read(after=self._seen):
                body = record.body
                if isinstance(body, MemoryPinMoved) and body.canonical == self.canonical:
                    self._receipts.add(body.receipt)
                    new = Head(body.new_seq, body.new_digest)
                    if new != self._last:
                        self._arrived = Head(body.prior_seq, body.prior_digest)
                    self._last = new
                self._seen = record.seq
            return self._last

    def receipts(self) -> frozenset[str]:
        """The receipts of every host call recorded for this canonical journal."""
        self.last()
        with self._lock:
            return frozenset(self._receipts)

    def has_receipt(self, receipt: str) -> bool:
        """Whether a host call with this receipt is recorded for this canonical journal (O(1))."""
        self.last()
        with self._lock:
            return receipt in self._receipts

    def arrived_from(self) -> Head | None:
        """The prior head of the record that moved the pin to where it is (None: never moved).

        A retry of that very move (a lost reply) presents this head as its expected head.
        """
        self.last()
        with self._lock:
            return self._arrived if self._arrived != self._last else None

    def record(self, body: MemoryPinMoved) -> None:
        """Append `body` if the recorded pin is still its prior head; the caller's pin moves only after.

        Losing the compare-and-append race to other writers of the journal is retried (their records do
        not move the pin); a pin moved by someone else is a ConflictError, and so is losing 16 times.
        """
        prior = Head(body.prior_seq, body.prior_digest)
        for _attempt in range(RECORD_ATTEMPTS):
            head = self.journal.head()
            last = self.last()
            if last is not None and last != prior:
                msg = (
                    f"{self.journal.name}: the pin of {self.canonical} moved to {last} while this call "
                    f"started from {prior}; nothing was recorded. Read the pin again and retry"
                )
                raise ConflictError(msg)
            try:
                self.journal.append([NewRecord(id=new_id(), at=utc_now(), body=body)], expected=head)
            except StaleWriterError:
                continue
            return
        msg = (
            f"{self.journal.name}: recording the pin lost the compare-and-append race {RECORD_ATTEMPTS} "
            "times to other writers; the pin did not move. Retry the same request"
        )
        raise ConflictError(msg)
