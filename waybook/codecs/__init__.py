"""Codecs: the native wire format (tags, canonical bytes, upcasters).

Foreign formats live in `waybook.formats`.
"""

from waybook.codecs._canonical import canonical_json, digest_of, sha256_hex
from waybook.codecs._wire import (
    CURRENT_TAGS,
    LEGACY_TAGS,
    decode_body,
    decode_record,
    encode_record,
    line_digest,
    seal,
)

__all__ = [
    "CURRENT_TAGS",
    "LEGACY_TAGS",
    "canonical_json",
    "decode_body",
    "decode_record",
    "digest_of",
    "encode_record",
    "line_digest",
    "seal",
    "sha256_hex",
]
