"""Keeping journals small: content blocks over the inline limit go to the store's blobs.

A `Session` given `blobs=store.blobs` stores any text block, or `data:` image, larger than its
`inline_limit` (256 KiB by default) as a blob and records a reference instead (a `BlobBlock`, or an
`ImageBlock` whose source is `sha256:<hex>`). Without a blob store such a block is refused with
`BlobTooLargeError`, before anything is written, saying to pass one.

Imports into a store do the same for every image (`images_as_blobs`), and exports to a format that
holds images inline turn them back (`images_from_blobs`). Only an image whose `data:` URL the way back
rebuilds byte for byte (`data:<its media type>;base64,<canonical base64>`) is stored as a blob; any other
is kept as written, so an import followed by an export gives the source's bytes back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any, Final, TypeVar

import msgspec

from waybook.codecs import base64_payload, data_url, is_text
from waybook.model import BlobBlock, Block, Content, ImageBlock, NewRecord, Record, TextBlock
from waybook.stores import IMAGE_PREFIX, BlobReader, BlobRef, BlobStore, BlobTooLargeError, NoBlobStoreError

R = TypeVar("R", Record, NewRecord)

DEFAULT_INLINE_LIMIT: Final = 256 * 1024
"""Bytes a single block may hold inline before it goes to the blobs."""


def offload(content: Content, *, blobs: BlobStore | None, limit: int) -> tuple[Content, list[BlobRef]]:
    """`content` with every block over `limit` bytes stored in `blobs` and referenced; and the refs.

    Content that is not a tuple of blocks is passed on untouched, for the journal to refuse, typed.
    """
    if not isinstance(content, tuple):
        return content, []
    out: list[Block] = []
    refs: list[BlobRef] = []
    for block in content:
        data, media_type = _payload(block)
        if data is None or len(data) <= limit:
            out.append(block)
            continue
        if blobs is None:
            msg = (
                f"a {type(block).__name__} of {len(data):,} bytes is over the inline limit of {limit:,}; "
                "pass blobs=store.blobs to the Session so large outputs are stored as blobs and referenced"
            )
            raise BlobTooLargeError(msg)
        ref: BlobRef = blobs.put(data, media_type=media_type)
        refs.append(ref)
        if isinstance(block, ImageBlock):
            out.append(ImageBlock(source=IMAGE_PREFIX + ref.digest, media_type=block.media_type))
        else:
            out.append(ref.block())
    return tuple(out), refs


def _payload(block: Block) -> tuple[bytes | None, str]:
    if isinstance(block, TextBlock):
        return block.text.encode("utf-8"), "text/plain; charset=utf-8"
    if isinstance(block, ImageBlock) and block.source.startswith("data:") and ";base64," in block.source:
        data = base64_payload(block.source)
        if data is None:
            return None, ""  # not base64: kept as written, under the journal's own record limit
        return data, block.media_type
    return None, ""


def images_as_blobs(records: Iterable[NewRecord]) -> tuple[list[NewRecord], dict[str, tuple[bytes, str]]]:
    """`records` with every `data:` image that `images_from_blobs` rebuilds exactly referenced as
    `sha256:<digest>` instead; and the bytes to store first, by digest, with their media types.

    Pure, so a caller validates the new records before anything is written: then it stores the blobs,
    then appends the records (a blob is always stored before the record that references it).
    """
    pending: dict[str, tuple[bytes, str]] = {}

    def referenced(block: ImageBlock) -> ImageBlock:
        data = _exact_image_bytes(block)
        if data is None:
            return block
        digest = hashlib.sha256(data).hexdigest()
        pending.setdefault(digest, (data, block.media_type))
        return ImageBlock(source=IMAGE_PREFIX + digest, media_type=block.media_type)

    return [_with_images(record, referenced) for record in records], pending


def images_from_blobs(records: Iterable[R], blobs: BlobReader | None) -> Iterator[R]:
    """`records` with every `sha256:` image read from `blobs` and inlined as a `data:` URL again. Raises
    NoBlobStoreError when an image is a blob and `blobs` is None, MissingBlobError when it is gone."""

    def inlined(block: ImageBlock) -> ImageBlock:
        if not block.source.startswith(IMAGE_PREFIX):
            return block
        digest = block.source.removeprefix(IMAGE_PREFIX)
        if blobs is None:
            msg = (
                f"the journal references an image kept as blob sha256:{digest}, but no blob store was given "
                "to read it: export the journal from its store (--store URL, or pass store.blobs)"
            )
            raise NoBlobStoreError(msg)
        data = blobs.read(digest)
        return ImageBlock(source=data_url(block.media_type, data), media_type=block.media_type)

    for record in records:
        yield _with_images(record, inlined)


def blobs_inlined(record: R, blobs: BlobReader | None) -> R:
    """`record` as a format that holds content inline shows it: each text blob as its text, each image
    blob as a `data:` image. Binary blobs stay references. Raises NoBlobStoreError when `record` has a
    blob to inline and `blobs` is None."""
    content = getattr(record.body, "content", None)
    if not isinstance(content, tuple) or not any(_inlinable(b) for b in content):
        return record
    out: list[Block] = []
    for block in content:
        if isinstance(block, BlobBlock) and _inlinable(block):
            if blobs is None:
                msg = (
                    f"the journal keeps {block.media_type} content as blob sha256:{block.digest}, but "
                    "no blob store was given to read it: export the journal from its store (--store URL)"
                )
                raise NoBlobStoreError(msg)
            block = _shown(block, blobs.read(block.digest))
        out.append(block)
    return msgspec.structs.replace(record, body=msgspec.structs.replace(record.body, content=tuple(out)))


def inline_known(records: Iterable[NewRecord], known: dict[str, tuple[bytes, str]]) -> list[NewRecord]:
    """`records` with each blob whose bytes are `known` (digest -> bytes, media type) shown inline as
    `blobs_inlined` shows it; blobs whose bytes are not known stay references."""
    out = []
    for record in records:
        content = getattr(record.body, "content", None)
        if isinstance(content, tuple) and any(
            isinstance(b, BlobBlock) and b.digest in known for b in content
        ):
            shown = tuple(
                _shown(b, known[b.digest][0]) if isinstance(b, BlobBlock) and b.digest in known else b
                for b in content
            )
            body = msgspec.structs.replace(record.body, content=shown)
            record = msgspec.structs.replace(record, body=body)
        out.append(record)
    return out


def _inlinable(block: Block) -> bool:
    return isinstance(block, BlobBlock) and (
        block.media_type.startswith("image/") or is_text(block.media_type)
    )


def _shown(block: BlobBlock, data: bytes) -> Block:
    """A blob's bytes as an inline block: an image, or text (kept a reference when not UTF-8 text)."""
    if block.media_type.startswith("image/"):
        return ImageBlock(source=data_url(block.media_type, data), media_type=block.media_type)
    if is_text(block.media_type):
        try:
            return TextBlock(text=data.decode("utf-8"))
        except UnicodeDecodeError:
            return block
    return block


def _with_images(record: R, change: Any) -> R:
    body = record.body
    content = getattr(body, "content", None)
    if not isinstance(content, tuple) or not any(isinstance(b, ImageBlock) for b in content):
        return record
    changed = tuple(change(b) if isinstance(b, ImageBlock) else b for b in content)
    if changed == content:
        return record
    return msgspec.structs.replace(record, body=msgspec.structs.replace(body, content=changed))


def _exact_image_bytes(block: ImageBlock) -> bytes | None:
    """The image's bytes, if its source is exactly the `data:` URL those bytes would be written back as."""
    prefix = f"data:{block.media_type};base64,"
    if "/" not in block.media_type or not block.source.startswith(prefix):
        return None  # a blob's media type is a MIME type: an image without one stays as written
    data = base64_payload(block.source)
    return data if data is not None and data_url(block.media_type, data) == block.source else None
