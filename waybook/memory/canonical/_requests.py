"""Copying and validating authority requests when the method is called, before any turn is taken.

A malformed request raises RequestError at once; the copies are frozen, so changing the caller's
objects afterwards changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from waybook.journal._roles.memory_paths import MAX_PATH_BYTES, PathError, check_extension, normalize
from waybook.journal._roles.memory_text import front_matter, is_valid_unicode
from waybook.memory._errors import AUTHORITY_LIMITS, RequestError
from waybook.memory.canonical._nominations import NominatedRecord, Nomination
from waybook.model._head import Head

MAX_REPLACEMENTS: Final = AUTHORITY_LIMITS.max_replacements
INVALID_ADVANCE: Final = "Invalid canonical memory advance request"
INVALID_ADOPTION: Final = "Invalid memory adoption request"
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")


def digest_arg(value: Any, what: str) -> str:
    if type(value) is not str or not _DIGEST.fullmatch(value):
        msg = f"{what} must be a SHA-256 digest (64 lowercase hex characters), not {value!r:.80}"
        raise RequestError(msg)
    return value


def head_arg(value: Any, what: str) -> Head:
    """A copy of a Head whose seq is a non-negative int and whose digest is 64 lowercase hex."""
    if not isinstance(value, Head):
        msg = f"{what} must be a Head (seq, digest), not {type(value).__name__}"
        raise RequestError(msg)
    if type(value.seq) is not int or value.seq < 0:
        msg = f"{what}.seq must be a non-negative int, not {value.seq!r:.80}"
        raise RequestError(msg)
    return Head(value.seq, digest_arg(value.digest, f"{what}.digest"))


def key_arg(value: Any) -> str:
    try:
        key = normalize(value)
        check_extension(key)
    except PathError as exc:
        raise RequestError(str(exc)) from None
    return key


def remember_request(
    request_id: Any, puts: Any, tombstones: Any
) -> tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]:
    if not isinstance(request_id, str) or not request_id:
        msg = "remember needs a request_id (a non-empty string) so a retry is idempotent"
        raise RequestError(msg)
    if len(request_id.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        msg = f"request_id is longer than {MAX_PATH_BYTES} bytes (the limit of memory's paths and ids)"
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
        if front_matter(pair[1]).read_only:
            msg = f"the text for {pair[0]!r} says `read_only: true`: the host sets that, not the agent"
            raise RequestError(msg)
        copied.append((key_arg(pair[0]), str(pair[1])))
    if isinstance(tombstones, str):
        msg = "tombstones is a list of keys, not one string"
        raise RequestError(msg)
    gone = tuple(key_arg(k) for k in (tombstones or ()))
    keys = [k for k, _ in copied] + list(gone)
    if len(set(keys)) != len(keys):
        msg = "a key appears twice among the puts and tombstones"
        raise RequestError(msg)
    return request_id, tuple(copied), gone


def keys_arg(keys: Any) -> tuple[str, ...]:
    if isinstance(keys, str):
        msg = "keys is a list of memory paths, not one string"
        raise RequestError(msg)
    return tuple(key_arg(k) for k in keys)


def nomination_arg(value: Any) -> Nomination:
    """A validated copy of a Nomination (every field's type and form checked now, not when it runs)."""
    if not isinstance(value, Nomination):
        msg = f"adopt_nomination takes a Nomination, not {type(value).__name__}"
        raise RequestError(msg)
    for name in ("route", "purpose", "source"):
        if type(getattr(value, name)) is not str:
            msg = f"nomination.{name} must be a string"
            raise RequestError(msg)
    if not isinstance(value.roots, tuple) or not isinstance(value.records, tuple):
        msg = "nomination.roots and nomination.records must be tuples"
        raise RequestError(msg)
    records = []
    for record in value.records:
        if not isinstance(record, NominatedRecord):
            msg = f"nomination.records holds {type(record).__name__}, not NominatedRecord"
            raise RequestError(msg)
        if (record.text is None) != (record.digest is None) or not (
            record.text is None or type(record.text) is str
        ):
            msg = f"nominated record {record.key!r} needs a text and its digest, or neither (a tombstone)"
            raise RequestError(msg)
        digest = None if record.digest is None else digest_arg(record.digest, f"digest of {record.key!r}")
        records.append(NominatedRecord(key_arg(record.key), record.text, digest))
    return Nomination(
        value.route,
        value.purpose,
        value.source,
        digest_arg(value.binding, "nomination.binding"),
        head_arg(value.source_head, "nomination.source_head"),
        tuple(key_arg(k) for k in value.roots),
        tuple(records),
        digest_arg(value.digest, "nomination.digest"),
    )


def replacements_arg(value: Any, nomination: Nomination) -> tuple[tuple[str, str], ...]:
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
    return tuple((str(k), digest_arg(d, f"replacement digest of {k!r}")) for k, d in pairs)


def advance_request(expected_head: Any, next_head: Any) -> tuple[Head, Head]:
    """The copied heads of an `advance_canonical` call; a malformed one is refused with the design's text."""
    try:
        return head_arg(expected_head, "expected_head"), head_arg(next_head, "next_head")
    except RequestError as exc:
        msg = f"{INVALID_ADVANCE}: {exc}"
        raise RequestError(msg) from None


def adoption_request(
    expected_head: Any, nomination: Any, replacements: Any
) -> tuple[Head, Nomination, tuple[tuple[str, str], ...]]:
    """The copied request of an `adopt_nomination` call; a malformed one is refused with the design's text."""
    try:
        expected = head_arg(expected_head, "expected_canonical_head")
        nominated = nomination_arg(nomination)
        return expected, nominated, replacements_arg(replacements, nominated)
    except RequestError as exc:
        msg = f"{INVALID_ADOPTION}: {exc}"
        raise RequestError(msg) from None
