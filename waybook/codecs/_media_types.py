"""Media types: which bytes are text (and so can be shown to a model as text)."""

from __future__ import annotations

from typing import Final

TEXT_TYPES: Final = frozenset(
    {"application/json", "application/xml", "application/yaml", "application/x-ndjson", "application/toml"}
)


def is_text(media_type: str) -> bool:
    """Whether bytes of this media type are text (`text/*`, JSON, XML, YAML, NDJSON, TOML)."""
    media = media_type.split(";", 1)[0].strip().lower()
    return media.startswith("text/") or media in TEXT_TYPES or media.endswith(("+json", "+xml"))
