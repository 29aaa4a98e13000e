"""Memory paths: hostile until validated. Everything lives under /memories; no traversal, no tricks.

A valid path is `/memories` or `/memories/seg/seg/...` where each segment holds letters (any script:
`café.md`), digits, `.`, `_` and `-` anywhere, at most 128 characters, and is not `.` or `..`; the whole
path is at most 1,024 bytes and in Unicode normal form C (so one name has one spelling). Percent-encoding,
backslashes, spaces, control characters, empty segments and anything outside /memories are refused. A
single trailing slash is accepted and dropped.
"""

from __future__ import annotations

import unicodedata
from collections.abc import MutableMapping, MutableSet
from typing import Final

ROOT: Final = "/memories"
MAX_PATH_BYTES: Final = 1024
EXTENSIONS: Final = (".txt", ".md", ".json", ".py", ".yaml", ".yml")
MAX_SEGMENT: Final = 128
_PUNCTUATION: Final = frozenset("._-")


def _segment_ok(segment: str) -> bool:
    """Letters (with their combining marks), decimal digits, `.`, `_`, `-`; not `.` or `..`."""
    if not 0 < len(segment) <= MAX_SEGMENT or segment in (".", ".."):
        return False
    return all(c in _PUNCTUATION or (c.isascii() and c.isalnum()) or _letter_or_digit(c) for c in segment)


def _letter_or_digit(c: str) -> bool:
    category = unicodedata.category(c)
    return category[0] in "LM" or category == "Nd"


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
        if not _segment_ok(segment):
            msg = (
                f"{path!r}: segment {segment!r} is not allowed; use letters, digits, '.', '_' and '-' "
                "(at most 128 characters; not '.' or '..'; no '%', space, backslash or control character)"
            )
            raise PathError("INVALID_PATH", msg)
    if not unicodedata.is_normalized("NFC", path):
        msg = f"{path!r} is not in Unicode normal form C; write it composed (NFC)"
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


def enter_directories(directories: MutableMapping[str, int], kept: MutableSet[str], path: str) -> None:
    """Count a new file at `path` into each directory above it (`directories`: files below each); those
    directories exist now (`kept`)."""
    for directory in ancestors(path):
        directories[directory] = directories.get(directory, 0) + 1
        kept.add(directory)


def leave_directories(directories: MutableMapping[str, int], path: str) -> None:
    """Count the file at `path` out of each directory above it; a count that reaches 0 is dropped (the
    directory itself stays in `kept` until it is deleted)."""
    for directory in ancestors(path):
        left = directories[directory] - 1
        if left:
            directories[directory] = left
        else:
            del directories[directory]


def is_under(path: str, directory: str) -> bool:
    return directory == ROOT or path.startswith(directory + "/")
