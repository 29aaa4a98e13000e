"""A longer, coverage-guided run of the importer property with atheris (optional; not part of pytest).

    pip install atheris
    python -m tests.fuzz.atheris_importers [-atheris_runs=100000] [-max_len=20000]

Each input is fed to every line-based importer (Pi, Claude Code, Codex); anything but records every
journal rule accepts or a `JournalError` with a one-line message is a finding (atheris stops and saves
the input).
"""

from __future__ import annotations

import sys

from waybook.formats import import_claude_code, import_codex, import_pi
from waybook.journal import InMemoryJournal
from waybook.model import GENESIS, JournalError


def one_input(data: bytes) -> None:
    for importer in (import_pi, import_claude_code, import_codex):
        for lenient in (False, True):
            try:
                records = importer(data, lenient=lenient).records
                InMemoryJournal("atheris").append(list(records), expected=GENESIS)
            except JournalError as exc:
                if "\n" in str(exc):
                    raise AssertionError(str(exc)) from exc


def main() -> None:
    import atheris  # the optional fuzzer

    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
