"""`DirectoryStore` (`file:DIR`): the embedded default. One JSONL file per journal, plus the catalog.

Layout of DIR (this module alone names its files):
    catalog.jsonl           the catalog journal (role "catalog"): creations, hidings, purge receipts
    journals/ID.jsonl       one JsonlJournal per journal (with its `.lock` sidecar)
    store.index             the catalog's fold and what the feed fed, in SQLite, as of a catalog record
                            and a feed prefix it names (_store_index.py): an open that finds them still
                            there reads it by key and page and folds only what follows; deleting it
                            changes nothing but the speed of an open
    feed.runs               the feed: one line `["ID",first,last,"DIGEST"]` per run of records fed
                            together (DIGEST: record last's); each journal's last run is the head the
                            store committed to it, so a file that holds less is lost records
    store.lock              flocked while creating, hiding or purging (feed.runs is flocked itself)
Cross-process safe on a local filesystem (the JSONL caveats apply, docs/jsonl.md). The journal files are
the truth; `feed.runs` is an index over them that the next commit or open of a journal catches up.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import msgspec

from waybook._files import FILE_MODE, FileLock, create_atomically, fsync_dir, os_reason
from waybook.codecs import ENCODER
from waybook.journal import (
    DEFAULT_DURABILITY,
    Durability,
    JsonlJournal,
    PositionedJournal,
    SessionJournal,
    VerifyReport,
)
from waybook.journal._jsonl import OS_FILE_OPS, FileOps, checkpoint_path, erasure_marker_path
from waybook.model import Head, Header, IntegrityError, Record, StorageError
from waybook.stores import _sealed
from waybook.stores._base import CatalogStore, store_clock, store_ids, stored_digest
from waybook.stores._blob_files import FileBlobs
from waybook.stores._catalog import CREATED, check_journal_id
from waybook.stores._errors import (
    JournalExistsError,
    LostRecordsError,
    StoreArgumentError,
    UnknownJournalError,
)
from waybook.stores._holding import checked_report, lost_journal
from waybook.stores._indexed_catalog import IndexedCatalog, full_tail
from waybook.stores._journal_table import Layered
from waybook.stores._lazy_catalog import LazyCatalog
from waybook.stores._protocol import CATALOG_ID
from waybook.stores._runs import Run, Runs
from waybook.stores._sealed import check_distinct, proved_header
from waybook.stores._store_index import IndexState, IndexTail, StoreIndex, write_index
from waybook.stores._values import SealedJournal


class _RunLine(msgspec.Struct, array_like=True):
    """A line of `feed.runs`; lines an older waybook wrote have no digest."""

    journal_id: str
    first: int
    last: int
    digest: str | None = None


_RUNS_DECODER = msgspec.json.Decoder(Run)
"""`feed.runs` read straight into runs, a read of many lines at once (a `_RunLine` is a `Run`'s line)."""
CATALOG_FILE = "catalog.jsonl"
INDEX_FILE = "store.index"
SNAPSHOT_TAIL = 1000
"""How many catalog records and feed runs an open or close folds past the index before bringing it
forward (the URL option keeps its first name, `snapshot_tail`)."""
FED_CACHE = 1024
"""How many journals' fed heads read from the index are kept (an open of a journal asks for it twice)."""
JOURNALS = "journals"
BLOBS = "blobs"


def is_directory_store(directory: Path) -> bool:
    """Whether `directory` holds a directory store (its catalog file)."""
    return (directory / CATALOG_FILE).is_file()


def directory_store_of(journal_file: Path) -> Path | None:
    """The directory of the store whose journal file `journal_file` is (`DIR/journals/ID.jsonl`, DIR holding
    a catalog and blobs), or None: a journal file copied out of its store reads its blobs from nowhere."""
    place = journal_file.resolve().parent
    store = place.parent
    if place.name == JOURNALS and is_directory_store(store) and (store / BLOBS).is_dir():
        return store
    return None


class DirectoryStore(CatalogStore):
    """Journals as JSONL files in a directory. `durability` (default `group`: an append that returns is
    on disk) applies to every journal and the catalog; `file_ops` are their system calls (tests count
    or fault them). An open or a close that folded more than `snapshot_tail` catalog records and feed
    runs past the store's index brings it forward; one that found none it could use writes a new one."""

    def _blob_engine(self) -> FileBlobs:
        return FileBlobs(self._dir)

    poll_interval = 0.25

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        durability: Durability | str = DEFAULT_DURABILITY,
        create: bool = True,
        file_ops: FileOps = OS_FILE_OPS,
        clock: Callable[[], str] = store_clock,
        ids: Callable[[], str] = store_ids,
        snapshot_tail: int = SNAPSHOT_TAIL,
    ) -> None:
        if type(snapshot_tail) is not int or snapshot_tail < 0:
            msg = f"snapshot_tail {snapshot_tail!r:.40} must be a whole number from 0 (0: save on every open)"
            raise StoreArgumentError(msg)
        self._dir = Path(directory)
        self._snapshot_tail = snapshot_tail
        super().__init__(f"file:{self._dir}", clock=clock, ids=ids)
        self._durability = Durability(durability)
        self._file_ops = file_ops
        self._journals = self._dir / JOURNALS
        if not self._dir.is_dir() and not create:
            msg = f"{self._dir}: no such store directory; pass create=True to create an empty store"
            raise StorageError(msg)
        try:
            self._journals.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            msg = f"{self._dir}: cannot create the store directory: {exc.strerror or exc}"
            raise StorageError(msg) from exc
        self._mutex = threading.Lock()
        self._lock_fd = self._feed_fd = -1
        self._lock_fd = _open_for_lock(self._dir / "store.lock", os.O_RDONLY)
        self._lock = FileLock(self._lock_fd, self._dir / "store.lock")
        self._feed_path = self._dir / "feed.runs"
        self._feed_fd = _open_for_lock(self._feed_path, os.O_RDWR | os.O_APPEND)
        self._feed_file_lock = FileLock(self._feed_fd, self._feed_path)
        self._feed_seen = 0
        self._feed_last = ""
        """The SHA-256 of `feed.runs`'s last line before `_feed_seen` ("" before any)."""
        self._index: StoreIndex | None = None
        self._index_mark = (0, 0)
        """(catalog seq, runs) the index on disk holds, as far as this store knows."""
        self._index_stale = False
        self._temps_swept = False
        self._catalog_mark = (0, 0)
        """(seq, byte offset its line ends at) of a catalog record: where the index's next end counts from."""
        try:
            catalog = self._catalog_from_index() or self._open_catalog()
            self._attach_catalog(catalog)
            self._save_index_if_behind()
        except BaseException:
            self._release()
            raise

    @property
    def directory(self) -> Path:
        return self._dir

    @property
    def durability(self) -> Durability:
        """What every journal of this store promises when an append returns (docs/stores.md)."""
        return self._durability

    def path_of(self, journal_id: str) -> Path:
        """The file of a journal (whether or not it exists). The id must be valid (check_journal_id)."""
        return self._journals / f"{journal_id}.jsonl"

    # --- abilities: its journals are files (JournalFiles, ReadingStore, ProvingStore) --------------------

    def file_of(self, journal_id: str) -> Path:
        """The file of an existing journal; the errors `open` raises for any other id."""
        self._existing(journal_id)
        return self.path_of(journal_id)

    def open_to_read(self, journal_id: str) -> SessionJournal:
        """The journal's file, read-only, proven as a default open proves it (from its checkpoint), its
        reads served from the bytes the open read. Nothing is adopted or fed: nothing is written. A file
        that holds less than the store committed raises LostRecordsError."""
        journal, _ = JsonlJournal.open_proven(self.file_of(journal_id), sidecar=True)
        try:
            self._check_holds(journal_id, journal)
        except BaseException:
            journal.close()
            raise
        return journal

    def open_proven(self, journal_id: str, *, keep: bool) -> tuple[SessionJournal, VerifyReport]:
        """The journal's file (or the catalog's), every byte proved as `verify_file` proves it, the proven
        prefix of a damaged one; with `keep`, its reads are served from the bytes the proof read. A file
        that holds less than the store committed (or none at all) is reported as lost records."""
        if journal_id == CATALOG_ID:
            path = self._dir / CATALOG_FILE  # (it exists: the store opened it)
        else:
            check_journal_id(journal_id)
            try:
                path = self.file_of(journal_id)
            except LostRecordsError as lost:
                return lost_journal(self.path_of(journal_id), lost)
        journal, report = JsonlJournal.open_proven(path, read_prefix=True, keep=keep)
        committed = self.committed(journal_id)
        return journal, checked_report(report, committed, lambda seq: stored_digest(journal, seq))

    def create_sealed(self, journals: Sequence[SealedJournal]) -> None:
        """Create each of `journals` whole from its sealed lines (SealedCreating): each proved as an
        open proves a file, and every id checked new, before anything is written (typed errors, nothing
        written); then the files written, fsynced together and linked into place, their directory
        fsynced once; then one catalog batch for all of them and a feed run each. Each journal's header
        names its id (HeaderMismatchError otherwise). The catalog and feed
        follow the store's durability (`flush`: at `close()`). A crash leaves each journal absent or
        whole; one whose catalog entry was lost is an orphan that `exists`, `open` and `list` adopt."""
        journals = list(journals)
        check_distinct(journals)
        headers = [proved_header(journal, store=self._url) for journal in journals]
        created: list[tuple[SealedJournal, Header]] = []
        with self._store_lock():
            self._sync_catalog()
            for journal in journals:
                self._refuse_taken(journal.journal_id)
            if self._catalog_lost is not None:
                raise self._catalog_lost  # before any file is made
            if not self._temps_swept:  # what a killed creator left (once per open: a listing of journals/)
                _sealed.sweep_temps(self._journals)
                self._temps_swept = True
            orphans = [j.journal_id for j in journals if self._raw_exists(j.journal_id)]
            if not orphans:
                files = [(self.path_of(j.journal_id), j.data) for j in journals]
                durable = self._durability is not Durability.NONE
                taken = {p.name for p in _sealed.write_new_files(files, durable=durable)}
                orphans = [j.journal_id for j in journals if self.path_of(j.journal_id).name in taken]
                pairs = zip(journals, headers, strict=True)
                created = [(j, h) for j, h in pairs if j.journal_id not in orphans]
                entries = [
                    (CREATED, {"journal": j.journal_id, "role": h.role, "metadata": dict(h.metadata)})
                    for j, h in created
                ]
                if entries:
                    self._append_catalog_batch(entries)
            for journal_id in orphans:  # made by someone else meanwhile: listed, and refused
                self._adopt_orphan(journal_id)
        for journal, _ in created:
            self._fed(journal.journal_id, journal.head)
        if orphans:
            raise JournalExistsError(store=self._url, journal_id=orphans[0])

    def _raw_missing(self, journal_id: str) -> str:
        path = self.path_of(journal_id)
        if not path.exists() and not path.is_symlink():
            return f"its file {path.name} is gone"
        what = "a directory" if path.is_dir() else "something that is not a regular file"
        return f"{what} is where its file {path.name} was"

    def close(self) -> None:
        if self._closed:
            return
        try:
            with contextlib.suppress(StorageError):  # (a store whose catalog was damaged meanwhile)
                self._save_index_if_behind()
            super().close()
        finally:
            self._release()
            self._runs = Runs()  # (drops the index's loader, which holds this store: no cycle to collect)

    # --- hooks ----------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _store_lock(self) -> Iterator[None]:
        with self._mutex:
            self._lock.acquire(exclusive=True)
            try:
                yield
            finally:
                self._lock.release()

    @contextlib.contextmanager
    def _feed_lock(self) -> Iterator[None]:
        self._feed_file_lock.acquire(exclusive=True)
        try:
            yield
        finally:
            self._feed_file_lock.release()

    def _raw_exists(self, journal_id: str) -> bool:
        return self.path_of(journal_id).is_file()

    def _raw_create(self, journal_id: str, line: bytes | None) -> bool:
        path = self.path_of(journal_id)
        try:
            return create_atomically(path, b"" if line is None else line + b"\n")
        except OSError as exc:
            msg = f"{self._url} {journal_id}: cannot create the journal's file {path}: {os_reason(exc)}"
            raise StorageError(msg) from exc

    def _raw_open(self, journal_id: str, *, readonly: bool = False) -> PositionedJournal:
        path = self.path_of(journal_id)
        if not path.is_file():
            raise UnknownJournalError(store=self._url, journal_id=journal_id)
        return JsonlJournal(
            path, create=False, durability=self._durability, readonly=readonly, file_ops=self._file_ops
        )

    def _raw_erase(self, journal_id: str) -> None:
        path = self.path_of(journal_id)
        torn = re.compile(re.escape(path.name) + r"\.torn-[0-9]+-[0-9a-f]+\.quarantine")
        # the lock file older versions kept, and the reopen checkpoint: no trace of the journal is left
        doomed = [path, path.with_name(path.name + ".lock"), checkpoint_path(path), erasure_marker_path(path)]
        doomed += [p for p in self._journals.iterdir() if torn.fullmatch(p.name)]
        for victim in doomed:
            with contextlib.suppress(FileNotFoundError):
                victim.unlink()
        fsync_dir(self._journals)

    def _feed_sync(self) -> None:
        size = os.fstat(self._feed_fd).st_size
        if size <= self._feed_seen:
            return
        data = os.pread(self._feed_fd, size - self._feed_seen, self._feed_seen)
        end = data.rfind(b"\n") + 1  # a line being written, or torn by a crash, is not a run yet
        if end:
            self._runs.extend(_RUNS_DECODER.decode_lines(data[:end]))  # (blank lines are skipped)
            self._feed_last = hashlib.sha256(data[data.rfind(b"\n", 0, end - 1) + 1 : end - 1]).hexdigest()
        self._feed_seen += end

    def _feed_write(self, run: Run) -> None:
        size = os.fstat(self._feed_fd).st_size
        if size > self._feed_seen:  # a writer died mid-line: drop its partial line (the run is re-fed)
            os.ftruncate(self._feed_fd, self._feed_seen)
        line = ENCODER.encode(_RunLine(*run)) + b"\n"
        written = os.write(self._feed_fd, line)
        if written != len(line):
            os.ftruncate(self._feed_fd, self._feed_seen)
            msg = f"{self._feed_path}: short write extending the feed; nothing was fed"
            raise StorageError(msg)
        if self._durability in (Durability.FSYNC, Durability.GROUP):
            os.fsync(self._feed_fd)
        self._feed_last = hashlib.sha256(line[:-1]).hexdigest()
        self._feed_seen += len(line)

    # --- internals ------------------------------------------------------------------------------------

    def _open_catalog(self) -> JsonlJournal:
        path = self._dir / CATALOG_FILE
        create_atomically(path, b"")  # False when it exists: then it is simply opened
        return JsonlJournal(path, create=False, durability=self._durability, file_ops=self._file_ops)

    def _catalog_from_index(self) -> LazyCatalog | None:
        """Start from the index if the catalog and `feed.runs` still hold what it names (before anything is
        folded): the catalog journal is then opened only when something needs it (LazyCatalog). None
        when there is no index this store can use (one that is there is rewritten after the open)."""
        path = self._dir / INDEX_FILE
        index = StoreIndex.open(path)
        if index is None:
            self._index_stale = path.exists() or path.is_symlink()
            return None
        catalog_path = self._dir / CATALOG_FILE
        found = None
        with contextlib.suppress(OSError):
            fd = os.open(catalog_path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                found = index.check(fd, self._feed_fd)
            finally:
                os.close(fd)
        if found is None:
            index.close()
            self._index_stale = True
            return None
        last, line = found
        state = index.state
        self._index = index
        self._cat = IndexedCatalog.over(self._url, index, last)
        size, last_sha = state.feed_size, state.feed_last_sha256
        fed_of = functools.lru_cache(maxsize=FED_CACHE)(index.fed)  # (a seq and its digest: one lookup)
        self._runs = Runs.pending(
            head=state.feed_head,
            count=state.feed_runs,
            fed=Layered(lambda journal_id: _fed_seq(fed_of(journal_id))),
            digests=Layered(lambda journal_id: _fed_digest(fed_of(journal_id))),
            load=lambda: self._feed_prefix(size, last_sha),
        )
        self._feed_seen, self._feed_last = size, last_sha
        self._index_mark = (state.catalog_seq, state.feed_runs)
        self._catalog_mark = (state.catalog_seq, state.catalog_end)
        return LazyCatalog(
            catalog_path,
            last=last,
            line=line,
            end=state.catalog_end,
            opener=lambda: self._catalog_after(last),
        )

    def _catalog_after(self, last: Record) -> JsonlJournal:
        """The catalog journal itself (proven from its checkpoint), which must still hold `last`, the
        record the index was checked against when the store opened."""
        catalog = self._open_catalog()
        if stored_digest(catalog, last.seq) != Head.of(last).digest:
            catalog.close()
            msg = (
                f"{self._dir / CATALOG_FILE}: its record {last.seq} is no longer the one the store opened "
                "with (the catalog was replaced while the store was open); open the store again"
            )
            raise IntegrityError(msg)
        return catalog

    def _save_index_if_behind(self) -> None:
        """Bring the index forward when the fold has gone `snapshot_tail` past it, or write a new one when
        the open found none it could use. One that cannot be written costs only speed."""
        with self._runs_mutex, self._cat_mutex:
            catalog, runs = self._cat, self._runs
            seq, count = catalog.seq, runs.count
            behind = seq - self._index_mark[0] + count - self._index_mark[1]
            if catalog.last is None or not (self._index_stale or behind > self._snapshot_tail):
                return
            try:
                end = self._catalog_end(seq)
            except (StorageError, IntegrityError):
                return
            state = IndexState(
                catalog_seq=seq,
                catalog_digest=catalog.last.digest,
                catalog_end=end,
                feed_size=self._feed_seen,
                feed_last_sha256=self._feed_last,
                feed_head=runs.head,
                feed_runs=count,
                journals=catalog.count(hidden=True),
                hidden=catalog.count(hidden=True) - catalog.count(hidden=False),
            )
            fed = [
                (j, last, runs.committed(j).digest) for j, last in _own(runs.fed).items() if last is not None
            ]
            if isinstance(catalog, IndexedCatalog) and self._index is not None:
                journals, gone, purged = catalog.tail()
                tail = IndexTail(journals=journals, gone=gone, purged=purged, fed=fed, state=state)
                index: StoreIndex | None = self._index
            else:
                tail, index = full_tail(catalog, state, fed), None
        saved = index.bring_forward(tail) if index is not None else write_index(self._dir / INDEX_FILE, tail)
        if saved:
            self._index_mark, self._index_stale = (seq, count), False

    def _catalog_end(self, seq: int) -> int:
        """The byte offset where the catalog's line of record `seq` ends (counted from the last one known:
        a journal's lines follow each other, one newline each)."""
        known, end = self._catalog_mark
        if seq > known:
            assert self._catalog_raw is not None
            end += sum(len(line) + 1 for line in self._catalog_raw.read_lines(after=known, limit=seq - known))
            self._catalog_mark = (seq, end)
        return end

    def _feed_prefix(self, size: int, last_sha256: str) -> list[Run]:
        """The runs in the first `size` bytes of `feed.runs`, whose last line hashed to `last_sha256` when
        the store opened from its index (read when a feed read first needs them)."""
        data = os.pread(self._feed_fd, size, 0)
        last = data[data.rfind(b"\n", 0, size - 1) + 1 : size - 1] if size else b""
        changed = len(data) != size or (size and hashlib.sha256(last).hexdigest() != last_sha256)
        try:
            runs = [] if changed else list(_RUNS_DECODER.decode_lines(data))
        except (msgspec.DecodeError, ValueError):
            changed = True
        if changed:
            msg = (
                f"{self._feed_path}: its first {size} bytes changed while the store was open (the feed only "
                "grows); reopen the store"
            )
            raise IntegrityError(msg)
        return runs

    def _release(self) -> None:
        for fd in (self._feed_fd, self._lock_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _open_for_lock(path: Path, flags: int) -> int:
    """Open (creating if missing) a store file this process flocks; a symbolic link is refused."""
    try:
        return os.open(path, flags | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)
    except OSError as exc:
        msg = f"{path}: cannot open the store's file: {exc.strerror or exc}"
        raise StorageError(msg) from exc


def _fed_seq(fed: tuple[int, str | None] | None) -> int | None:
    return None if fed is None else fed[0]


def _fed_digest(fed: tuple[int, str | None] | None) -> str | None:
    return None if fed is None else fed[1]


def _own(fed: Mapping[str, int]) -> Mapping[str, int | None]:
    """What was fed past the index (a layered map's own entries), or all of it (a whole fold's dict)."""
    return fed.own() if isinstance(fed, Layered) else fed
