"""Copying and validating authority requests when the method is called, before any turn is taken.

Every request is copied once (each value read once, strings and numbers made exact built-ins) and then
validated on the copy, which is what the call uses: a malformed request raises RequestError at once, a
caller changing its objects afterwards (from another thread) changes nothing, and an object whose
methods lie about its value is never asked again (waybook.memory._copy).
"""

from __future__ import annotations

import re
from typing import Any, Final

from waybook.journal import front_matter, is_valid_unicode
from waybook.journal._roles.memory_paths import MAX_PATH_BYTES, PathError, check_extension, normalize
from waybook.memory._copy import exact, items_of, sequence_of
from waybook.memory._errors import AUTHORITY_LIMITS, RequestError
from waybook.memory.canonical._nominations import NominatedRecord, Nomination
from waybook.model import Head

MAX_REPLACEMENTS: Final = AUTHORITY_LIMITS.max_replacements
INVALID_ADVANCE: Final = "Invalid canonical memory advance request"
INVALID_ADOPTION: Final = "Invalid memory adoption request"
VERSION: Final = 1
"""The request version every authority call takes as `v` (the design's `v: 1`)."""
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")


def version_arg(value: Any, call: str | None = None) -> None:
    """`v` must be exactly the int 1: a request of another version is refused, never guessed at. `call`
    names an agent call (`remember`, ...) whose message this is; host calls add their design text."""
    if type(value) is not int or value != VERSION:
        msg = f"v must be {VERSION} (the request version this authority speaks), not {value!r:.40}"
        raise RequestError(f"Invalid memory {call} request: {msg}" if call else msg)


def digest_arg(value: Any, what: str) -> str:
    value = exact(value)
    if type(value) is not str or not _DIGEST.fullmatch(value):
        msg = f"{what} must be a SHA-256 digest (64 lowercase hex characters), not {value!r:.80}"
        raise RequestError(msg)
    return value


def head_arg(value: Any, what: str) -> Head:
    """A copy of a Head (its seq and digest each read once) whose seq is a non-negative int and whose
    digest is 64 lowercase hex."""
    if not isinstance(value, Head):
        msg = f"{what} must be a Head (seq, digest), not {type(value).__name__}"
        raise RequestError(msg)
    seq, digest = exact(value.seq), exact(value.digest)
    if type(seq) is not int or seq < 0:
        msg = f"{what}.seq must be a non-negative int, not {seq!r:.80}"
        raise RequestError(msg)
    return Head(seq, digest_arg(digest, f"{what}.digest"))


def key_arg(value: Any) -> str:
    """A memory path, copied (an exact str) and then checked: what is checked is what is used."""
    try:
        key = normalize(exact(value))
        check_extension(key)
    except PathError as exc:
        raise RequestError(str(exc)) from None
    return key


def _pairs(value: Any, what: str) -> tuple[tuple[Any, Any], ...]:
    """(key, value) pairs of a mapping or of a list of pairs, read once and copied."""
    items = items_of(value)
    if items is not None:
        return items
    listed = sequence_of(value if value is not None else ())
    if listed is None:
        msg = f"{what} are a mapping or a list of pairs, not {type(value).__name__}"
        raise RequestError(msg)
    pairs = []
    for pair in listed:
        copied = sequence_of(pair) if isinstance(pair, tuple | list) else None
        if copied is None or len(copied) != 2:
            msg = f"{what} are pairs, not {type(pair).__name__}"
            raise RequestError(msg)
        pairs.append((copied[0], copied[1]))
    return tuple(pairs)


def remember_request(
    request_id: Any, puts: Any, tombstones: Any
) -> tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The copied request of a `remember` call: every value read once and copied, then checked."""
    request_id = exact(request_id)
    if not isinstance(request_id, str) or not request_id:
        msg = "remember needs a request_id (a non-empty string) so a retry is idempotent"
        raise RequestError(msg)
    if len(request_id.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        msg = f"request_id is longer than {MAX_PATH_BYTES} bytes (the limit of memory's paths and ids)"
        raise RequestError(msg)
    if isinstance(tombstones, str):
        msg = "tombstones is a list of keys, not one string"
        raise RequestError(msg)
    pairs = _pairs(puts, "puts")
    gone_keys = sequence_of(tombstones if tombstones is not None else ())
    if gone_keys is None:
        msg = f"tombstones is a list of keys, not {type(tombstones).__name__}"
        raise RequestError(msg)
    copied: list[tuple[str, str]] = []
    for key, text in pairs:
        if not isinstance(text, str):
            msg = "puts are (key, text) pairs with text a string"
            raise RequestError(msg)
        if not is_valid_unicode(text):
            msg = f"the text for {key!r:.80} is not valid Unicode"
            raise RequestError(msg)
        if front_matter(text).read_only:
            msg = f"the text for {key!r:.80} says `read_only: true`: the host sets that, not the agent"
            raise RequestError(msg)
        copied.append((key_arg(key), text))
    gone = tuple(key_arg(k) for k in gone_keys)
    keys = [k for k, _ in copied] + list(gone)
    if len(set(keys)) != len(keys):
        msg = "a key appears twice among the puts and tombstones"
        raise RequestError(msg)
    return request_id, tuple(copied), gone


def keys_arg(keys: Any) -> tuple[str, ...]:
    """Memory paths, read once and copied, then checked."""
    if isinstance(keys, str):
        msg = "keys is a list of memory paths, not one string"
        raise RequestError(msg)
    listed = sequence_of(keys)
    if listed is None:
        msg = f"keys is a list of memory paths, not {type(keys).__name__}"
        raise RequestError(msg)
    return tuple(key_arg(k) for k in listed)


def explain_request(key: Any, handle: Any) -> tuple[str | None, int | None]:
    """An explain call's key (a memory path) or handle (an int), copied, then checked."""
    handle = exact(handle)
    if handle is not None and (type(handle) is not int or handle < 1):
        msg = f"Invalid memory explain request: handle must be a positive int, not {handle!r:.40}"
        raise RequestError(msg)
    return (None if key is None else key_arg(key)), handle


def prefix_arg(prefix: Any) -> str | None:
    prefix = exact(prefix)
    if prefix is not None and type(prefix) is not str:
        msg = f"Invalid memory query request: prefix must be a string, not {type(prefix).__name__}"
        raise RequestError(msg)
    return prefix


def nomination_arg(value: Any) -> Nomination:
    """A validated copy of a Nomination: every field read once and copied, then checked (now, not when
    the call runs)."""
    if not isinstance(value, Nomination):
        msg = f"adopt_nomination takes a Nomination, not {type(value).__name__}"
        raise RequestError(msg)
    route, purpose, source = exact(value.route), exact(value.purpose), exact(value.source)
    binding, source_head, digest = value.binding, value.source_head, value.digest
    roots, listed = value.roots, value.records
    for name, field in (("route", route), ("purpose", purpose), ("source", source)):
        if type(field) is not str:
            msg = f"nomination.{name} must be a string"
            raise RequestError(msg)
    if not isinstance(roots, tuple) or not isinstance(listed, tuple):
        msg = "nomination.roots and nomination.records must be tuples"
        raise RequestError(msg)
    records = []
    for record in tuple(listed):
        if not isinstance(record, NominatedRecord):
            msg = f"nomination.records holds {type(record).__name__}, not NominatedRecord"
            raise RequestError(msg)
        key, text, held = record.key, exact(record.text), record.digest
        if (text is None) != (held is None) or not (text is None or type(text) is str):
            msg = f"nominated record {key!r:.80} needs a text and its digest, or neither (a tombstone)"
            raise RequestError(msg)
        checked = None if held is None else digest_arg(held, f"digest of {key!r:.80}")
        records.append(NominatedRecord(key_arg(key), text, checked))
    return Nomination(
        route,
        purpose,
        source,
        digest_arg(binding, "nomination.binding"),
        head_arg(source_head, "nomination.source_head"),
        tuple(key_arg(k) for k in tuple(roots)),
        tuple(records),
        digest_arg(digest, "nomination.digest"),
    )


def replacements_arg(value: Any, nomination: Nomination) -> tuple[tuple[str, str], ...]:
    """(key, reviewed canonical digest) pairs, read once and copied, then checked."""
    pairs = _pairs(value, "replacements")
    if len(pairs) > MAX_REPLACEMENTS:
        msg = f"at most {MAX_REPLACEMENTS} replacements per adoption, not {len(pairs)}"
        raise RequestError(msg)
    if not all(isinstance(key, str) and isinstance(digest, str) for key, digest in pairs):
        msg = "replacements are (key, reviewed canonical digest) pairs of strings"
        raise RequestError(msg)
    keys: list[str] = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        msg = "a key appears twice among the replacements"
        raise RequestError(msg)
    unknown = sorted(set(keys) - set(nomination.keys))
    if unknown:
        msg = f"replacements name keys the nomination does not hold: {', '.join(unknown[:5])}"
        raise RequestError(msg)
    return tuple((key, digest_arg(digest, f"replacement digest of {key!r}")) for key, digest in pairs)


def advance_request(expected_head: Any, next_head: Any, v: Any = VERSION) -> tuple[Head, Head]:
    """The copied heads of an `advance_canonical` call; a malformed one is refused with the design's text."""
    try:
        version_arg(v)
        return head_arg(expected_head, "expected_head"), head_arg(next_head, "next_head")
    except RequestError as exc:
        msg = f"{INVALID_ADVANCE}: {exc}"
        raise RequestError(msg) from None


def adoption_request(
    expected_head: Any, nomination: Any, replacements: Any, v: Any = VERSION
) -> tuple[Head, Nomination, tuple[tuple[str, str], ...]]:
    """The copied request of an `adopt_nomination` call; a malformed one is refused with the design's text."""
    try:
        version_arg(v)
        expected = head_arg(expected_head, "expected_canonical_head")
        nominated = nomination_arg(nomination)
        return expected, nominated, replacements_arg(replacements, nominated)
    except RequestError as exc:
        msg = f"{INVALID_ADOPTION}: {exc}"
        raise RequestError(msg) from None
