"""Journals: the `SessionJournal` protocol, its adapters, verification, forks and erasure.

The records, heads and errors a journal carries are `waybook.model`'s: import them from there."""

from waybook.journal._async_protocol import AsyncSessionJournal
from waybook.journal._clock import new_id, utc_now
from waybook.journal._closing import ClosedOnExit
from waybook.journal._durability import Durability
from waybook.journal._erasure import (
    ErasedEntry,
    ErasingJournal,
    ErasureReceipt,
    ErasureRequest,
    Skipped,
    erase,
    erasure_receipt,
    is_sealable,
)
from waybook.journal._fork import ForkPoint, ForkProvenanceError, check_fork, fork_point
from waybook.journal._in_memory import InMemoryJournal
from waybook.journal._jsonl import JsonlJournal, JsonlOptions, RepairReceipt, verify_file
from waybook.journal._placeholders import iter_shown, shown_records
from waybook.journal._protocol import (
    Damage,
    DamageReporting,
    PositionedJournal,
    SelfChecking,
    SessionJournal,
)
from waybook.journal._verify import VerifyReport, verify

__all__ = [
    # protocol, positions, adapters
    "AsyncSessionJournal",
    "ClosedOnExit",
    "Durability",
    "InMemoryJournal",
    "JsonlJournal",
    "JsonlOptions",
    "PositionedJournal",
    "RepairReceipt",
    "SessionJournal",
    "VerifyReport",
    "verify",
    "verify_file",
    # what an adapter may also offer: a report of damage found, a check of its own files
    "Damage",
    "DamageReporting",
    "SelfChecking",
    # ids and timestamps every writer stamps records with
    "new_id",
    "utc_now",
    # forks
    "ForkPoint",
    "ForkProvenanceError",
    "check_fork",
    "fork_point",
    # records as a reader is shown them: an erased one as its placeholder
    "iter_shown",
    "shown_records",
    # erasure (docs/erasure.md)
    "ErasedEntry",
    "ErasingJournal",
    "ErasureReceipt",
    "ErasureRequest",
    "Skipped",
    "erase",
    "erasure_receipt",
    "is_sealable",
]
