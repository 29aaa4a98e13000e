"""Journals: the `SessionJournal` protocol, its adapters, verification, forks and erasure.

The records, heads and errors a journal carries are `waybook.model`'s: import them from there.

What the journal gives its neighbours: the ledger a store appends through (`Ledger`, `Plan`,
`prove_lines`, `iter_chain`, `check_line`), reads by seqs (`read_seqs`, `check_cursor`), the checks of
timeout arguments (`check_timeout`, `check_seconds`), a session's clock (`SessionClock`), the default
durability (`DEFAULT_DURABILITY`) and the fork rules a writer plans with (`plan_fork`, `provenance`,
`FORK_KEY`), and the rules a writer checks before it appends, as the journal checks them: the session
role's (`ID_PATTERN`, `TIMESTAMP_PATTERN`, `next_leaf`, `SessionRules`) and a memory note's text
(`front_matter`, `byte_length`, `content_digest`, `links_of`, ...)."""

from waybook.journal._async_protocol import AsyncSessionJournal
from waybook.journal._clock import SessionClock, new_id, utc_now
from waybook.journal._closing import ClosedOnExit
from waybook.journal._durability import DEFAULT_DURABILITY, Durability
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
from waybook.journal._fork import (
    FORK_KEY,
    ForkPoint,
    ForkProvenanceError,
    check_fork,
    fork_point,
    plan_fork,
    provenance,
)
from waybook.journal._in_memory import InMemoryJournal
from waybook.journal._jsonl import JsonlJournal, JsonlOptions, RepairReceipt, verify_file
from waybook.journal._ledger import Ledger, Plan, check_line, iter_chain, prove_lines
from waybook.journal._placeholders import iter_shown, shown_records
from waybook.journal._protocol import (
    Damage,
    DamageReporting,
    PositionedJournal,
    SelfChecking,
    SessionJournal,
)
from waybook.journal._reading import check_cursor, read_seqs
from waybook.journal._roles.memory_text import (
    DESCRIPTION_ADVICE,
    byte_length,
    content_digest,
    description_line,
    front_matter,
    front_matter_problems,
    is_valid_unicode,
    lacks_description,
    links_of,
    logical_lines,
    with_description,
    with_read_only,
)
from waybook.journal._roles.session import ID_PATTERN, TIMESTAMP_PATTERN, SessionRules, next_leaf
from waybook.journal._timeouts import check_seconds, check_timeout
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
    # the ledger (compare-and-append, proven lines): the database stores append through it
    "Ledger",
    "Plan",
    "check_line",
    "iter_chain",
    "prove_lines",
    # reading records by seqs, in runs; the check of a read cursor
    "check_cursor",
    "read_seqs",
    # the checks of a timeout or seconds argument, shared by the stores and the blackboard
    "check_seconds",
    "check_timeout",
    # a clock that never runs backwards, for a session's records
    "SessionClock",
    # what an embedded journal promises when nobody says otherwise
    "DEFAULT_DURABILITY",
    # the fork rules a session writer plans a fork with
    "FORK_KEY",
    "plan_fork",
    "provenance",
    # the session role's rules a writer checks before it appends: ids, timestamps, the leaf after a record
    "ID_PATTERN",
    "TIMESTAMP_PATTERN",
    "SessionRules",
    "next_leaf",
    # the memory role's text rules: a note's size, digest, front matter, description and links
    "DESCRIPTION_ADVICE",
    "byte_length",
    "content_digest",
    "description_line",
    "front_matter",
    "front_matter_problems",
    "is_valid_unicode",
    "lacks_description",
    "links_of",
    "logical_lines",
    "with_description",
    "with_read_only",
]
