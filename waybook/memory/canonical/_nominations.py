"""Nominations: records an agent proposes for canonical memory, with their dependency closure.

A nomination names root keys (memory paths) of working memory; its closure adds every record they link
to, transitively (markdown links and front-matter `links`). It also names its source journal and head,
the route and purpose, and a digest over all of that, so the host can check that the working journal
still exports exactly this closure before adopting it.
"""

from __future__ import annotations

from typing import Final

import attrs

from waybook.codecs import digest_of
from waybook.journal import byte_length, links_of
from waybook.memory._errors import AUTHORITY_LIMITS, RequestError
from waybook.memory.working import MemoryState
from waybook.model import CapacityError, Head

MAX_ROOTS: Final = AUTHORITY_LIMITS.max_nomination_roots
MAX_RECORDS: Final = AUTHORITY_LIMITS.max_nomination_records
MAX_BYTES: Final = AUTHORITY_LIMITS.max_nomination_bytes


@attrs.frozen
class NominatedRecord:
    """A record proposed for canonical memory: a key's text and content digest, or a tombstone (both
    None) for a key that working memory deleted."""

    key: str
    text: str | None
    digest: str | None

    @property
    def is_tombstone(self) -> bool:
        return self.digest is None


@attrs.frozen
class Nomination:
    route: str
    purpose: str
    source: str
    binding: str
    source_head: Head
    roots: tuple[str, ...]
    records: tuple[NominatedRecord, ...]
    digest: str

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(r.key for r in self.records)


def closure(state: MemoryState, roots: tuple[str, ...]) -> tuple[NominatedRecord, ...]:
    """The roots and every record they link to, transitively, sorted by key. Bounded before it grows."""
    if len(roots) > MAX_ROOTS:
        msg = f"a nomination names at most {MAX_ROOTS} roots, not {len(roots)}; nominate in smaller groups"
        raise CapacityError(msg)
    missing = [key for key in roots if key not in state.files and not state.history.get(key)]
    if missing:
        msg = f"cannot nominate keys that working memory never held: {', '.join(missing[:5])}"
        raise RequestError(msg)
    tombstones = [NominatedRecord(key, None, None) for key in roots if key not in state.files]
    seen: set[str] = set()
    pending = list(roots)
    size = 0
    while pending:
        key = pending.pop()
        if key in seen or key not in state.files:
            continue
        seen.add(key)
        file = state.files[key]
        size += byte_length(file.text)
        if len(seen) > MAX_RECORDS or size > MAX_BYTES:
            msg = f"the closure passes {MAX_RECORDS} records or {MAX_BYTES} bytes; nominate fewer roots"
            raise CapacityError(msg)
        pending.extend(sorted(links_of(file.text) - seen))
    records = [NominatedRecord(k, state.files[k].text, state.files[k].digest) for k in seen]
    return tuple(sorted([*records, *tombstones], key=lambda r: r.key))


def nomination_digest(
    *,
    route: str,
    purpose: str,
    source: str,
    binding: str,
    head: Head,
    roots: tuple[str, ...],
    records: tuple[NominatedRecord, ...],
) -> str:
    return digest_of(
        {
            "kind": "waybook.nomination/1",
            "route": route,
            "purpose": purpose,
            "source": source,
            "binding": binding,
            "source_head": {"seq": head.seq, "digest": head.digest},
            "roots": list(roots),
            "records": [{"key": r.key, "digest": r.digest} for r in records],
        }
    )
