"""Issue 12: every fault and every bad input is a typed error at the boundary, and changes nothing.

Never a raw TypeError, RecursionError, ValueError, AttributeError or OSError from inside; never a hang.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.builders import AT, header, user
from tests.helpers.paths import ROOT
from waybook import Session
from waybook.codecs._wire import decode_record
from waybook.journal import InMemoryJournal, JsonlJournal, SessionJournal, verify_file
from waybook.journal._jsonl._file_ops import OsFileOps
from waybook.memory import Create, Insert, Memory, View
from waybook.model import (
    GENESIS,
    DecodeError,
    InvalidArgumentError,
    InvalidRecordError,
    JournalError,
    NewRecord,
    NotAJournalFileError,
    Reset,
    StorageError,
)


def deeply_nested(depth: int) -> list[Any]:
    outer: list[Any] = []
    inner = outer
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return outer


# --- what is at the path --------------------------------------------------------------------------


def in_thread(action: Callable[[], object]) -> BaseException | None:
    """Run `action` in a thread; return what it raised (None if nothing). Fails if it never returns."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            action()
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert outcome, "the call blocked (a FIFO open that waits for a writer)"
    return outcome[0]


@pytest.mark.parametrize("options", [{}, {"readonly": True}, {"create": False}])
def test_a_directory_at_the_journal_path_is_a_typed_error_naming_it(tmp_path: Path, options: Any) -> None:
    path = tmp_path / "dir.jsonl"
    path.mkdir()
    with pytest.raises(NotAJournalFileError, match=r"dir\.jsonl: is a directory"):
        JsonlJournal(path, **options)
    with pytest.raises(NotAJournalFileError):
        verify_file(path)


def test_a_fifo_at_the_journal_path_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    try:
        for action in (lambda: verify_file(path), lambda: JsonlJournal(path, create=False)):
            error = in_thread(action)
            assert isinstance(error, NotAJournalFileError), error
            assert "a FIFO" in str(error)
    finally:
        with open(os.open(path, os.O_RDWR | os.O_NONBLOCK), "wb"):  # release any blocked opener
            pass


def test_a_device_at_the_journal_path_is_refused() -> None:
    with pytest.raises(NotAJournalFileError, match="character device"):
        JsonlJournal("/dev/null", create=False)
    with pytest.raises(NotAJournalFileError):
        verify_file("/dev/null")


# --- repair meets a fault -------------------------------------------------------------------------


def torn_file(path: Path) -> bytes:
    with JsonlJournal(path, sidecar=False) as journal:  # no reopen checkpoint: only the journal file
        Session.create(journal).user("kept")
    with path.open("ab") as handle:
        handle.write(b'{"seq":3,"id":"to')
    return path.read_bytes()


def test_repair_that_cannot_create_its_quarantine_file_is_a_typed_error_and_changes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    before = torn_file(path)
    journal = JsonlJournal(path, create=False)
    damage = journal.damage
    assert damage is not None
    digest = hashlib.sha256(before[damage.offset :]).hexdigest()
    (tmp_path / f"s.jsonl.torn-{damage.offset}-{digest[:12]}.quarantine").mkdir()  # in the way
    with pytest.raises(StorageError, match="quarantine copy"):
        journal.repair()
    assert path.read_bytes() == before
    journal.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_repair_in_a_read_only_directory_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    before = torn_file(path)
    journal = JsonlJournal(path, create=False)
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(StorageError):
            journal.repair()
    finally:
        tmp_path.chmod(0o700)
    assert path.read_bytes() == before
    journal.close()


REPAIR_AS_NOBODY = """
import os, sys
from waybook.journal import JsonlJournal  # imported first: nobody cannot read root's packages
from waybook.model import StorageError  # imported first: nobody cannot read root's packages
os.setgid(65534)
os.setuid(65534)
with JsonlJournal(sys.argv[1], create=False) as journal:
    try:
        journal.repair()
    except StorageError as exc:
        print("typed", type(exc).__name__)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become an unprivileged user")
def test_repair_in_a_read_only_directory_is_a_typed_error_for_an_unprivileged_user() -> None:
    directory = Path(tempfile.mkdtemp(prefix="waybook-readonly-"))
    try:
        directory.chmod(0o755)  # nobody may enter, not create
        path = directory / "s.jsonl"
        before = torn_file(path)
        os.chown(path, 65534, 65534)
        run = subprocess.run(
            [sys.executable, "-c", REPAIR_AS_NOBODY, str(path)],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        )
        assert run.stdout.strip() == "typed StorageError", run.stderr
        assert path.read_bytes() == before
        assert [p.name for p in directory.iterdir()] == ["s.jsonl"]
    finally:
        shutil.rmtree(directory)


class EioOps(OsFileOps):
    """Reads, truncates and fsyncs fail with EIO once `failing` is set."""

    failing = False

    def _eio(self) -> None:
        if self.failing:
            raise OSError(errno.EIO, "Input/output error (injected)")

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        self._eio()
        return super().pread(fd, size, offset)

    def truncate(self, fd: int, length: int) -> None:
        self._eio()
        super().truncate(fd, length)

    def fsync(self, fd: int) -> None:
        self._eio()
        super().fsync(fd)


def test_repair_and_reads_under_eio_are_typed_errors(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    before = torn_file(path)
    ops = EioOps()
    journal = JsonlJournal(path, create=False, file_ops=ops)
    ops.failing = True
    with pytest.raises(StorageError, match="Input/output error"):
        journal.repair()
    with pytest.raises(StorageError):
        list(journal.read())
    assert path.read_bytes() == before
    ops.failing = False
    journal.close()


def test_opening_under_eio_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    torn_file(path)
    ops = EioOps()
    ops.failing = True
    with pytest.raises(StorageError, match="Input/output error"):
        JsonlJournal(path, create=False, file_ops=ops)


# --- inputs of the wrong type ---------------------------------------------------------------------


@pytest.fixture(params=["in_memory", "jsonl"])
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionJournal]:
    made: SessionJournal = (
        InMemoryJournal("typed") if request.param == "in_memory" else JsonlJournal(tmp_path / "t.jsonl")
    )
    with made:
        made.append([header()], expected=GENESIS)
        yield made


BAD_CALLS: dict[str, tuple[Callable[[Session], object], type[JournalError]]] = {
    "Session.user(None)": (lambda s: s.user(None), InvalidRecordError),  # type: ignore[arg-type]
    "Session.user(5)": (lambda s: s.user(5), InvalidRecordError),  # type: ignore[arg-type]
    "append(None)": (lambda s: s.journal.append(None, expected=s.head), InvalidArgumentError),  # type: ignore[arg-type]
    "append(a record, not a list)": (
        lambda s: s.journal.append(user("x", None), expected=s.head),  # type: ignore[arg-type]
        InvalidArgumentError,
    ),
    "append([None])": (lambda s: s.journal.append([None], expected=s.head), InvalidRecordError),  # type: ignore[list-item]
    "expected=None": (lambda s: s.journal.append([user("x", None)], expected=None), InvalidArgumentError),  # type: ignore[arg-type]
    "expected=(seq, digest)": (
        lambda s: s.journal.append([user("x", None)], expected=(1, "0" * 64)),  # type: ignore[arg-type]
        InvalidArgumentError,
    ),
    'read(after="x")': (lambda s: list(s.journal.read(after="x")), InvalidArgumentError),  # type: ignore[arg-type]
    "read(limit=1.5)": (lambda s: list(s.journal.read(limit=1.5)), InvalidArgumentError),  # type: ignore[arg-type]
    'read_lines(after="x")': (lambda s: list(s.journal.read_lines(after="x")), InvalidArgumentError),  # type: ignore[arg-type]
    "100,000-deep nesting": (lambda s: s.custom("t.deep", data=deeply_nested(100_000)), InvalidRecordError),
    "10**5000": (lambda s: s.custom("t.big", data=10**5000), InvalidRecordError),
    "body=None": (
        lambda s: s.journal.append([NewRecord(id="x", at=AT, body=None)], expected=s.head),  # type: ignore[arg-type]
        InvalidRecordError,
    ),
}


@pytest.mark.parametrize("call", sorted(BAD_CALLS))
def test_an_input_of_the_wrong_type_is_a_typed_error_and_writes_nothing(
    journal: SessionJournal, call: str
) -> None:
    session = Session(journal)
    before = list(journal.read_lines())
    action, expected = BAD_CALLS[call]
    with pytest.raises(expected):
        action(session)
    assert list(journal.read_lines()) == before
    assert session.user("still fine").seq == 2


def test_reading_with_a_huge_cursor_reads_nothing(journal: SessionJournal) -> None:
    assert list(journal.read(after=10**5000)) == []
    assert len(list(journal.read(limit=10**5000))) == 1


@pytest.mark.parametrize(
    "at",
    [
        "2026-13-45T25:61:61Z",
        "2026-00-10T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-12-00T00:00:00Z",
        "2026-12-01T24:00:00Z",
        "2026-12-01T23:60:00Z",
        "2026-12-01T23:59:61Z",
        "1900-02-29T00:00:00Z",
    ],
)
def test_a_timestamp_must_name_a_real_instant(journal: SessionJournal, at: str) -> None:
    with pytest.raises(InvalidRecordError, match="timestamp"):
        journal.append([NewRecord(id="r", at=at, body=Reset())], expected=journal.head())


@pytest.mark.parametrize("at", ["2024-02-29T00:00:00Z", "2000-02-29T23:59:59.999Z", "2026-12-31T23:59:60Z"])
def test_leap_days_and_leap_seconds_are_real_instants(journal: SessionJournal, at: str) -> None:
    (record,) = journal.append([NewRecord(id="r", at=at, body=Reset())], expected=journal.head()).records
    assert record.at == at
    assert [r.at for r in journal.read(after=record.seq - 1)] == [at], "and it reads back as written"


def test_decoding_a_line_nested_100000_deep_is_a_typed_decode_error(tmp_path: Path) -> None:
    line = b'{"seq":2,"id":"d","at":"' + AT.encode() + b'","prev":"0","body":{"kind":"waybook.custom/1",'
    line += b'"parent":null,"type":"t.deep","data":' + b"[" * 100_000 + b"]" * 100_000 + b'},"digest":"0"}'
    with pytest.raises(DecodeError, match="nested too deeply"):
        decode_record(line)
    path = tmp_path / "deep.jsonl"
    with JsonlJournal(path) as journal:
        journal.append([header()], expected=GENESIS)
    with path.open("ab") as handle:
        handle.write(line + b"\n")
    report = verify_file(path)
    assert not report.ok
    assert report.torn_tail


# --- typed memory commands ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        Create(path=5, text="x"),  # type: ignore[arg-type]
        Create(path="/memories/a.md", text=None),  # type: ignore[arg-type]
        View(path="/memories", view_range=("1", 2)),  # type: ignore[arg-type]
        Insert(path="/memories/a.md", insert_line="3", text="x"),  # type: ignore[arg-type]
    ],
    ids=repr,
)
def test_a_typed_memory_command_with_a_wrong_field_type_is_invalid_argument(command: Any) -> None:
    journal = InMemoryJournal("mem")
    memory = Memory(journal, scope="s")
    before = journal.head()
    result = memory.execute(command)
    assert not result.ok
    assert result.error is not None
    assert result.error.code == "INVALID_ARGUMENT"
    assert journal.head() == before


def test_a_call_id_that_is_not_a_string_is_invalid_argument_not_a_storage_error() -> None:
    journal = InMemoryJournal("mem")
    memory = Memory(journal, scope="s")
    before = journal.head()
    result = memory.execute({"command": "create", "path": "/memories/a.md", "text": "x"}, call_id=5)  # type: ignore[arg-type]
    assert result.error is not None
    assert result.error.code == "INVALID_ARGUMENT"
    assert journal.head() == before
