"""Keeping journals small: content blocks over the inline limit go to the store's blobs.

A `Session` given `blobs=store.blobs` stores any text block, or `data:` image, larger than its
`inline_limit` (256 KiB by default) as a blob and records a reference instead (a `BlobBlock`, or an
`ImageBlock` whose source is `sha256:<hex>`). Without a blob store such a block is refused with
`BlobTooLargeError`, before anything is written, saying to pass one.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from waybook.journal.records import Block, Content, ImageBlock, TextBlock
from waybook.stores.blobs import IMAGE_PREFIX, BlobRef, BlobTooLargeError

DEFAULT_INLINE_LIMIT: Final = 256 * 1024
"""Bytes a single block may hold inline before it goes to the blobs."""


def offload(content: Content, *, blobs: Any, limit: int) -> tuple[Content, list[BlobRef]]:
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
        try:
            return base64.b64decode(block.source.split(";base64,", 1)[1], validate=True), block.media_type
        except (binascii.Error, ValueError):
            return None, ""  # not base64: kept as written, under the journal's own record limit
    return None, ""
