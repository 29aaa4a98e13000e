"""What the Memory port returns: a value for every outcome, never an exception for a caller's mistake."""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs
import cattrs

CODES: Final = frozenset(
    {
        "INVALID_COMMAND",
        "INVALID_ARGUMENT",
        "INVALID_PATH",
        "ROOT_PROTECTED",
        "INVALID_EXTENSION",
        "PATH_CONFLICT",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "INVALID_RANGE",
        "MATCH_NOT_FOUND",
        "MATCH_NOT_UNIQUE",
        "LIMIT_EXCEEDED",
        "CONFLICT",
        "UNSAFE_STORAGE",
        "STORAGE_ERROR",
    }
)
"""Every error code the port returns, and only these."""

Kind = Literal["file", "directory"]


@attrs.frozen
class Failure:
    code: str
    message: str
    path: str | None = None
    details: dict[str, Any] | None = None
    command: str | None = None
    """The command that failed (`create`, `str_replace`, ...), as on the Result that carries it."""

    def __attrs_post_init__(self) -> None:
        if self.code not in CODES:
            msg = f"unknown memory error code {self.code!r}"
            raise ValueError(msg)


@attrs.frozen
class LineSpan:
    start: int
    end: int
    total: int


@attrs.frozen
class FileView:
    path: str
    text: str
    lines: LineSpan
    byte_length: int
    kind: Kind = "file"


@attrs.frozen
class Entry:
    name: str
    path: str
    kind: Kind


@attrs.frozen
class DirectoryView:
    path: str
    entries: tuple[Entry, ...]
    kind: Kind = "directory"


@attrs.frozen
class Created:
    path: str
    overwritten: bool
    evicted: tuple[str, ...]
    byte_length: int


@attrs.frozen
class Edited:
    path: str
    byte_length: int
    evicted: tuple[str, ...]


@attrs.frozen
class Deleted:
    path: str
    kind: Kind
    deleted_files: int
    freed_bytes: int


@attrs.frozen
class Renamed:
    old_path: str
    new_path: str
    kind: Kind
    moved_files: int


@attrs.frozen
class Patched:
    """What one `apply_patch` changed: paths added, updated, deleted and moved (old, new), and evicted."""

    added: tuple[str, ...]
    updated: tuple[str, ...]
    deleted: tuple[str, ...]
    moved: tuple[tuple[str, str], ...]
    evicted: tuple[str, ...]


Value = FileView | DirectoryView | Created | Edited | Deleted | Renamed | Patched


@attrs.frozen
class Receipt:
    """Proof of a committed write: where it is in which journal, and what it wrote.

    Put it in the session's tool-result entry (`receipt.as_details()`), so a memory change is always
    visible in the conversation that caused it.
    """

    journal: str
    seq: int
    digest: str
    content_digest: str | None
    call_id: str | None
    dropped_links: tuple[str, ...] = ()

    def as_details(self) -> dict[str, Any]:
        return {"memory_receipt": _converter.unstructure(self)}


@attrs.frozen
class Result:
    ok: bool
    command: str
    value: Value | None = None
    error: Failure | None = None
    receipt: Receipt | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able data with the documented snake_case field names."""
        data: dict[str, Any] = _converter.unstructure(self)
        return data


def failed(command: str, code: str, message: str, *, path: str | None = None, **details: Any) -> Result:
    return Result(False, command, error=Failure(code, message, path, details or None, command))


_converter = cattrs.Converter()
