"""Trace and span ids derived from a journal, and the records' times in nanoseconds.

A trace id is the first 16 bytes of a SHA-256 over the trace's shape, the journal id and the digest of the
record that opens the trace; a span id the first 8 bytes of one over the trace id, the journal id, the
span's role and the digest of the record it stands for. The same journal gives the same ids every time.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Final

from waybook.model import Record

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)


def _derived(size: int, *parts: str) -> int:
    digest = hashlib.sha256("\x1f".join(("waybook.otel/1", *parts)).encode()).digest()
    return int.from_bytes(digest[:size], "big") or 1  # an all-zero id is invalid in OpenTelemetry


def trace_id_of(shape: str, journal: str, opener_digest: str) -> int:
    return _derived(16, "trace", shape, journal, opener_digest)


def span_id_of(trace_id: int, journal: str, role: str, digest: str, detail: str = "") -> int:
    return _derived(8, "span", f"{trace_id:032x}", journal, role, digest, detail)


def _ns(at: str) -> int:
    moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MICROSECOND * 1000


def record_times(records: Sequence[Record]) -> list[int]:
    """Each record's time in ns; a timestamp that is not ISO 8601 takes the one before it."""
    times, last = [], 0
    for record in records:
        with contextlib.suppress(ValueError):
            last = _ns(record.at)
        times.append(last)
    return times
