"""`data:` URLs of base64 bytes, the form images are kept inline in: written one way, read back checked."""

from __future__ import annotations

import base64
import binascii


def data_url(media_type: str, data: bytes) -> str:
    """`data:<media type>;base64,<canonical base64>`."""
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def base64_payload(source: str) -> bytes | None:
    """The bytes after `;base64,` in `source`, or None when it has none or they are not valid base64."""
    if ";base64," not in source:
        return None
    try:
        return base64.b64decode(source.split(";base64,", 1)[1], validate=True)
    except (binascii.Error, ValueError):
        return None
