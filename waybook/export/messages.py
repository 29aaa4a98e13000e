"""A record as a neutral chat message for a training row, with its blobs and images resolved.

Text blocks are the message's text. What the journal keeps in the store's blobs comes back whole:
- a text blob (`text/*`, JSON, XML, YAML) is read and inlined (`blobs="inline"`, the default), or written
  as a named reference `[blob NAME TYPE, N bytes, sha256:...]` (`blobs="reference"`); a binary blob is
  always a reference;
- an image (`images="inline"`, the default) becomes a URL: a `data:` URL as recorded, an `http(s)` URL as
  it is, or a `sha256:` image blob read from the store as a `data:` URL. OpenAI takes images only from
  the user, so this happens for user messages, custom entries in context, and tool results (the row
  then attaches them in a user message after the tool messages, as Pi does); an image in an assistant
  or system message becomes a `[image: TYPE]` placeholder, counted.
A blob the export needs must be there: with no blob store given, or a blob missing or damaged, the export
stops with a typed error rather than write a row that silently lacks it.
"""

from __future__ import annotations

import base64
from collections import Counter, OrderedDict
from typing import Any, Final

from waybook.export.cleaning import Message, Role, TrainingOptions
from waybook.journal.records import (
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
from waybook.stores.blobs import IMAGE_PREFIX, NoBlobStoreError

IMAGE_ROLES: Final = frozenset({"user", "tool"})
"""Roles whose images a chat fine-tuning row can carry (a tool's are attached in a user message)."""
TEXT_TYPES: Final = frozenset(
    {"application/json", "application/xml", "application/yaml", "application/x-ndjson", "application/toml"}
)


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
        text, images = _content(body.content, role, options, dropped, blobs)
        return Message(role, text, images=images)
    if isinstance(body, AssistantMessage):
        thinking = "\n\n".join(
            b.thinking for b in body.content if isinstance(b, ThinkingBlock) and b.thinking
        )
        text, _ = _content(body.content, "assistant", options, dropped, blobs)
        return Message(
            "assistant", text, tool_calls=body.tool_calls, thinking=thinking, stopped=body.stop_reason
        )
    if isinstance(body, ToolResult):
        text, images = _content(body.content, "tool", options, dropped, blobs)
        return Message("tool", text, tool_call_id=body.call_id, images=images)
    if isinstance(body, CustomEntry) and body.in_context:
        text, images = _content(body.content, "user", options, dropped, blobs)
        return Message("user", text, images=images)
    return None


def _content(
    content: Content, role: Role, options: TrainingOptions, dropped: Counter[str], blobs: Any
) -> tuple[str, tuple[str, ...]]:
    """The text of `content` (blocks joined by blank lines) and the image URLs it carries."""
    parts: list[str] = []
    images: list[str] = []
    for block in content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, BlobBlock) and _media(block.media_type).startswith("image/"):
            source = IMAGE_PREFIX + block.digest
            _image(source, block.media_type, role, options, dropped, blobs, parts, images)
        elif isinstance(block, BlobBlock):
            parts.append(_blob_text(block, options, dropped, blobs))
        elif isinstance(block, ImageBlock):
            _image(block.source, block.media_type, role, options, dropped, blobs, parts, images)
    return "\n\n".join(parts), tuple(images)


def _image(
    source: str,
    media_type: str,
    role: Role,
    options: TrainingOptions,
    dropped: Counter[str],
    blobs: Any,
    parts: list[str],
    images: list[str],
) -> None:
    if options.images == "drop":
        dropped["images"] += 1
        return
    if options.images == "inline" and role in IMAGE_ROLES:
        url = image_url(source, media_type, blobs)
        if url is not None:
            images.append(url)
            return
        dropped["images with no bytes to inline (as placeholders)"] += 1
    elif options.images == "inline":
        dropped[f"images in {role} messages, which take none (as placeholders)"] += 1
    else:
        dropped["images (as placeholders)"] += 1
    parts.append(f"[image: {media_type}]")


def image_url(source: str, media_type: str, blobs: Any) -> str | None:
    """A URL a training row can carry for an image, or None when the journal holds no way to its bytes
    (a file path, say). A `sha256:` image is read from `blobs` and inlined as a `data:` URL."""
    if source.startswith(("data:", "https://", "http://")):
        return source
    if source.startswith(IMAGE_PREFIX):
        data = read_blob(source.removeprefix(IMAGE_PREFIX), blobs, what="an image")
        return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"
    return None


def _blob_text(block: BlobBlock, options: TrainingOptions, dropped: Counter[str], blobs: Any) -> str:
    reference = f"[blob {block.name or ''} {block.media_type}, {block.size} bytes, sha256:{block.digest}]"
    if options.blobs == "reference":
        dropped["blobs (as references)"] += 1
        return reference
    media = _media(block.media_type)
    if not (media.startswith("text/") or media in TEXT_TYPES or media.endswith(("+json", "+xml"))):
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
    """Reads one export's blobs, keeping the most recent up to `budget` bytes: per-turn samples show the
    same context again and again, and each image would otherwise be read from the store every time."""

    def __init__(self, blobs: Any, budget: int = 64 << 20) -> None:
        self._blobs = blobs
        self._budget = budget
        self._kept: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0

    def read(self, digest: str) -> bytes:
        kept = self._kept.get(digest)
        if kept is not None:
            self._kept.move_to_end(digest)
            return kept
        data: bytes = self._blobs.read(digest)
        if len(data) <= self._budget:
            self._kept[digest] = data
            self._size += len(data)
            while self._size > self._budget:
                _, dropped = self._kept.popitem(last=False)
                self._size -= len(dropped)
        return data


def _media(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()
