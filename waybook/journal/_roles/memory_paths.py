"""Memory paths: hostile until validated. Everything lives under /memories; no traversal, no tricks.

A valid path is `/memories` or `/memories/seg/seg/...` where each segment holds letters, digits, `.`,
`_` and `-`, starts with a letter or digit and is at most 128 characters; the whole path is at most
1,024 bytes. `..`, percent-encoding, backslashes, control characters, empty segments and anything
outside /memories are refused. A single trailing slash is accepted and dropped.
"""

from __future__ import annotations

import re
from typing import Final

ROOT: Final = "/memories"
MAX_PATH_BYTES: Final = 1024
EXTENSIONS: Final = (".txt", ".md", ".json", ".py", ".yaml", ".yml")
_SEGMENT: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class PathError(ValueError):
    """Why a path was refused, with the port's error code (INVALID_PATH or INVALID_EXTENSION)."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)


def normalize(path: object) -> str:
    """The canonical form of a memory path, or PathError."""
    if not isinstance(path, str):
        msg = f"a path must be a string, not {type(path).__name__}"
        raise PathError("INVALID_PATH", msg)
    if path.endswith("/") and path != "/":
        path = path[:-1]
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        msg = f"path is longer than {MAX_PATH_BYTES} bytes"
        raise PathError("INVALID_PATH", msg)
    if path == ROOT:
        return path
    if not path.startswith(ROOT + "/"):
        msg = f"{path!r} is outside {ROOT}; every memory path starts with {ROOT}/"
        raise PathError("INVALID_PATH", msg)
    for segment in path[len(ROOT) + 1 :].split("/"):
        if not _SEGMENT.fullmatch(segment):
            msg = (
                f"{path!r}: segment {segment!r} is not allowed; use letters, digits, '.', '_' and '-', "
                "starting with a letter or digit, at most 128 characters (no '..', '%', backslash or control)"
            )
            raise PathError("INVALID_PATH", msg)
    return path


def check_extension(path: str) -> None:
    if not path.endswith(EXTENSIONS):
        msg = f"{path!r}: files must end in one of {', '.join(EXTENSIONS)}"
        raise PathError("INVALID_EXTENSION", msg)


def parent(path: str) -> str:
    return path.rsplit("/", 1)[0]


def ancestors(path: str) -> list[str]:
    """Directories above `path`, nearest last, without the root.

    /memories/a/b/c.md -> [/memories/a, /memories/a/b]
    """
    parts = path[len(ROOT) + 1 :].split("/")[:-1]
    return [ROOT + "/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def is_under(path: str, directory: str) -> bool:
    return directory == ROOT or path.startswith(directory + "/")
