"""Where each literal the detector starts from occurs in a text: the one pass over the whole text.

Every rule starts with a literal (a token's prefix, `://`, a keyword), so the detector asks one question
of a text before any pattern runs: where does each literal occur? Its patterns then run only there. Two
scanners answer it, with the same answer:

- `HyperscanScanner` (a dependency on x86-64 and ARM64 machines; `waybook[redact]` elsewhere):
  Hyperscan (Intel's multi-pattern matcher; the `hyperscan` package ships it in wheels, vectorscan on
  ARM) finds all of them in one pass over the text, at gigabytes a second;
- `PythonScanner`: `bytes.find` over the text again and again, a pass a literal, the token rules'
  literals looked for only where the text has a run of at least TOKEN_RUN token characters (a
  provider's key is such a run; code and prose are mostly short words).

The two differ only in a token literal that occurs outside every run: Hyperscan reports it, the Python
scanner does not, and no token rule can match there (its every match is such a run), so the spans the
detector finds are the same (tests/export/test_redaction_scanners.py runs both on the corpora).
`SCANNER` is the best one installed; `python -m bench.redact` says which one it measured.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any, Final, Protocol

import attrs

from waybook._redact._rules import TOKEN_CHARS, TOKEN_RUN


@attrs.frozen
class Literal:
    """A literal the detector needs the first position of."""

    text: bytes
    caseless: bool
    """Looked for in the ASCII-lower-cased text (`text` is lower case)."""
    token: bool = False
    """Only the token rules start from it: where no run of token characters holds it, nothing matches."""


class Scanner(Protocol):
    @property
    def name(self) -> str:
        """`hyperscan` or `python`: what the bench reports it measured."""
        ...

    def where(self, raw: bytes, lowered: bytes) -> list[list[int]]:
        """Where each literal occurs (the positions of its first byte, in order, overlapping ones too; a
        token literal's may leave out those outside every run of token characters). `raw` is the text
        one byte a character, `lowered` the same ASCII-lower-cased."""
        ...


_KEEP_TOKEN: Final = bytes(i if chr(i) in TOKEN_CHARS else 32 for i in range(256))
_RUN: Final = re.compile(b"[^ ]{%d,}" % TOKEN_RUN)


def token_runs(raw: bytes) -> bytes:
    """The runs of at least TOKEN_RUN token characters in a text, joined by spaces: where a provider's
    key can be."""
    return b" ".join(_RUN.findall(raw.translate(_KEEP_TOKEN)))


@attrs.frozen
class PythonScanner:
    """One `bytes.find` a literal (no dependency): the token literals only where the runs hold them."""

    literals: tuple[Literal, ...]
    name: str = "python"

    def where(self, raw: bytes, lowered: bytes) -> list[list[int]]:
        runs: bytes | None = None
        found: list[list[int]] = []
        for literal in self.literals:
            positions: list[int] = []
            found.append(positions)
            if literal.token:
                if runs is None:
                    runs = token_runs(raw)
                if literal.text not in runs:
                    continue
            text, needle = (lowered if literal.caseless else raw), literal.text
            at = text.find(needle)
            while at >= 0:
                positions.append(at)
                at = text.find(needle, at + 1)
        return found


class HyperscanScanner:
    """All the literals in one Hyperscan pass over the text.

    A compiled database is shared; a scan needs its own scratch space, so each thread keeps one."""

    name = "hyperscan"

    def __init__(self, literals: Sequence[Literal]) -> None:
        import hyperscan  # a dependency where wheels exist; SCANNER falls back to PythonScanner without it

        self._hyperscan: Any = hyperscan
        self.literals = tuple(literals)
        caseless = hyperscan.HS_FLAG_CASELESS
        self._database: Any = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self._database.compile(
            expressions=[re.escape(lit.text.decode("latin-1")).encode("latin-1") for lit in self.literals],
            ids=list(range(len(self.literals))),
            elements=len(self.literals),
            flags=[caseless if lit.caseless else 0 for lit in self.literals],
        )
        self._widths = [len(lit.text) for lit in self.literals]
        self._local = threading.local()

    def where(self, raw: bytes, lowered: bytes) -> list[list[int]]:
        found: list[list[int]] = [[] for _ in self.literals]
        if not raw:
            return found
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._hyperscan.Scratch(self._database)
        widths = self._widths

        def matched(index: int, _start: int, end: int, _flags: int, _context: object) -> None:
            found[index].append(end - widths[index])  # reported where it ends, in order of its ends

        self._database.scan(raw, match_event_handler=matched, scratch=scratch)
        return found


def best_scanner(literals: Sequence[Literal]) -> Scanner:
    """Hyperscan when Hyperscan is installed and runs on this CPU, else Python's finds (the
    same answer, slower)."""
    try:
        import hyperscan
    except ImportError:
        return PythonScanner(tuple(literals))
    try:
        return HyperscanScanner(literals)
    except hyperscan.ArchitectureError:  # a CPU its build does not support
        return PythonScanner(tuple(literals))
