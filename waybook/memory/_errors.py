"""Errors of the canonical memory authority. All are JournalErrors; each carries the data to act on."""

from __future__ import annotations

import hashlib
import json
from typing import Final

import attrs

from waybook.model import ConflictError, Head, JournalError

ADOPTION_CONFLICT: Final = "The nominated records conflict with the current canonical memory head"


@attrs.frozen
class AuthorityLimits:
    """The canonical authority's bounds, in one public value (the design's OH_MEMORY_AUTHORITY_LIMITS_V1)."""

    max_proof_records: int = 16_384
    """Records one advance (or an adoption's move of the pin) may prove."""
    max_pages: int = 64
    page_records: int = 1_000
    page_bytes: int = 64 * 1024 * 1024
    max_replacements: int = 128
    max_conflicts: int = 128
    """Conflicts an AdoptionConflictError lists (the rest counted in `total`)."""
    max_canonical_records: int = 8_192
    max_canonical_bytes: int = 32 * 1024 * 1024
    max_nomination_roots: int = 1_024
    max_nomination_records: int = 8_192
    max_nomination_bytes: int = 64 * 1024 * 1024
    cache_entries: int = 256
    cache_bytes: int = 64 * 1024 * 1024


AUTHORITY_LIMITS: Final = AuthorityLimits()
OH_MEMORY_AUTHORITY_LIMITS_V1: Final = AUTHORITY_LIMITS


@attrs.frozen
class AdoptionConflict:
    """One adoption conflict: the heads, how many records conflict, up to 128 of them sorted by key
    (key, canonical digest, nominated digest), whether some are left out, and a SHA-256 over them all."""

    expected: Head
    actual: Head
    total: int
    conflicts: tuple[tuple[str, str | None, str | None], ...]
    truncated: bool
    conflicts_sha256: str


class ProfileError(JournalError, ValueError):
    """A request does not fit this authority's profile: wrong route or purpose, foreign journal or binding,
    or two journals that are the same store."""


def require_role(journal: str, actual: str | None, expected: str) -> None:
    """ProfileError unless the journal's header declares `expected` as its role."""
    if actual != expected:
        msg = (
            f"{journal} is a {actual or 'headerless'} journal, not a {expected} journal; "
            f"give a journal created for {expected} (its header declares role {expected!r})"
        )
        raise ProfileError(msg)


class RequestError(JournalError, TypeError, ValueError):
    """A malformed request, refused when the method is called (before it waits for its turn). A TypeError
    (the design rejects malformed requests with TypeError), still a ValueError as it was."""


class ExplanationExpiredError(JournalError, LookupError):
    """An explanation handle whose result the cache no longer holds; explain the key again."""


class AdoptionConflictError(ConflictError):
    """Adoption would overwrite canonical records the host did not review, or the heads moved.

    `conflicts` holds at most 128 (key, canonical digest, nominated digest) sorted by key (None: absent,
    or a tombstone); `total` counts
    them all, `truncated` says whether some are left out, and `conflicts_sha256` covers the full list.
    """

    LIMIT = AUTHORITY_LIMITS.max_conflicts

    def __init__(
        self,
        *,
        expected: Head,
        actual: Head,
        conflicts: list[tuple[str, str | None, str | None]],
        reason: str,
    ) -> None:
        ordered = sorted(conflicts, key=lambda c: c[0])
        self.conflict = AdoptionConflict(
            expected=expected,
            actual=actual,
            total=len(ordered),
            conflicts=tuple(ordered[: self.LIMIT]),
            truncated=len(ordered) > self.LIMIT,
            conflicts_sha256=hashlib.sha256(json.dumps(ordered, separators=(",", ":")).encode()).hexdigest(),
        )
        # The conflict's fields, also as attributes of the error (what callers read before `conflict`).
        self.expected, self.actual, self.total = expected, actual, self.conflict.total
        self.conflicts, self.truncated = self.conflict.conflicts, self.conflict.truncated
        self.conflicts_sha256 = self.conflict.conflicts_sha256
        shown = ", ".join(key for key, _, _ in self.conflicts[:5])
        msg = (
            f"{ADOPTION_CONFLICT}: {reason}; {self.total} conflicting records "
            f"({shown}{'…' if self.total > 5 else ''}). "
            f"Expected canonical head {expected}, found {actual}. Review the conflicts and pass replacements "
            "naming each key with the canonical digest you reviewed, or advance the pin first."
        )
        super().__init__(msg)
