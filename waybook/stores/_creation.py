"""What every store's `create` shares: the default clock and ids, and the checks and sealed header line
of a new journal (typed errors, nothing written)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import msgspec

from waybook.codecs import ENCODER, seal
from waybook.journal import Ledger
from waybook.model import GENESIS_DIGEST
from waybook.stores._catalog import check_journal_id, check_role, header_record
from waybook.stores._errors import StoreArgumentError


def store_clock() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def store_ids() -> str:
    return secrets.token_hex(8)


def check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of `metadata` if it is a JSON object with string keys, else StoreArgumentError."""
    value = dict(metadata or {})
    try:
        ENCODER.encode(value)
    except (TypeError, msgspec.EncodeError) as exc:
        msg = f"journal metadata must be JSON (strings, numbers, booleans, lists, objects): {exc}"
        raise StoreArgumentError(msg) from exc
    if not all(type(key) is str for key in value):
        msg = "journal metadata keys must be strings"
        raise StoreArgumentError(msg)
    return value


def first_line(journal_id: str, role: str, metadata: dict[str, Any], *, record_id: str, at: str) -> bytes:
    """The sealed header line of a new journal, checked by the session rules before anything is written."""
    new = header_record(journal_id, role, metadata, record_id=record_id, at=at)
    Ledger.empty(journal_id).rules.check((new,))
    return seal(1, new, GENESIS_DIGEST)[1]


def checked_creation(
    journal_id: str,
    role: str,
    metadata: Mapping[str, Any] | None,
    *,
    header: bool,
    ids: Callable[[], str],
    clock: Callable[[], str],
) -> tuple[dict[str, Any], bytes | None]:
    """Validate a `create` (typed errors, nothing written) and seal the new journal's header line, if any.

    Every store's `create` starts here, so the rules for ids, roles and metadata are written once.
    """
    check_journal_id(journal_id)
    check_role(role)
    meta = check_metadata(metadata)
    line = first_line(journal_id, role, meta, record_id=ids(), at=clock()) if header else None
    return meta, line
