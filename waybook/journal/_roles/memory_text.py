"""Text rules of memory files: logical lines, sizes in UTF-8 bytes, front matter and links."""

from __future__ import annotations

import hashlib
import re
from typing import Final

import attrs

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


def front_matter(text: str) -> FrontMatter:
    """The `description`, `read_only` and `links` keys of a leading `---` block (a small YAML subset).

    Supported: `key: value` lines, `links: [/memories/a.md, /memories/b.md]` and `links:` followed by
    `- /memories/a.md` items. Anything else in the block is ignored; there is no nested YAML.
    """
    if not text.lstrip(" \t").startswith("---"):
        return FrontMatter()  # the common case, decided without splitting the text
    lines = logical_lines(text)
    if not lines or lines[0].strip() != "---":
        return FrontMatter()
    fields: dict[str, str] = {}
    links: list[str] = []
    current = None
    for line in lines[1:]:
        if line.strip() == "---":
            break
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
    else:
        return FrontMatter()  # no closing line: not front matter
    return FrontMatter(
        description=fields.get("description"),
        read_only=fields.get("read_only", "").lower() in ("true", "yes", "on"),
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
    value = f'"{description}"' if description[:1] in "\"'" else description
    line = f"description: {value}"
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
                parts[index] = line + ending
                return "".join(parts)
    return f"---\n{line}\n---\n{text}"


def _has_block(text: str) -> bool:
    lines = logical_lines(text)
    return bool(lines) and lines[0].strip() == "---" and any(x.strip() == "---" for x in lines[1:])
