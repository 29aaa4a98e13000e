"""A Pi session file's lines as JSON objects, as data, refusing what a journal cannot hold.

A line holding two JSON values (concurrent writers joined them) is no entry for Pi: its loader parses
each line with `JSON.parse`, which fails on it, and skips the line. So it is returned apart, as its text,
never among the entries (whose order gives version-1 entries their index).
"""

from __future__ import annotations

import json
import re
from typing import Any

from waybook.formats._foreign import MAX_DEPTH, depth
from waybook.formats.pi._form import MAX_LINE

LONE_SURROGATE = "a string holds a lone surrogate (half of a UTF-16 pair), which a journal cannot store"


def parse(
    data: bytes | str,
) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, str]], list[tuple[int, str]]]:
    """(entries, bad lines, joined lines): each with its line number; a joined line with its text."""
    raw = data.encode() if isinstance(data, str) else data
    decoder = json.JSONDecoder()
    entries: list[tuple[int, dict[str, Any]]] = []
    bad: list[tuple[int, str]] = []
    joined: list[tuple[int, str]] = []
    for number, line_bytes in enumerate(raw.split(b"\n"), start=1):
        if not line_bytes.strip():
            continue
        try:
            values = _objects(decoder, line_bytes)
        except ValueError as exc:
            bad.append((number, str(exc)))
            continue
        if len(values) > 1:
            if _SURROGATE_ESCAPE.search(line_bytes) and _has_lone_surrogate(values):
                bad.append((number, LONE_SURROGATE))
            else:
                joined.append((number, line_bytes.decode("utf-8")))
            continue
        for value in values:
            if not isinstance(value, dict) or not isinstance(value.get("type"), str):
                bad.append((number, "not a Pi entry (an object with a type)"))
                continue
            if _SURROGATE_ESCAPE.search(line_bytes) and _has_lone_surrogate(value):
                bad.append((number, LONE_SURROGATE))
                continue
            entries.append((number, value))
    return entries, bad, joined


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _objects(decoder: json.JSONDecoder, line_bytes: bytes) -> list[Any]:
    """Every JSON value on one line, in order (usually one; two when concurrent writes were joined)."""
    if len(line_bytes) > MAX_LINE:
        msg = f"line longer than {MAX_LINE} bytes"
        raise ValueError(msg)
    try:
        line = line_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"not UTF-8 (byte {exc.start})"
        raise ValueError(msg) from None
    values: list[Any] = []
    pos = 0
    deep = line_bytes.count(b"[") + line_bytes.count(b"{") > MAX_DEPTH  # only then is nesting measured
    while True:
        while pos < len(line) and line[pos] in " \t\r":
            pos += 1
        if pos == len(line):
            return values
        try:
            value, pos = decoder.raw_decode(line, pos)
        except json.JSONDecodeError as exc:
            msg = f"not JSON ({exc.msg} at column {exc.colno})"
            raise ValueError(msg) from None
        except RecursionError:
            msg = "not importable JSON (nested too deeply)"
            raise ValueError(msg) from None
        except ValueError as exc:  # e.g. an integer with more digits than Python converts
            msg = f"not importable JSON ({exc})"
            raise ValueError(msg) from None
        if deep and depth(value) > MAX_DEPTH:
            msg = f"nested deeper than {MAX_DEPTH} levels"
            raise ValueError(msg)
        values.append(value)
