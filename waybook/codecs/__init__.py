"""Codecs: the native wire format (tags, canonical bytes, upcasters) and application value codecs.

Foreign formats live in `waybook.formats`.

What the codec gives its neighbours: the canonical `ENCODER` (the ledger, erasure and the stores hash the
bytes it writes), sealing's commitments (`SEALED_FIELDS`, `sealed_content`, `erase_line`,
`content_state`, `is_salt`), data URLs and text media types of content blocks (`data_url`,
`base64_payload`, `is_text`) and the wire's line layout (`FIRST_LINE_START`, `MAX_LINE_BYTES`,
`decode_record_lines`, `erased_line_digest`).
"""

from waybook.codecs._canonical import ENCODER, canonical_json, digest_of, sha256_hex
from waybook.codecs._commitments import SEALED_FIELDS, content_state, erase_line, is_salt, sealed_content
from waybook.codecs._data_urls import base64_payload, data_url
from waybook.codecs._json_data import json_data
from waybook.codecs._media_types import is_text
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
    FIRST_LINE_START,
    LEGACY_TAGS,
    MAX_LINE_BYTES,
    decode_body,
    decode_record,
    decode_record_lines,
    encode_record,
    erased_line_digest,
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
    # the canonical encoder: the ledger, erasure and store creation hash the very bytes it writes
    "ENCODER",
    # sealing's commitments: the ledger and erasure prove and erase sealed content
    "SEALED_FIELDS",
    "content_state",
    "erase_line",
    "sealed_content",
    "is_salt",
    # data URLs of content blocks (offload, exports, provider projections)
    "base64_payload",
    "data_url",
    # which media types are text
    "is_text",
    # the wire's line layout: readers prove lines and tell a journal file by its first bytes
    "FIRST_LINE_START",
    "MAX_LINE_BYTES",
    "decode_record_lines",
    "erased_line_digest",
]
