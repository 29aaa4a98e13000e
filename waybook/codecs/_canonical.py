"""Canonical JSON bytes: the one encoding that digests are taken over.

Deterministic by construction: struct fields in declaration order, dict keys sorted, no whitespace,
UTF-8. The same value always encodes to the same bytes, on every machine and in every process.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import msgspec

ENCODER: Final = msgspec.json.Encoder(order="deterministic")


def canonical_json(value: Any) -> bytes:
    """Encode `value` (structs, attrs classes, dicts, lists, scalars) as canonical JSON bytes."""
    return ENCODER.encode(value)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest_of(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of `value`."""
    return hashlib.sha256(ENCODER.encode(value)).hexdigest()
