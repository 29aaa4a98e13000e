"""What every foreign-session importer shares: reading JSONL lines, the import report, stable ids.

An importer turns another agent's session file into the records of a new waybook journal. Three rules
hold for all of them:
- Nothing is dropped silently. Every non-blank source line is counted once in the report: *mapped*
  (it became a waybook message, tool result, compaction or leaf move), *kept verbatim* (it became a
  custom entry holding the line's JSON unchanged, out of the model context), or *skipped* (it did not
  parse, and `lenient=True` was given). The three add up to the line count.
- Ids are derived from the source (its own ids, or the line number where it has none), so importing the
  same file twice gives the same records and the same journal bytes.
- A line that does not parse is an error naming its line number, unless `lenient=True` skips and counts
  it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Final

import attrs
import msgspec

from waybook.journal import ID_PATTERN, TIMESTAMP_PATTERN
from waybook.model import Header, JournalError, NewRecord

FALLBACK_TIMESTAMP: Final = "1970-01-01T00:00:00.000Z"
_UNSAFE_ID_CHARS: Final = re.compile(r"[^A-Za-z0-9_.:\-]")


class ForeignFormatError(JournalError, ValueError):
    """A foreign session file that cannot be imported; `problems` lists (line number, reason)."""

    def __init__(self, source: str, problems: list[tuple[int, str]], *, unit: str = "line") -> None:
        self.source = source
        self.problems = problems
        shown = "; ".join(f"{unit} {n}: {_one_line(why)}" for n, why in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(
            f"{len(problems)} {unit}(s) of the {source} session cannot be imported: {shown}{more}. Fix "
            f"them, or import with --lenient to skip unparseable {unit}s"
        )


class NotThisFormatError(ForeignFormatError):
    """A file that is not a session of the format at all (a stray file in a folder); `why` says what
    it is instead. A folder import with --lenient skips it and reports it."""

    def __init__(self, source: str, why: str) -> None:
        self.why = why
        super().__init__(source, [(1, why)])


@attrs.frozen
class ImportReport:
    """How every line of a source file was used. `mapped + kept_verbatim + skipped == lines`."""

    source: str
    lines: int
    mapped: int
    kept_verbatim: int
    skipped: tuple[tuple[int, str], ...]
    inferred: tuple[str, ...] = ()
    """What the import had to infer (a stop reason, the active leaf), one sentence each."""

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "lines": self.lines,
            "mapped": self.mapped,
            "kept_verbatim": self.kept_verbatim,
            "skipped": len(self.skipped),
            "skipped_lines": [{"line": n, "reason": why} for n, why in self.skipped],
            "inferred": list(self.inferred),
        }


class LineTally:
    """Counts how each source line was used, so the report provably adds up."""

    def __init__(self) -> None:
        self._use: dict[int, str] = {}

    def mapped(self, line: int) -> None:
        self._use.setdefault(line, "mapped")

    def kept(self, line: int) -> None:
        self._use.setdefault(line, "kept")

    def fork(self) -> LineTally:
        """A copy that counts on apart from this one."""
        clone = LineTally()
        clone._use = dict(self._use)
        return clone

    def report(
        self, source: str, total: int, skipped: list[tuple[int, str]], inferred: list[str]
    ) -> ImportReport:
        used = list(self._use.values())
        mapped, kept = used.count("mapped"), used.count("kept")
        if mapped + kept + len(skipped) != total:  # a bug in an importer, never the user's fault
            msg = f"{source} import used {mapped + kept + len(skipped)} of {total} lines"
            raise AssertionError(msg)
        return ImportReport(source, total, mapped, kept, tuple(skipped), tuple(inferred))


def read_json_lines(
    data: bytes | str, *, source: str, lenient: bool
) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, str]], int]:
    """(line number, object) for every JSON-object line, the skipped lines, and the non-blank count.

    A line that is not a JSON object is an error (every problem at once), or skipped with `lenient`.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise ForeignFormatError(source, [(1, f"not UTF-8 text ({exc.reason})")]) from None
    parsed: list[tuple[int, dict[str, Any]]] = []
    bad: list[tuple[int, str]] = []
    total = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        total += 1
        try:
            value = json_value(line)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            bad.append((number, f"not JSON ({why})"))
            continue
        if not isinstance(value, dict):
            bad.append((number, "not a JSON object"))
            continue
        if _nests(line) > MAX_DEPTH and depth(value) > MAX_DEPTH:
            bad.append((number, f"nested deeper than {MAX_DEPTH} levels"))
            continue
        parsed.append((number, value))
    if bad and not lenient:
        raise ForeignFormatError(source, bad)
    return parsed, bad, total


def check_fields(
    lines: list[tuple[int, dict[str, Any]]],
    skipped: list[tuple[int, str]],
    fields: dict[str, tuple[type, ...]],
    *,
    source: str,
    lenient: bool,
) -> list[tuple[int, dict[str, Any]]]:
    """The lines whose `fields` (when present) have one of their types; the others are refused (every
    one at once), or with `lenient` added to `skipped`. A map where an id belongs is caught here,
    before any mapping code indexes by it."""
    kept, bad = [], []
    for number, line in lines:
        wrong = next((k for k, kinds in fields.items() if k in line and not isinstance(line[k], kinds)), None)
        if wrong is None:
            kept.append((number, line))
        else:
            names = " or ".join("null" if k is type(None) else k.__name__ for k in fields[wrong])
            bad.append((number, f"{wrong} is {type(line[wrong]).__name__}, not {names}"))
    if bad and not lenient:
        raise ForeignFormatError(source, bad)
    skipped.extend(bad)
    skipped.sort()
    return kept


_JSON: Final = msgspec.json.Decoder()


def json_value(line: str) -> Any:
    """`json.loads(line)`: decoded by msgspec (several times faster), and by `json.loads` itself when
    msgspec refuses the line. msgspec refuses what `json.loads` also refuses and what it reads otherwise
    (NaN and Infinity, a number past a double, a lone surrogate, very deep nesting); where both decode a
    line, the values are equal, of the same types (tests/formats/test_json_lines.py). So the value, or
    the error, is `json.loads`'s, and a journal's bytes are those `json.loads` gave."""
    try:
        return _JSON.decode(line)
    except (msgspec.DecodeError, RecursionError):  # (a ValidationError is a number it cannot hold)
        return json.loads(line)


MAX_DEPTH: Final = 100
"""The deepest nesting of arrays and objects an imported line may have (real sessions use about 10)."""


def _nests(line: str) -> int:
    return line.count("[") + line.count("{")


def depth(value: Any) -> int:
    """How deeply `value`'s arrays and objects nest (iteratively: a hostile value cannot overflow it)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item if isinstance(child, (dict, list)))
    return deepest


def _one_line(why: str, limit: int = 200) -> str:
    flat = " ".join(str(why).split())
    return flat if len(flat) <= limit else f"{flat[:limit]}..."


def timestamp(value: Any, fallback: str) -> str:
    """The source's timestamp if it is one waybook accepts (RFC 3339 UTC), else `fallback`."""
    if isinstance(value, str) and TIMESTAMP_PATTERN.fullmatch(value):
        return value
    return fallback


def named(header: NewRecord, name: str | None) -> NewRecord:
    """A new journal's `header` record naming journal `name` instead, if one is given: an import into a
    store under an id of the caller's (a store's journal names its own id in its header; the source's
    own id stays in the record's id and metadata)."""
    body = header.body
    if name is None or not isinstance(body, Header) or body.journal == name:
        return header
    return NewRecord(id=header.id, at=header.at, body=msgspec.structs.replace(body, journal=name))


def stable_id(*parts: str) -> str:
    """A record id from source ids: kept as they are when valid, made valid deterministically if not."""
    raw = ":".join(parts)
    if ID_PATTERN.fullmatch(raw):
        return raw
    cleaned = _UNSAFE_ID_CHARS.sub("_", raw).lstrip("_.:-") or "x"
    return cleaned[:128]


def text_of(blocks: Any) -> Iterator[str]:
    """The text parts of a content list (strings or blocks with a `text`), in order."""
    if isinstance(blocks, str):
        yield blocks
        return
    if not isinstance(blocks, list):
        return
    for block in blocks:
        if isinstance(block, str):
            yield block
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            yield block["text"]
