"""Errors of the canonical memory authority. All are JournalErrors; each carries the data to act on."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Final

from waybook.model._errors import ConflictError, JournalError

if TYPE_CHECKING:
    from waybook.model._head import Head

ADOPTION_CONFLICT: Final = "The nominated records conflict with the current canonical memory head"


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


class RequestError(JournalError, ValueError):
    """A malformed request, refused when the method is called (before it waits for its turn)."""


class ExplanationExpiredError(JournalError, LookupError):
    """An explanation handle whose result the cache no longer holds; explain the key again."""


class AdoptionConflictError(ConflictError):
    """Adoption would overwrite canonical records the host did not review, or the heads moved.

    `conflicts` holds at most 128 (key, canonical digest, nominated digest) sorted by key (None: absent,
    or a tombstone); `total` counts
    them all, `truncated` says whether some are left out, and `conflicts_sha256` covers the full list.
    """

    LIMIT = 128

    def __init__(
        self,
        *,
        expected: Head,
        actual: Head,
        conflicts: list[tuple[str, str | None, str | None]],
        reason: str,
    ) -> None:
        ordered = sorted(conflicts, key=lambda c: c[0])
        self.expected = expected
        self.actual = actual
        self.total = len(ordered)
        self.conflicts = tuple(ordered[: self.LIMIT])
        self.truncated = len(ordered) > self.LIMIT
        self.conflicts_sha256 = hashlib.sha256(
            json.dumps(ordered, separators=(",", ":")).encode()
        ).hexdigest()
        shown = ", ".join(key for key, _, _ in self.conflicts[:5])
        msg = (
            f"{ADOPTION_CONFLICT}: {reason}; {self.total} conflicting records "
            f"({shown}{'…' if self.total > 5 else ''}). "
            f"Expected canonical head {expected}, found {actual}. Review the conflicts and pass replacements "
            "naming each key with the canonical digest you reviewed, or advance the pin first."
        )
        super().__init__(msg)
