"""Codecs: the native wire format (tags, canonical bytes, upcasters) and foreign formats."""

from waybook.codecs.canonical import canonical_json, digest_of, sha256_hex
from waybook.codecs.claude_code import import_claude_code
from waybook.codecs.codex import import_codex
from waybook.codecs.foreign import ForeignFormatError, ImportReport
from waybook.codecs.langgraph import import_langgraph
from waybook.codecs.openai_agents import import_openai_agents
from waybook.codecs.pi import import_pi
from waybook.codecs.wire import (
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
    "ForeignFormatError",
    "ImportReport",
    "canonical_json",
    "decode_body",
    "decode_record",
    "digest_of",
    "encode_record",
    "import_claude_code",
    "import_codex",
    "import_langgraph",
    "import_openai_agents",
    "import_pi",
    "line_digest",
    "seal",
    "sha256_hex",
]
