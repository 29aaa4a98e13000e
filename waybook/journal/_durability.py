"""Durability policies: what an append promises about a crash and a power loss, for every adapter that
writes to disk.

| policy  | an append returns after                        | process crash | power loss           |
|---------|------------------------------------------------|---------------|----------------------|
| `group` | write(2) and an fsync shared with other appends| survives      | survives (default)   |
| `fsync` | write(2) and an fsync of the file              | survives      | survives             |
| `flush` | write(2); `flush()` and `close()` fsync        | survives      | up to the last flush |
| `none`  | write(2): the bytes are in the OS page cache   | survives      | may lose any record  |

Acknowledged means durable by default, on every store: `group` is the default of `JsonlJournal` and of
the directory store (`file:`), SQLite's is `fsync` (`synchronous=FULL`), PostgreSQL commits with
`synchronous_commit=on`. `flush` and `none` are explicit, named options. Under `group`, appends from
several threads share fsyncs (the JSONL adapter's `GroupCommit`); every append still returns only once
its own bytes are durable, and a lone writer's append is synced at once. A failed fsync is fatal for
the journal object: it raises DurabilityError now and on every later append; it never retries and
never reports success (the page cache may have dropped the data). The SQLite store maps each policy to
its `synchronous` setting.
"""

from __future__ import annotations

import enum


class Durability(enum.StrEnum):
    NONE = "none"
    FLUSH = "flush"
    FSYNC = "fsync"
    GROUP = "group"


DEFAULT_DURABILITY = Durability.GROUP
"""What an embedded journal promises when nobody says otherwise: an append that returns is on disk."""
