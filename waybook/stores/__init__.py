"""Stores: many journals behind one `JournalStore` (docs/stores.md).

`open_store(url)` opens one: `file:DIR` (the directory store, the embedded default), `sqlite:FILE`,
`memory:`, and `postgresql://...` with the postgresql extra (waybook.stores.postgres). A store's journals
are read with `open_journal`, proven with `prove` (or `open_proven`, the journal and its proof from one
pass), and their blobs found with `blobs_for`: no caller needs to know how a store keeps them.

What the stores give their neighbours besides: which blobs records reference (`references`, the image
reference prefix `IMAGE_PREFIX`, gc's `DEFAULT_GRACE`), what reading blobs takes (`BlobReader`), a store
URL's local path (`local_path`) and the custom entry types the catalog marks a hidden or purged journal
with (`HIDDEN`, `PURGED`).
"""

from waybook.stores._async_open import open_async_store
from waybook.stores._blobs import (
    DEFAULT_GRACE,
    IMAGE_PREFIX,
    BlobDigestError,
    BlobError,
    BlobRef,
    BlobReferencedError,
    BlobStore,
    BlobTooLargeError,
    MissingBlobError,
    NoBlobStoreError,
    references,
)
from waybook.stores._bridge import BridgeError, FeedServer, RemoteSubscription
from waybook.stores._catalog import HIDDEN, PURGED
from waybook.stores._copying import copy_records
from waybook.stores._counting import count_journals, iter_journals, list_from
from waybook.stores._database import DatabaseJournal, DatabaseStore
from waybook.stores._directory import DirectoryStore
from waybook.stores._errors import (
    HeaderMismatchError,
    InvalidJournalIdError,
    InvalidStoreUrlError,
    JournalExistsError,
    JournalPurgedError,
    LostRecordsError,
    ReservedJournalError,
    StoreArgumentError,
    StoreBusyError,
    StoreError,
    StoreNotFoundError,
    UnknownJournalError,
)
from waybook.stores._in_process import InProcessStore, MemoryStore
from waybook.stores._protocol import (
    CATALOG_ID,
    AsyncJournalStore,
    CountingStore,
    JournalFiles,
    JournalStore,
    NonBlockingStore,
    PageReadingStore,
    SealedCreating,
)
from waybook.stores._proving import (
    BlobReader,
    blobs_for,
    open_journal,
    open_journals,
    open_proven,
    open_proven_journals,
    prove,
)
from waybook.stores._retention import (
    RetentionPolicy,
    RetentionReport,
    parse_duration,
    retain,
    retention_policy,
    set_retention_policy,
)
from waybook.stores._sqlite import SqliteStore
from waybook.stores._subscribe import (
    Applied,
    AsyncSubscription,
    Delivery,
    DeliveryConflictError,
    Subscription,
    subscribe,
    tail,
)
from waybook.stores._threaded import ThreadedJournal, ThreadedStore
from waybook.stores._url import OPENERS, local_path, open_store
from waybook.stores._values import FeedEntry, JournalInfo, JournalPage, PurgeReceipt, SealedJournal

__all__ = [
    # opening and the protocols
    "CATALOG_ID",
    "OPENERS",
    "AsyncJournalStore",
    "DatabaseJournal",
    "DatabaseStore",
    "DirectoryStore",
    "JournalStore",
    "InProcessStore",
    "MemoryStore",
    "SqliteStore",
    "ThreadedJournal",
    "ThreadedStore",
    "copy_records",
    "open_async_store",
    "open_store",
    "subscribe",
    "tail",
    # reading and proving a store's journals
    "blobs_for",
    "open_journal",
    "open_journals",
    "open_proven",
    "open_proven_journals",
    "prove",
    # paging through a big store
    "count_journals",
    "iter_journals",
    "list_from",
    # blobs: large outputs beside the journals (docs/blobs.md)
    "BlobRef",
    "BlobStore",
    # abilities some stores have
    "CountingStore",
    "JournalFiles",
    "NonBlockingStore",
    "PageReadingStore",
    "SealedCreating",
    # delivery to extensions
    "Applied",
    "AsyncSubscription",
    "Delivery",
    "FeedServer",
    "RemoteSubscription",
    "Subscription",
    # retention (docs/erasure.md)
    "RetentionPolicy",
    "RetentionReport",
    "parse_duration",
    "retain",
    "retention_policy",
    "set_retention_policy",
    # values
    "FeedEntry",
    "JournalInfo",
    "JournalPage",
    "PurgeReceipt",
    "SealedJournal",
    # errors
    "BlobDigestError",
    "BlobError",
    "BlobReferencedError",
    "BlobTooLargeError",
    "BridgeError",
    "DeliveryConflictError",
    "HeaderMismatchError",
    "InvalidJournalIdError",
    "InvalidStoreUrlError",
    "JournalExistsError",
    "JournalPurgedError",
    "LostRecordsError",
    "MissingBlobError",
    "NoBlobStoreError",
    "ReservedJournalError",
    "StoreArgumentError",
    "StoreBusyError",
    "StoreError",
    "StoreNotFoundError",
    "UnknownJournalError",
    # what a record's blobs are: the image reference prefix, the digests referenced, gc's grace
    "DEFAULT_GRACE",
    "IMAGE_PREFIX",
    "references",
    # a file: or sqlite: URL's local path
    "local_path",
    # the catalog's marks of a hidden or purged journal
    "HIDDEN",
    "PURGED",
    # what reading a journal's blobs takes
    "BlobReader",
]
