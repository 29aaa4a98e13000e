"""The memory block: the text a runtime puts in the prompt for one revision of a memory journal.

`compile_block(journal, at=None)` folds the journal to `at` (default: its head) and renders every note,
sorted by path (code-point order, which is also UTF-8 byte order)::

    <memory journal="memory-1" seq="12" notes="2">
    <note path="/memories/a.md" read_only="true">
    <description>what the note is for</description>
    the body, without its front matter
    </note>
    </memory>

`read_only="true"` appears only on read-only notes and `<description>` only where the front matter has
one (whitespace collapsed, `& < > "` escaped). The body is the note's text after its front-matter block,
with a final newline added if missing; a line of the body that would close the note (`</note>` or
`</memory>`) has its `<` written as `&lt;`, so a note cannot end its own block. Secrets are masked with
the export redaction patterns (`[REDACTED:<name>]`) in paths, descriptions and bodies. The same
revision always compiles to the same bytes; `sha256` is their digest, recorded with the turn that used
them.

`compile_block(..., template=BlockTemplate(...))` renders with other markup (the default template is the
one above, byte for byte), and `cache=BlockCache()` keeps compiled blocks by (template digest, memory
revision): a revision is the journal id, seq and digest compiled, so a hit is found from the journal's
head (or the record at `at`) without folding the journal, and any change to either is a miss.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import attrs

from waybook._redact import Redactor
from waybook.journal import SessionJournal, front_matter, logical_lines
from waybook.memory._errors import RequestError
from waybook.memory.working import MemoryFile, MemoryProjection, MemoryState
from waybook.model import Header
from waybook.projections import replay

_FIELD: Final = re.compile(r"\{(journal|seq|notes|path|read_only|description)\}")


@attrs.frozen
class BlockTemplate:
    """The markup of a memory block. Placeholders (`{journal}`, `{seq}`, `{notes}` in `open`; `{path}`
    and `{read_only}` in `note_open`; `{description}` in `description`) are replaced by their values and
    nothing else in the text is interpreted. A body line holding one of `closers` has its `</` written
    `&lt;/`, so a note cannot end its own block; with `escape`, values are XML-escaped."""

    open: str = '<memory journal="{journal}" seq="{seq}" notes="{notes}">\n'
    note_open: str = '<note path="{path}"{read_only}>'
    read_only: str = ' read_only="true"'
    description: str = "<description>{description}</description>"
    note_close: str = "</note>"
    close: str = "</memory>\n"
    closers: tuple[str, ...] = ("</note>", "</memory>")
    escape: bool = True

    @property
    def sha256(self) -> str:
        """The digest of every field: what a compiled block is cached under, with the revision."""
        fields = attrs.asdict(self)
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


DEFAULT_TEMPLATE: Final = BlockTemplate()


def _fill(pattern: str, values: dict[str, str]) -> str:
    return _FIELD.sub(lambda m: values.get(m.group(1), m.group(0)), pattern)


Revision = tuple[str | None, int, str]
"""A memory revision: the journal's header id, a seq and the digest of the record there."""


class BlockCache:
    """Compiled blocks by (template digest, memory revision), the least recently used dropped past
    `max_entries`. Thread-safe. `hits` and `misses` count lookups."""

    def __init__(self, max_entries: int = 64) -> None:
        if type(max_entries) is not int or max_entries < 1:
            msg = f"max_entries must be a whole number of at least 1, not {max_entries!r}"
            raise RequestError(msg)
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._blocks: OrderedDict[tuple[str, Revision], MemoryBlock] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, Revision]) -> MemoryBlock | None:
        with self._lock:
            block = self._blocks.get(key)
            if block is None:
                self.misses += 1
                return None
            self.hits += 1
            self._blocks.move_to_end(key)
            return block

    def put(self, key: tuple[str, Revision], block: MemoryBlock) -> None:
        with self._lock:
            self._blocks[key] = block
            self._blocks.move_to_end(key)
            while len(self._blocks) > self.max_entries:
                self._blocks.popitem(last=False)

    def __len__(self) -> int:
        return len(self._blocks)


@attrs.frozen
class MemoryBlock:
    text: str
    journal: str | None
    seq: int
    digest: str
    """The digest of the record at `seq`: with `seq`, the head the block was compiled from."""
    paths: tuple[str, ...]
    redacted: int
    """How many secrets were masked."""
    sha256: str


def compile_block(
    memory_journal: SessionJournal,
    at: int | None = None,
    *,
    template: BlockTemplate = DEFAULT_TEMPLATE,
    cache: BlockCache | None = None,
) -> MemoryBlock:
    """The prompt text of `memory_journal`'s notes at seq `at` (default: the head), in `template`."""
    if not isinstance(template, BlockTemplate):
        msg = f"template must be a BlockTemplate, not {type(template).__name__}"
        raise RequestError(msg)
    key = None
    if cache is not None:
        revision = _revision(memory_journal, at)
        if revision is not None:
            key = (template.sha256, revision)
            found = cache.get(key)
            if found is not None:
                return found
    state = replay(MemoryProjection(), memory_journal, at=at)
    if at is not None and state.seq != at:
        msg = f"{memory_journal.name} has no seq {at} (its head is {state.seq}); compile an existing revision"
        raise RequestError(msg)
    block = render_block(state, template=template)
    if cache is not None and key is not None and key[1] == (state.journal_id, state.seq, state.digest):
        cache.put(key, block)
    return block


def _revision(journal: SessionJournal, at: int | None) -> Revision | None:
    """The revision `at` names (default: the head), read without folding; None if there is no such seq."""
    first = next(iter(journal.read(limit=1)), None)
    name = first.body.journal if first is not None and isinstance(first.body, Header) else None
    if at is None:
        head = journal.head()
        return (name, head.seq, head.digest)
    if at == 0:
        return None
    record = next(iter(journal.read(after=at - 1, limit=1)), None)
    return None if record is None or record.seq != at else (name, record.seq, record.digest)


def render_block(state: MemoryState, *, template: BlockTemplate = DEFAULT_TEMPLATE) -> MemoryBlock:
    """The block of an already folded memory state (pure)."""
    redactor = Redactor()
    esc = _escape if template.escape else _same
    files = sorted(state.files.values(), key=lambda f: f.path)
    opening = {"journal": esc(state.journal_id or ""), "seq": str(state.seq), "notes": str(len(files))}
    parts = [_fill(template.open, opening)]
    parts.extend(_note(file, redactor, template, esc) for file in files)
    parts.append(template.close)
    text = "".join(parts)
    return MemoryBlock(
        text=text,
        journal=state.journal_id,
        seq=state.seq,
        digest=state.digest,
        paths=tuple(f.path for f in files),
        redacted=redactor.total,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


def _note(file: MemoryFile, redactor: Redactor, template: BlockTemplate, esc: Callable[[str], str]) -> str:
    matter = front_matter(file.text)
    marker = template.read_only if matter.read_only else ""
    lines = [_fill(template.note_open, {"path": esc(redactor.text(file.path)), "read_only": marker})]
    if matter.description and matter.description.strip():
        description = redactor.text(" ".join(matter.description.split()))
        lines.append(_fill(template.description, {"description": esc(description)}))
    body = redactor.text(_body(file.text))
    lines.extend(_guard(line, template.closers) for line in logical_lines(body))
    lines.append(template.note_close)
    return "\n".join(lines) + "\n"


def _body(text: str) -> str:
    """The text after a front-matter block (the whole text where there is none)."""
    lines = logical_lines(text)
    if not lines or lines[0].strip() != "---":
        return text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[index + 1 :])
    return text


def _guard(line: str, closers: tuple[str, ...]) -> str:
    if any(closer in line for closer in closers):
        return line.replace("</", "&lt;/")
    return line


def _same(value: str) -> str:
    return value


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
