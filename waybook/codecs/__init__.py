"""Codecs: the native wire format (tags, canonical bytes, upcasters) and application value codecs.

Foreign formats live in `waybook.formats`.
"""

from waybook.codecs._canonical import canonical_json, digest_of, sha256_hex
from waybook.codecs._json_data import json_data
from waybook.codecs._values import (
    NotJsonDataError,
    OpaqueValue,
    UnknownValueTagError,
    UnregisteredValueError,
    ValueRegistry,
    decode_value,
    encode_value,
    is_value,
    read_value,
    register_value,
)
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
    "NotJsonDataError",
    "OpaqueValue",
    "UnknownValueTagError",
    "UnregisteredValueError",
    "ValueRegistry",
    "canonical_json",
    "decode_body",
    "decode_record",
    "decode_value",
    "digest_of",
    "encode_record",
    "encode_value",
    "is_value",
    "json_data",
    "line_digest",
    "read_value",
    "register_value",
    "seal",
    "sha256_hex",
]
