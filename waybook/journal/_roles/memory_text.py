"""Text rules of memory files: logical lines, sizes in UTF-8 bytes, front matter and links."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from typing import Final

import attrs
import yaml

_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")
_MARKDOWN_LINK: Final = re.compile(r"\]\((/memories/[^)\s]+)\)")


def byte_length(text: str) -> int:
    return len(text.encode("utf-8"))


def content_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_valid_unicode(text: str) -> bool:
    """False for text holding a lone surrogate, which cannot be stored as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def logical_lines(text: str) -> list[str]:
    """Lines split at \\r\\n, \\r or \\n; a final line break does not start another line."""
    if not text:
        return []
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


@attrs.frozen
class FrontMatter:
    description: str | None = None
    read_only: bool = False
    links: tuple[str, ...] = ()
    problem: str | None = None
    """Why the block is not valid YAML front matter (None: it is, or there is no block)."""


def front_matter(text: str) -> FrontMatter:
    """The `description`, `read_only` and `links` keys of a leading `---` block, read by a YAML parser.

    The block is the text between a first line `---` and the next line `---`; it must be a YAML mapping
    (PyYAML's safe loader: `description: >` folds the lines below it, quoting and lists are YAML's).
    A block YAML cannot read keeps what a line-by-line reading finds (`key: value` lines, `[a, b]` and
    `- item` links: what waybook read before it used YAML, so older journals replay the same) and says
    why in `problem`. A first `---` with no closing line is not front matter.
    """
    if not text.lstrip(" \t").startswith("---"):
        return FrontMatter()  # the common case, decided without splitting the text
    lines = logical_lines(text)
    if not lines or lines[0].strip() != "---":
        return FrontMatter()
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return _parsed("\n".join(lines[1:index]))
    return FrontMatter()  # no closing line: not front matter


def lacks_description(text: str) -> bool:
    """Whether a note's text has no non-empty front-matter `description` (what a memory whose profile
    requires descriptions refuses: `metadata.require_description`, every memory `home()` makes)."""
    return not (front_matter(text).description or "").strip()


DESCRIPTION_ADVICE: Final = "keep the text starting with '---', 'description: what the note is for', '---'"


def front_matter_problems(path: str, text: str) -> list[str]:
    """What makes a note's front matter unreadable: a block that never closes, YAML that is not a
    mapping, a link that is not a /memories/ path (what reflection and the git hook check)."""
    lines = logical_lines(text)
    if not lines or lines[0].strip() != "---":
        return []
    if not any(line.strip() == "---" for line in lines[1:]):
        return [f"{path} opens a front-matter block that never closes"]
    matter = front_matter(text)
    found = [f"{path}: the front matter is not valid YAML ({matter.problem})"] if matter.problem else []
    found.extend(
        f"{path} links to {link!r}, which is not a /memories/ path"
        for link in matter.links
        if not link.startswith("/memories/")
    )
    return found


@functools.lru_cache(maxsize=4096)
def _parsed(block: str) -> FrontMatter:
    try:
        data = yaml.load(block, Loader=_LOADER)
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        problem = " ".join(str(exc).split())[:200] or type(exc).__name__
        return attrs.evolve(_lenient(block), problem=problem)
    if data is None:
        return FrontMatter()
    if not isinstance(data, dict):
        return FrontMatter(problem=f"it is a YAML {type(data).__name__}, not a mapping of keys to values")
    description = data.get("description")
    if isinstance(description, bool) or not isinstance(description, str | int | float):
        description = None
    raw_links = data.get("links")
    links = [raw_links] if isinstance(raw_links, str) else raw_links if isinstance(raw_links, list) else []
    read_only = data.get("read_only")
    return FrontMatter(
        description=None if description is None else str(description).strip(),
        read_only=read_only is True or (isinstance(read_only, str) and read_only.lower() in _TRUE),
        links=tuple(str(link) for link in links if isinstance(link, str | int | float)),
    )


_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TRUE: Final = ("true", "yes", "on")


def _lenient(block: str) -> FrontMatter:
    """The line-by-line reading of a block YAML refuses: `key: value` lines and links lists."""
    fields: dict[str, str] = {}
    links: list[str] = []
    current = None
    for line in block.split("\n"):
        stripped = line.strip()
        if stripped.startswith("- ") and current == "links":
            links.append(_unquote(stripped[2:]))
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        current = key.strip()
        value = value.strip()
        if current == "links" and value.startswith("[") and value.endswith("]"):
            links.extend(_unquote(v) for v in value[1:-1].split(",") if v.strip())
        elif value:
            fields[current] = _unquote(value)
    return FrontMatter(
        description=fields.get("description"),
        read_only=fields.get("read_only", "").lower() in _TRUE,
        links=tuple(links),
    )


def links_of(text: str) -> frozenset[str]:
    """Every /memories path the text links to: markdown links and front-matter `links`."""
    found = set(_MARKDOWN_LINK.findall(text))
    found.update(link for link in front_matter(text).links if link.startswith("/memories/"))
    return frozenset(found)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def with_description(text: str, description: str) -> str:
    """`text` with its front matter `description` set to `description` (a single line); the body and
    every other front-matter line are kept byte for byte. Text without front matter gets a block."""
    line = description_line(description)
    if _has_block(text):
        parts = text.splitlines(keepends=True)
        newline = parts[0][len(parts[0].rstrip("\r\n")) :] or "\n"
        for index in range(1, len(parts)):
            stripped = parts[index].strip()
            if stripped == "---":
                parts.insert(1, line + newline)
                return "".join(parts)
            if parts[index].partition(":")[0].strip() == "description":
                ending = parts[index][len(parts[index].rstrip("\r\n")) :]
                after = index + 1  # a block scalar's or a folded value's lines go with the old value
                while after < len(parts) and parts[after][:1] in (" ", "\t"):
                    after += 1
                parts[index:after] = [line + ending]
                return "".join(parts)
    return f"---\n{line}\n---\n{text}"


def with_read_only(text: str, read_only: bool) -> str:
    """`text` with `read_only: true` in its front matter, or without any `read_only` line; every other
    byte kept. Text without front matter gets a block when made read-only."""
    if _has_block(text):
        parts = text.splitlines(keepends=True)
        newline = parts[0][len(parts[0].rstrip("\r\n")) :] or "\n"
        closing = next(i for i in range(1, len(parts)) if parts[i].strip() == "---")
        kept = [p for p in parts[1:closing] if p.partition(":")[0].strip() != "read_only"]
        added = [f"read_only: true{newline}"] if read_only else []
        return "".join([parts[0], *kept, *added, *parts[closing:]])
    return f"---\nread_only: true\n---\n{text}" if read_only else text


def description_line(description: str) -> str:
    """`description: ...` as a YAML line that reads back as exactly `description` (quoted if needed)."""
    value = json.dumps(description, ensure_ascii=False) if _needs_quotes(description) else description
    return f"description: {value}"


def _needs_quotes(value: str) -> bool:
    """Whether YAML would read `value` as something else than this one line of text."""
    try:
        read: object = yaml.load(f"d: {value}", Loader=_LOADER)
    except yaml.YAMLError:
        return True
    return read != {"d": value}


def _has_block(text: str) -> bool:
    lines = logical_lines(text)
    return bool(lines) and lines[0].strip() == "---" and any(x.strip() == "---" for x in lines[1:])
