"""How a `JsonlJournal` is opened: one frozen value, `JsonlOptions`, checked before any file is touched.

`JsonlJournal(path, options=JsonlOptions(durability="fsync"))` and `JsonlJournal(path, durability="fsync")`
open the same journal: the keywords are the value's fields (`JsonlKeywords` types them for mypy).
Passing both is refused: one call, one place the options come from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, TypedDict

import attrs

from waybook.journal._durability import DEFAULT_DURABILITY, Durability
from waybook.journal._jsonl._file_ops import OS_FILE_OPS, FileOps
from waybook.model import InvalidArgumentError

TORN_TAIL_POLICIES = ("refuse", "repair")


def _durability(value: Durability | str) -> Durability:
    return Durability(value)


def _ops_repr(ops: FileOps) -> str:
    return f"{type(ops).__name__}()"


@attrs.frozen(kw_only=True)
class JsonlOptions:
    """The options of a `JsonlJournal`; every field has the default an open without options gets.

    Each is also a keyword of `JsonlJournal(path, ...)`, `JsonlJournal.create`, `open_decoded`,
    `open_decoded_proved` and `open_proven`; `attrs.evolve(options, readonly=True)` derives one from
    another.
    """

    durability: Durability = attrs.field(default=DEFAULT_DURABILITY, converter=_durability)
    """When an append is durable. `group`, the default: every append is on disk when it returns, and
    appends from many threads share fsyncs (see `group_window`; a lone writer fsyncs each append).
    `fsync`: every append fsyncs alone. Named, weaker options: `flush` (flush()/close() fsync what was
    written; a power loss may take what came after the last flush) and `none` (the OS decides)."""
    on_torn_tail: str = "refuse"
    """What an open does with a torn final record: `refuse` (open, report `damage`, refuse appends) or
    `repair` (quarantine it)."""
    read_prefix: bool = False
    """Open a corrupt file to read the intact records before the damage."""
    create: bool = True
    """Create an empty journal if the file is missing."""
    group_window: float | None = None
    """The longest a group fsync waits for company, in seconds (None: as long as the last fsync took)."""
    readonly: bool = False
    """Open for reading only: no file is created, appends and repair are refused (audits)."""
    exclusive: bool = False
    """This object is the file's only writer for its lifetime: it holds the lock from open to close and
    skips the per-append check for other writers' records."""
    sidecar: bool = True
    """Read and write the `.checkpoint` beside the file; False proves every byte on open and leaves no
    checkpoint."""
    trust_checkpoint: bool = False
    """Restore from the checkpoint after checking only its last record and the header, without proving
    that the prefix's bytes are unchanged (they are hashed by default). Faster for a huge file whose
    bytes you control; a byte changed in the prefix is then not seen."""
    file_ops: FileOps = attrs.field(default=OS_FILE_OPS, repr=_ops_repr)
    """The system calls, replaced by crash tests (default: the real ones)."""

    def __attrs_post_init__(self) -> None:
        if self.on_torn_tail not in TORN_TAIL_POLICIES:
            msg = f"on_torn_tail must be 'refuse' or 'repair', not {self.on_torn_tail!r}; nothing was opened"
            raise InvalidArgumentError(msg)
        if self.exclusive and self.readonly:
            msg = "exclusive=True is for the journal's single writer; a readonly journal cannot be one"
            raise ValueError(msg)
        if self.group_window is not None and self.group_window < 0:
            msg = f"group_window must be None (adaptive) or >= 0 seconds, not {self.group_window!r}"
            raise ValueError(msg)

    @classmethod
    def of(cls, options: JsonlOptions | None, keywords: Mapping[str, object]) -> JsonlOptions:
        """The options of one call: `options` or the keywords, never both (InvalidArgumentError)."""
        if not keywords.keys() <= _FIELDS:
            unknown = ", ".join(sorted(keywords.keys() - _FIELDS))
            known = ", ".join(attrs.fields_dict(cls))
            msg = f"JsonlJournal has no option {unknown}; its options are {known}"
            raise InvalidArgumentError(msg)
        if options is None:
            return cls(**keywords)  # type: ignore[arg-type]  # (each keyword's type is JsonlKeywords')
        if not isinstance(options, JsonlOptions):
            msg = f"options must be a JsonlOptions, not {type(options).__name__}; nothing was opened"
            raise InvalidArgumentError(msg)
        if keywords:
            names = sorted(keywords)
            msg = (
                f"JsonlJournal got options= and the keyword options {', '.join(names)}; pass one or the "
                f"other: options=attrs.evolve(options, {', '.join(f'{n}=...' for n in names)}), or only "
                "keywords. Nothing was opened."
            )
            raise InvalidArgumentError(msg)
        return options


_FIELDS: Final = frozenset(attrs.fields_dict(JsonlOptions))


class JsonlKeywords(TypedDict, total=False):
    """`JsonlOptions`' fields as keywords, as `JsonlJournal(path, **keywords)` takes them."""

    durability: Durability | str
    on_torn_tail: str
    read_prefix: bool
    create: bool
    group_window: float | None
    readonly: bool
    exclusive: bool
    sidecar: bool
    trust_checkpoint: bool
    file_ops: FileOps
