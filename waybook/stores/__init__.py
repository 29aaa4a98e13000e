"""Stores: many journals behind one `JournalStore` (docs/stores.md).

`open_store(url)` opens one: `file:DIR` (the directory store, the embedded default), `sqlite:FILE`,
`memory:`, and `postgresql://...` with the postgresql extra (waybook.stores.postgres).
"""

from waybook.stores.copying import copy_records
from waybook.stores.database import DatabaseJournal, DatabaseStore
from waybook.stores.directory import DirectoryStore
from waybook.stores.errors import (
    InvalidJournalIdError,
    InvalidStoreUrlError,
    JournalExistsError,
    JournalPurgedError,
    ReservedJournalError,
    StoreArgumentError,
    StoreBusyError,
    StoreError,
    UnknownJournalError,
)
from waybook.stores.memory import MemoryStore
from waybook.stores.protocol import CATALOG_ID, AsyncJournalStore, JournalStore, tail
from waybook.stores.sqlite import SqliteStore
from waybook.stores.threaded import ThreadedJournal, ThreadedStore, open_async_store
from waybook.stores.url import OPENERS, open_store
from waybook.stores.values import FeedEntry, JournalInfo, JournalPage, PurgeReceipt

__all__ = [
    # opening and the protocols
    "CATALOG_ID",
    "OPENERS",
    "AsyncJournalStore",
    "DatabaseJournal",
    "DatabaseStore",
    "DirectoryStore",
    "JournalStore",
    "MemoryStore",
    "SqliteStore",
    "ThreadedJournal",
    "ThreadedStore",
    "copy_records",
    "open_async_store",
    "open_store",
    "tail",
    # values
    "FeedEntry",
    "JournalInfo",
    "JournalPage",
    "PurgeReceipt",
    # errors
    "InvalidJournalIdError",
    "InvalidStoreUrlError",
    "JournalExistsError",
    "JournalPurgedError",
    "ReservedJournalError",
    "StoreArgumentError",
    "StoreBusyError",
    "StoreError",
    "UnknownJournalError",
]
