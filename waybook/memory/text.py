"""Text rules of memory files (they live in the journal layer, which enforces them on memory journals)."""

from waybook.journal.memory_text import (
    FrontMatter,
    byte_length,
    content_digest,
    front_matter,
    is_valid_unicode,
    links_of,
    logical_lines,
    with_description,
)

__all__ = [
    "FrontMatter",
    "byte_length",
    "content_digest",
    "front_matter",
    "is_valid_unicode",
    "links_of",
    "logical_lines",
    "with_description",
]
