"""Coordination: a blackboard port for mutable coordination (job status, notes) outside session journals.

`Blackboard()` works in one process; `open_blackboard(url)` shares one through a store (`sqlite:`,
`postgresql://`) across processes. Workers publish notes, wait for the notes they depend on
(`run_worker`), and every publish is a record of the board's coordination journal (docs/coordination.md).
"""

from waybook.coordination._board import Blackboard, StoreBlackboard, open_blackboard, run_worker
from waybook.coordination._notes import (
    NOTE_TYPE,
    CoordinationError,
    DependencyFailedError,
    InvalidNoteError,
    Note,
    NoteExistsError,
    WaitTimeoutError,
    check_receipts,
    receipt_of,
    replay_notes,
)

__all__ = [
    "NOTE_TYPE",
    "Blackboard",
    "CoordinationError",
    "DependencyFailedError",
    "InvalidNoteError",
    "Note",
    "NoteExistsError",
    "StoreBlackboard",
    "WaitTimeoutError",
    "check_receipts",
    "open_blackboard",
    "receipt_of",
    "replay_notes",
    "run_worker",
]
