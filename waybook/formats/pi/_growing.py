"""A Pi session file imported as it grows (`waybook.formats._growing.GrowingImport`).

Pi's loader reads a whole file before it decides an id or a parent (the later of two entries with one id
keeps it; a parent may be written after its child), so this import is the whole-file import of the lines
read so far, done again when more lines come (cached until then). For a file Pi writes, where every entry
has its own id and comes after its parent, every record depends only on the lines at or before it, so the
records only grow; the one record that depends on where the file ends, the leaf move to the file's last
entry when that is not where the journal's leaf is, is `pending`. A line that changes an earlier record
(an id written twice, an entry written before its parent) makes the records differ from what was written
before: a watcher then starts a new journal (waybook.commands.watch).
"""

from __future__ import annotations

from collections.abc import Sequence

from waybook.formats._foreign import ImportReport
from waybook.formats.pi import _tree as pi_tree
from waybook.formats.pi._codec import PiFormatError, PiImport, import_pi
from waybook.model import BatchPlace, LeafMoved, NewRecord


class GrowingPi:
    def __init__(self, *, lenient: bool = False, name: str | None = None) -> None:
        self.lenient = lenient
        self.name = name
        self._lines: list[bytes] = []
        self._done: tuple[int, PiImport | None, list[tuple[int, str]]] | None = None
        self._finished = False

    def feed(self, number: int, line: bytes | str) -> None:
        if self._finished:
            msg = "the Pi session was finished: nothing more can be fed"
            raise ValueError(msg)
        raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        while len(self._lines) < number - 1:
            self._lines.append(b"")
        self._lines.append(raw)

    def _imported(self) -> tuple[PiImport | None, list[tuple[int, str]]]:
        if self._done is None or self._done[0] != len(self._lines):
            try:
                imported: PiImport | None = import_pi(
                    b"\n".join(self._lines) + b"\n", lenient=self.lenient, name=self.name
                )
                problems: list[tuple[int, str]] = []
            except PiFormatError as exc:
                imported, problems = None, list(exc.problems)
            self._done = (len(self._lines), imported, problems)
        return self._done[1], self._done[2]

    def _split(self) -> int:
        """Where the records no later line changes end: before a last leaf move to the last entry."""
        imported, _ = self._imported()
        if imported is None:
            return 0
        records = imported.records
        if not self._finished and records and _resumes(records[-1]):
            return len(records) - 1
        return len(records)

    @property
    def records(self) -> Sequence[NewRecord]:
        imported, _ = self._imported()
        return () if imported is None else imported.records[: self._split()]

    @property
    def places(self) -> Sequence[BatchPlace | None]:
        imported, _ = self._imported()
        return () if imported is None else imported.places

    @property
    def imported(self) -> PiImport | None:
        """The whole-file import of the lines read (None while they do not import)."""
        return self._imported()[0]

    @property
    def problems(self) -> Sequence[tuple[int, str]]:
        return self._imported()[1]

    def pending(self) -> tuple[NewRecord, ...]:
        imported, _ = self._imported()
        return () if imported is None else tuple(imported.records[self._split() :])

    def finish(self) -> None:
        self._finished = True

    def report(self) -> ImportReport:
        imported, _ = self._imported()
        lines = sum(1 for line in self._lines if line.strip())
        if imported is None:
            return ImportReport("pi", lines, 0, 0, ())
        bad = len({n for n, _ in imported.skipped})
        notes = tuple(f"line {n}: {why}" for n, why in imported.inferred)
        return ImportReport("pi", lines, max(lines - bad, 0), 0, tuple(imported.skipped), notes)


def _resumes(record: NewRecord) -> bool:
    return isinstance(record.body, LeafMoved) and record.body.reason == pi_tree.RESUME
