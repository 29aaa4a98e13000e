"""A record as a neutral chat message for a training row, with its blobs and images resolved.

Text blocks are the message's text. What the journal keeps in the store's blobs comes back whole:
- a text blob (`text/*`, JSON, XML, YAML) is read and inlined (`blobs="inline"`, the default), or written
  as a named reference `[blob NAME TYPE, N bytes, sha256:...]` (`blobs="reference"`); a binary blob is
  always a reference;
- an image (`images="inline"`, the default) becomes an `ImagePart`: an `http(s)` URL as it is, or its bytes
  (from a `data:` URL or the store's blobs) as a fresh `data:` URL. OpenAI takes images only from the user,
  in JPEG, PNG or WEBP, at most 10 MB: so this happens for user messages, custom entries in context and
  tool results (the row attaches those in a user message after the tool messages, as Pi does), and any
  other image becomes a `[image: TYPE]` placeholder, counted with the reason.
A blob the export needs must be there: with no blob store given, or a blob missing or damaged, the export
stops with a typed error rather than write a row that silently lacks it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Final

from waybook.codecs import base64_payload, data_url, is_text
from waybook.export._cleaning import ImagePart, Message, Role, TrainingOptions
from waybook.export._openai_format import MAX_IMAGE_BYTES
from waybook.model import (
    AssistantMessage,
    BlobBlock,
    Content,
    CustomEntry,
    ImageBlock,
    Record,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResult,
    UserMessage,
)
from waybook.stores import IMAGE_PREFIX, NoBlobStoreError

IMAGE_ROLES: Final = frozenset({"user", "tool"})
"""Roles whose images a chat fine-tuning row can carry (a tool's are attached in a user message)."""
IMAGE_TYPES: Final = {
    "image/png": "image/png",
    "image/jpeg": "image/jpeg",
    "image/jpg": "image/jpeg",
    "image/webp": "image/webp",
}
"""The image formats OpenAI's vision fine-tuning takes (JPEG, PNG, WEBP), and the name each goes by."""


def to_message(
    record: Record,
    options: TrainingOptions | None = None,
    dropped: Counter[str] | None = None,
    blobs: Any = None,
) -> Message | None:
    """The chat message a record contributes to a trajectory, or None (bookkeeping, custom entries kept
    out of the context). `blobs` (a store's `store.blobs`) reads what the journal keeps as blobs."""
    options = options or TrainingOptions()
    dropped = dropped if dropped is not None else Counter()
    body = record.body
    if isinstance(body, UserMessage | SystemMessage):
        role: Role = "user" if isinstance(body, UserMessage) else "system"
        text, parts = _content(body.content, role, options, dropped, blobs)
        return Message(role, text, parts=parts)
    if isinstance(body, AssistantMessage):
        thinking = "\n\n".join(
            b.thinking for b in body.content if isinstance(b, ThinkingBlock) and b.thinking
        )
        text, _ = _content(body.content, "assistant", options, dropped, blobs)
        return Message(
            "assistant", text, tool_calls=body.tool_calls, thinking=thinking, stopped=body.stop_reason
        )
    if isinstance(body, ToolResult):
        text, parts = _content(body.content, "tool", options, dropped, blobs)
        return Message("tool", text, tool_call_id=body.call_id, parts=parts)
    if isinstance(body, CustomEntry) and body.in_context:
        text, parts = _content(body.content, "user", options, dropped, blobs)
        return Message("user", text, parts=parts)
    return None


def _content(
    content: Content, role: Role, options: TrainingOptions, dropped: Counter[str], blobs: Any
) -> tuple[str, tuple[str | ImagePart, ...]]:
    """The text of `content` (its text pieces joined by blank lines) and, when it carries images, all
    its pieces in order."""
    pieces: list[str | ImagePart] = []
    for block in content:
        if isinstance(block, TextBlock):
            pieces.append(block.text)
        elif isinstance(block, BlobBlock) and _media(block.media_type).startswith("image/"):
            source = IMAGE_PREFIX + block.digest
            pieces += _image(source, block.media_type, role, options, dropped, blobs)
        elif isinstance(block, BlobBlock):
            pieces.append(_blob_text(block, options, dropped, blobs))
        elif isinstance(block, ImageBlock):
            pieces += _image(block.source, block.media_type, role, options, dropped, blobs)
    text = "\n\n".join(piece for piece in pieces if isinstance(piece, str))
    return text, tuple(pieces) if any(isinstance(p, ImagePart) for p in pieces) else ()


def _image(
    source: str,
    media_type: str,
    role: Role,
    options: TrainingOptions,
    dropped: Counter[str],
    blobs: Any,
) -> list[str | ImagePart]:
    """What an image becomes in a row: itself, a `[image: TYPE]` placeholder (counted, with why), or
    nothing (dropped, counted)."""
    if options.images == "drop":
        dropped["images"] += 1
        return []
    if options.images == "placeholder":
        dropped["images (as placeholders)"] += 1
    elif role not in IMAGE_ROLES:
        dropped[f"images in {role} messages, which take none (as placeholders)"] += 1
    else:
        part, why = image_part(source, media_type, blobs)
        if part is not None:
            return [part]
        dropped[f"images {why} (as placeholders)"] += 1
    return [f"[image: {media_type}]"]


def image_part(source: str, media_type: str, blobs: Any) -> tuple[ImagePart | None, str]:
    """The image as a row carries it (an `http(s)` URL as it is; bytes, from a `data:` URL or the
    store's blobs, as a `data:` URL written afresh), or None and why a row cannot carry it."""
    kind = IMAGE_TYPES.get(_media(media_type))
    if kind is None:
        return None, "in a format OpenAI does not take"
    if source.startswith(("https://", "http://")):
        return ImagePart(source, kind), ""
    if source.startswith(IMAGE_PREFIX):
        data = read_blob(source.removeprefix(IMAGE_PREFIX), blobs, what="an image")
    elif source.startswith("data:") and ";base64," in source:
        decoded = base64_payload(source)
        if decoded is None:
            return None, "whose data is not base64"
        data = decoded
    else:
        return None, "with no bytes to inline"
    if not data:
        return None, "with no bytes to inline"
    if len(data) > MAX_IMAGE_BYTES:
        return None, "over OpenAI's 10 MB"
    return ImagePart(data_url(kind, data), kind), ""


def _blob_text(block: BlobBlock, options: TrainingOptions, dropped: Counter[str], blobs: Any) -> str:
    reference = f"[blob {block.name or ''} {block.media_type}, {block.size} bytes, sha256:{block.digest}]"
    if options.blobs == "reference":
        dropped["blobs (as references)"] += 1
        return reference
    if not is_text(block.media_type):
        dropped["binary blobs (as references)"] += 1
        return reference
    data = read_blob(block.digest, blobs, what=f"{block.media_type} text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        dropped["blobs whose bytes are not UTF-8 text (as references)"] += 1
        return reference


def read_blob(digest: str, blobs: Any, *, what: str) -> bytes:
    """The blob's bytes, checked against its digest. Raises NoBlobStoreError without a blob store, and
    the store's MissingBlobError or BlobDigestError when the blob is gone or damaged."""
    if blobs is None:
        msg = (
            f"the journal references {what} kept as blob sha256:{digest}, but no blob store was given to "
            "read it: export the journal from its store (--store URL, or blobs=store.blobs), or keep blobs "
            "out of the rows (--images placeholder, --blobs reference)"
        )
        raise NoBlobStoreError(msg)
    data: bytes = blobs.read(digest)
    return data


class BlobReader:
    """Reads one export's blobs, keeping them (up to `budget` bytes in all) for the rest of the export:
    per-turn samples show the same context again and again. What arrives once the budget is spent is read
    each time it is needed rather than evicting what is kept, since the samples read a context in order
    (and a least-recently-used cache would then miss on every read)."""

    def __init__(self, blobs: Any, budget: int = 256 << 20) -> None:
        self._blobs = blobs
        self._budget = budget
        self._kept: dict[str, bytes] = {}
        self._size = 0

    def read(self, digest: str) -> bytes:
        kept = self._kept.get(digest)
        if kept is not None:
            return kept
        data: bytes = self._blobs.read(digest)
        if self._size + len(data) <= self._budget:
            self._kept[digest] = data
            self._size += len(data)
        return data


def _media(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()
