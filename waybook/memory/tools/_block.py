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
"""

from __future__ import annotations

import hashlib
from typing import Final

import attrs

from waybook._redact import Redactor
from waybook.journal._protocol import SessionJournal
from waybook.journal._roles.memory_text import front_matter, logical_lines
from waybook.memory._errors import RequestError
from waybook.memory.working._state import MemoryFile, MemoryProjection, MemoryState
from waybook.projections._base import replay

_CLOSERS: Final = ("</note>", "</memory>")


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


def compile_block(memory_journal: SessionJournal, at: int | None = None) -> MemoryBlock:
    """The prompt text of `memory_journal`'s notes at seq `at` (default: the head)."""
    state = replay(MemoryProjection(), memory_journal, at=at)
    if at is not None and state.seq != at:
        msg = f"{memory_journal.name} has no seq {at} (its head is {state.seq}); compile an existing revision"
        raise RequestError(msg)
    return render_block(state)


def render_block(state: MemoryState) -> MemoryBlock:
    """The block of an already folded memory state (pure)."""
    redactor = Redactor()
    files = sorted(state.files.values(), key=lambda f: f.path)
    parts = [f'<memory journal="{_escape(state.journal_id or "")}" seq="{state.seq}" notes="{len(files)}">\n']
    parts.extend(_note(file, redactor) for file in files)
    parts.append("</memory>\n")
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


def _note(file: MemoryFile, redactor: Redactor) -> str:
    matter = front_matter(file.text)
    marker = ' read_only="true"' if matter.read_only else ""
    lines = [f'<note path="{_escape(redactor.text(file.path))}"{marker}>']
    if matter.description and matter.description.strip():
        description = redactor.text(" ".join(matter.description.split()))
        lines.append(f"<description>{_escape(description)}</description>")
    body = redactor.text(_body(file.text))
    lines.extend(_guard(line) for line in logical_lines(body))
    lines.append("</note>")
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


def _guard(line: str) -> str:
    if any(closer in line for closer in _CLOSERS):
        return line.replace("</", "&lt;/")
    return line


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
