"""The writing speed rows (bench/speed.py): appends to a JSONL journal under `flush` (one record, a
batch, `exclusive`, the price of the path check) against a raw write loop; the default, durable append
(`group`) against a raw write + fsync loop and against `flush`; and group commit (8 writer threads under
`group` against one writer under `fsync`).
"""

from __future__ import annotations

import contextlib
import shutil
import statistics
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.measure import Row  # noqa: E402
from bench.speed_pairing import PairedRow, paired, row  # noqa: E402
from bench.workload import session_records  # noqa: E402

# --- appends ---------------------------------------------------------------------------------------


def append_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    import msgspec

    from waybook import GENESIS, JsonlJournal, Session
    from waybook.journal._jsonl._file_ops import FileIdentity, OsFileOps
    from waybook.model import AppendResult, Head, NewRecord, Record

    n = 5_000 if quick else 20_000
    records = list(session_records(n))
    texts = [r.body.content for r in records[1:]]  # type: ignore[union-attr]

    def raw_flush() -> None:
        encode = msgspec.json.encode
        with (tmp / "raw.jsonl").open("wb") as out:
            for r in records:
                out.write(encode(r) + b"\n")
                out.flush()

    class WithoutPathCheck(OsFileOps):
        """Only to price the check that the path still names the open file: every identity call
        answers from memory instead of a stat (so the row prices the stat and all its Python)."""

        def __init__(self) -> None:
            self._known: dict[Path, FileIdentity | None] = {}

        def identity(self, path: Path) -> FileIdentity | None:
            known = self._known.get(path)
            if known is None:
                known = super().identity(path)
                if known is not None:  # the file exists from here on
                    self._known[path] = known
            return known

    def journal_appends(**options: object) -> Callable[[], None]:
        def run() -> None:
            path = tmp / "journal.jsonl"
            path.unlink(missing_ok=True)
            ops = options.get("file_ops")
            if isinstance(ops, WithoutPathCheck):
                ops._known.clear()
            with JsonlJournal(path, sidecar=False, **options) as journal:  # type: ignore[arg-type]
                head = GENESIS
                for r in records:
                    head = journal.append((r,), expected=head).head

        return run

    def floor_loop(name: str, batches: list[list[NewRecord]], *, salted: bool = False) -> None:
        """The least Python doing the appends' work: per append its five system calls (flock, lseek for
        other writers, write, stat of the path, flock), the rules and the seal of each record (salted, as
        a journal of schema 2 seals content, when `salted`), inline, without the journal's structure and
        without its open and close (no fsync). Not an adapter: a floor."""
        import fcntl
        import os

        from waybook.codecs._wire import seal
        from waybook.journal._clock import new_salt
        from waybook.journal._ledger import Ledger

        path = str(tmp / name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        st = os.fstat(fd)
        dev, ino = st.st_dev, st.st_ino
        ledger = Ledger.empty(path)
        rules = ledger.rules
        rules.commit(rules.check(records[:1]))
        first, line = seal(1, records[0], GENESIS.digest)
        os.write(fd, line + b"\n")
        head, end = Head(1, first.digest), len(line) + 1
        flock, lseek, write, stat = fcntl.flock, os.lseek, os.write, os.stat
        ex, un = fcntl.LOCK_EX | fcntl.LOCK_NB, fcntl.LOCK_UN
        try:
            for batch in batches:
                flock(fd, ex)
                if lseek(fd, 0, os.SEEK_END) != end:
                    raise RuntimeError("another writer")
                size = len(batch)
                sealed: tuple[Record, ...]
                if size == 1:
                    new = batch[0]
                    delta = rules.check_one(new)
                    record, line = seal(head.seq + 1, new, head.digest, None, new_salt() if salted else None)
                    sealed, data = (record,), line + b"\n"
                else:
                    checked = rules.check(batch)
                    lines, sealed_list, prev = [], [], head.digest
                    for index, new in enumerate(batch, start=1):
                        salt = new_salt() if salted else None
                        record, line = seal(head.seq + index, new, prev, (index, size), salt)
                        sealed_list.append(record)
                        lines.append(line + b"\n")
                        prev = record.digest
                    sealed, data = tuple(sealed_list), b"".join(lines)
                write(fd, data)
                now = stat(path, follow_symlinks=False)
                if now.st_ino != ino or now.st_dev != dev:
                    raise RuntimeError("replaced")
                last = sealed[-1]
                result = AppendResult(head, Head(last.seq, last.digest), sealed)
                if size == 1:
                    rules.commit_one(batch[0].id, delta)
                else:
                    rules.commit(checked)
                head, end = result.head, end + len(data)
                flock(fd, un)
        finally:
            os.close(fd)

    def floor() -> None:
        floor_loop("floor.jsonl", [[new] for new in records[1:]])

    def session_floor() -> None:
        """`Session.user`'s floor: what a session adds to an append (a fresh id and timestamp, the body
        made with the leaf as its parent, a salt for the sealed content), then the append's floor."""
        from waybook.journal._clock import new_id, utc_now
        from waybook.model import UserMessage

        made, leaf = [], None
        for content in texts:  # made inside the timed call, as Session.user makes each record
            rid = new_id()
            made.append([NewRecord(id=rid, at=utc_now(), body=UserMessage(parent=leaf, content=content))])
            leaf = rid
        floor_loop("session-floor.jsonl", made, salted=True)

    def batch_floor() -> None:
        floor_loop("batch-floor.jsonl", [records[i : i + 100] for i in range(1, n, 100)])

    def session_appends() -> None:
        path = tmp / "session.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, sidecar=False, durability="flush") as journal:
            session = Session.create(journal, journal_id="bench")
            for content in texts:
                session.user(content)

    def session_custom() -> None:
        """Custom entries of nested JSON data: bodies whose bytes are decoded back and compared, the
        price of failing closed at every depth (a C comparison; a Python walk only when it differs)."""
        path = tmp / "custom.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, sidecar=False, durability="flush") as journal:
            session = Session.create(journal, journal_id="bench")
            for i in range(len(texts)):
                session.custom("bench.step", {"step": i, "tags": ["a", "b"], "meta": {"x": 1.5, "y": None}})

    def batches() -> None:
        path = tmp / "batch.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, sidecar=False, durability="flush") as journal:
            head = GENESIS
            for start in range(0, n, 100):
                head = journal.append(records[start : start + 100], expected=head).head

    rounds = 5 if quick else 7
    yield row(
        "speed.session.append.flush",
        n,
        raw_flush,
        session_appends,
        unit="appends/s",
        goal=0.20,
        rounds=rounds,
        note="Session.user per record (fresh id + timestamp); baseline msgspec encode + write + flush",
    )
    yield row(
        "speed.session.append.floor",
        n,
        raw_flush,
        session_floor,
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="not an adapter: a fresh id, timestamp and salt per record, the body made, then the append's "
        "floor (five system calls, rules, salted seal, inline): what the Session goal can reach here",
    )
    yield row(
        "speed.session.custom.flush",
        n,
        raw_flush,
        session_custom,
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="Session.custom of nested JSON data per record (decoded back and compared: fail closed at "
        "every depth); baseline the raw loop",
    )
    yield row(
        "speed.journal.append.flush",
        n,
        raw_flush,
        journal_appends(durability="flush"),
        unit="appends/s",
        goal=0.25,
        rounds=rounds,
        note="JsonlJournal.append of one record (all checks); baseline the same raw loop",
    )
    yield row(
        "speed.journal.append.floor",
        n,
        raw_flush,
        floor,
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="the append's work with no structure: five system calls, rules, seal, inline, no open or close "
        "(not an adapter): what the one-record goal can reach here",
    )
    yield row(
        "speed.journal.append.none",
        n,
        raw_flush,
        journal_appends(durability="none"),
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="the same under durability='none': no fsync at close, so the appends alone against the raw loop",
    )
    yield row(
        "speed.journal.append.flush_exclusive",
        n,
        raw_flush,
        journal_appends(exclusive=True, durability="flush"),
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="the same with exclusive=True (no per-append lock or size check)",
    )
    yield row(
        "speed.journal.append.path_check_cost",
        n,
        journal_appends(file_ops=WithoutPathCheck(), durability="flush"),
        journal_appends(durability="flush"),
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="journal append (one stat per append checks the path still names the file) against the same "
        "append with every identity check answered from memory: the ratio is what the check leaves",
    )
    yield row(
        "speed.journal.batch100.flush",
        n,
        raw_flush,
        batches,
        unit="records/s",
        goal=0.45,
        rounds=rounds,
        note="100 records per append; same baseline (per record)",
    )
    yield row(
        "speed.journal.batch100.floor",
        n,
        raw_flush,
        batch_floor,
        unit="records/s",
        goal=None,
        rounds=rounds,
        note="not an adapter: the batch append's work with no structure (five system calls per 100 records, "
        "the batch's rules, a seal per record with its place, inline): what the batch goal can reach here",
    )


# --- the default append: durable -------------------------------------------------------------------


def durable_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    """An append that returns is on disk by default (`group`; a lone writer fsyncs each append). Against
    the least a durable append can cost (encode, write, fsync per line) and against `flush` (the default
    before issue 41, which fsyncs only at flush and close)."""
    import os

    import msgspec

    from waybook import GENESIS, JsonlJournal, Session
    from waybook.stores import open_store

    n = 200 if quick else 1_000
    records = list(session_records(n))
    texts = [r.body.content for r in records[1:]]  # type: ignore[union-attr]

    def raw_fsync() -> None:
        encode = msgspec.json.encode
        path = tmp / "raw-fsync.jsonl"
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            for r in records:
                os.write(fd, encode(r) + b"\n")
                os.fsync(fd)
        finally:
            os.close(fd)

    def appends(**options: object) -> Callable[[], None]:
        def run() -> None:
            path = tmp / "durable.jsonl"
            path.unlink(missing_ok=True)
            with JsonlJournal(path, sidecar=False, **options) as journal:  # type: ignore[arg-type]
                head = GENESIS
                for r in records:
                    head = journal.append((r,), expected=head).head

        return run

    def session_default() -> None:
        path = tmp / "durable-session.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, sidecar=False) as journal:
            session = Session.create(journal, journal_id="bench")
            for content in texts:
                session.user(content)

    def store_appends(query: str) -> Callable[[], None]:
        def run() -> None:
            root = tmp / f"store{query.replace('?', '-').replace('=', '-')}"
            shutil.rmtree(root, ignore_errors=True)
            with open_store(f"file:{root}{query}") as store:
                session = Session(store.create("s"))
                for content in texts:
                    session.user(content)

        return run

    rounds = 3 if quick else 5
    yield row(
        "speed.journal.append.default_vs_raw_fsync",
        n,
        raw_fsync,
        appends(),
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="JsonlJournal.append of one record with no options (group: on disk when it returns); "
        "baseline encode + write + fsync per line",
    )
    yield row(
        "speed.journal.append.default_vs_flush",
        n,
        appends(durability="flush"),
        appends(),
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="the same default append against durability='flush' (the default before issue 41): the "
        "price of acknowledged meaning durable",
    )
    yield row(
        "speed.session.append.default_vs_raw_fsync",
        n,
        raw_fsync,
        session_default,
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="Session.user per record with no options; baseline encode + write + fsync per line",
    )
    yield row(
        "speed.store.file.append.default_vs_flush",
        n,
        store_appends("?durability=flush"),
        store_appends(""),
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="Session.user into a file: store with no options (the journal and the feed index fsynced "
        "per append) against ?durability=flush",
    )


# --- group commit -----------------------------------------------------------------------------------


def group_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    from waybook import GENESIS, JsonlJournal
    from waybook.model import NewRecord, Reset, StaleWriterError

    per_thread = 100 if quick else 250
    threads_n = 8
    at = "2026-12-01T09:00:00.000Z"
    header = next(iter(session_records(1)))
    shared: list[float] = []

    def one_writer() -> None:
        path = tmp / "fsync.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, durability="fsync", sidecar=False) as journal:
            head = journal.append([header], expected=GENESIS).head
            for i in range(per_thread * threads_n):
                head = journal.append([NewRecord(id=f"r{i}", at=at, body=Reset())], expected=head).head

    def group() -> None:
        path = tmp / "group.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, durability="group", sidecar=False) as journal:
            journal.append([header], expected=GENESIS)

            def writer(w: int) -> None:
                done = 0
                while done < per_thread:
                    try:
                        journal.append(
                            [NewRecord(id=f"w{w}-{done}", at=at, body=Reset())], expected=journal.head()
                        )
                        done += 1
                    except StaleWriterError:
                        pass

            threads = [threading.Thread(target=writer, args=(w,)) for w in range(threads_n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            stats = journal._group
            shared.append(stats.synced_appends / max(stats.fsyncs, 1))

    base, value, ratio = paired(per_thread * threads_n, one_writer, group, rounds=3)
    per_fsync = statistics.median(shared)
    yield PairedRow(
        "speed.group_commit.8_threads",
        value,
        "appends/s",
        base,
        ">= 2.5x, >= 3 per fsync",
        ratio >= 2.5 and per_fsync >= 3,
        f"8 writer threads, each append returns durable; {per_fsync:.1f} appends per fsync; baseline one "
        "writer under the fsync policy",
        paired_ratio=ratio,
    )
