"""Imports that grow with their source: a session file read a line at a time, as its agent writes it.

An agent appends to its session file while it works, so an import must be able to take a prefix of the
file and then the rest, and end with the same records as an import of the whole file at once. Two rules
make it so, for every line-based format (Claude Code, Codex):

- A record depends only on the lines at or before the place it is written: its id, time and body come
  from lines already read, never from a line further down.
- What the lines read so far leave open (an assistant message still streaming, a compaction whose
  summary is the next line) is held back, not written: `records` holds only the records no later line
  can change. `pending()` gives what the end of the source would add (what a one-shot import of the
  file as it is writes last), without closing anything; `finish()` closes it for good.

`GrowingImport` is that interface; `feed_all` drives one over a whole file (the one-shot import is the
same code, fed everything and finished). Lines are numbered as `str.split("\\n")` numbers them, blank
lines included, so `cx-<line>` and `cc-<line>` ids agree however the file was cut.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from waybook.formats._foreign import MAX_DEPTH, ForeignFormatError, ImportReport, depth, json_value
from waybook.model import NewRecord

__all__ = ["GrowingImport", "JsonLines", "complete_lines", "feed_all"]


class GrowingImport(Protocol):
    """An import fed its source a line at a time (see the module's docstring)."""

    def feed(self, number: int, line: bytes | str) -> None:
        """Take source line `number` (1-based, without its newline); a blank line is counted, not used.
        A line that cannot be imported is a problem (`problems`), or skipped with `lenient`."""
        ...

    @property
    def records(self) -> Sequence[NewRecord]:
        """The records no later line can change, the header first (empty until the header is known)."""
        ...

    @property
    def problems(self) -> Sequence[tuple[int, str]]:
        """Lines that could not be imported (line number, why); never grows under `lenient`."""
        ...

    def pending(self) -> tuple[NewRecord, ...]:
        """What the end of the source would add after `records`, if it ended here; changes nothing."""
        ...

    def finish(self) -> None:
        """The source has ended: write what is open (`pending`) into `records`. Feeding stops here."""
        ...

    def report(self) -> ImportReport:
        """How every line read so far was used."""
        ...


def complete_lines(data: bytes, *, start: int = 0, first: int = 1) -> Iterator[tuple[int, int, bytes]]:
    """(line number, offset after its newline, bytes) of each line of `data` from `start` that ends in a
    newline; `first` is the number of the line at `start`. A last line without its newline is left for
    the writer to finish (`feed_all` takes it; a watcher takes it once the file has settled)."""
    number, at = first, start
    while True:
        end = data.find(b"\n", at)
        if end < 0:
            return
        yield number, end + 1, data[at:end]
        number, at = number + 1, end + 1


def feed_all(importer: GrowingImport, data: bytes | str) -> None:
    """Feed every line of `data` (the last one even without a newline), then finish."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    number, done = 0, 0
    for number, end, line in complete_lines(raw):
        importer.feed(number, line)
        done = end
    if done < len(raw):
        importer.feed(number + 1, raw[done:])
    importer.finish()


class JsonLines:
    """Reads source lines one at a time as `read_json_lines` reads a whole file: a line is a JSON object
    (with `fields` of the types given), else a problem, or with `lenient` a skipped line. `total` counts
    the non-blank lines."""

    def __init__(
        self,
        *,
        source: str,
        lenient: bool,
        fields: Mapping[str, tuple[type, ...]] | None = None,
    ) -> None:
        self.source = source
        self.lenient = lenient
        self.fields = dict(fields or {})
        self.total = 0
        self.skipped: list[tuple[int, str]] = []
        self.problems: list[tuple[int, str]] = []
        self.field_problems: list[tuple[int, str]] = []
        """Problems of lines that are JSON objects but with a field of the wrong type (reported after
        the lines that are not JSON at all, as a whole-file import reports them)."""

    def fork(self) -> JsonLines:
        """A copy that reads on apart from this one."""
        clone = JsonLines(source=self.source, lenient=self.lenient, fields=self.fields)
        clone.total = self.total
        clone.skipped, clone.problems = list(self.skipped), list(self.problems)
        clone.field_problems = list(self.field_problems)
        return clone

    def take(self, number: int, line: bytes | str) -> dict[str, Any] | None:
        """The line's object, or None (a blank line, or one that is a problem or skipped)."""
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.total += 1
                self._bad(number, f"not UTF-8 text ({exc.reason})")
                return None
        if not line.strip():
            return None
        self.total += 1
        try:
            value = json_value(line)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            self._bad(number, f"not JSON ({why})")
            return None
        if not isinstance(value, dict):
            self._bad(number, "not a JSON object")
            return None
        if line.count("[") + line.count("{") > MAX_DEPTH and depth(value) > MAX_DEPTH:
            self._bad(number, f"nested deeper than {MAX_DEPTH} levels")
            return None
        wrong = next(
            (k for k, kinds in self.fields.items() if k in value and not isinstance(value[k], kinds)), None
        )
        if wrong is not None:
            names = " or ".join("null" if k is type(None) else k.__name__ for k in self.fields[wrong])
            self._bad(number, f"{wrong} is {type(value[wrong]).__name__}, not {names}", field=True)
            return None
        return value

    def raise_problems(self) -> None:
        """Raise what a whole-file import raises for the problems found: the lines that are not JSON
        objects first (every one), else the lines with a field of the wrong type."""
        if self.problems:
            raise ForeignFormatError(self.source, list(self.problems))
        if self.field_problems:
            raise ForeignFormatError(self.source, list(self.field_problems))

    def report(self, tally: Any, inferred: Sequence[str]) -> ImportReport:
        """The import report of the lines read so far (`tally` a `LineTally`)."""
        return tally.report(self.source, self.total, sorted(self.skipped), list(inferred))  # type: ignore[no-any-return]

    def _bad(self, number: int, why: str, *, field: bool = False) -> None:
        if self.lenient:
            self.skipped.append((number, why))
        elif field:
            self.field_problems.append((number, why))
        else:
            self.problems.append((number, why))
