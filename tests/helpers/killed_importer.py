"""An importer process for the crash tests: `waybook import auto FOLDER --store URL`, its new journals
created two a batch, SIGKILLed at the COUNT-th time the store's sealed write reaches STEP ("written": the
batch's temp files written; "synced": fsynced; "linked": one more file linked into place; "directory
synced"; "created": a batch catalogued and fed). A real kill: no cleanup, no finally, no flush.

Usage: python -m tests.helpers.killed_importer FOLDER URL STEP COUNT
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from waybook.cli import main
from waybook.commands import store_option
from waybook.stores import DirectoryStore, SealedJournal, _sealed


def run(folder: str, url: str, step: str, count: int) -> int:
    seen = 0

    def on_step(name: str) -> None:
        nonlocal seen
        if name == step:
            seen += 1
            if seen == count:
                os.kill(os.getpid(), signal.SIGKILL)

    write = _sealed.write_new_files

    def write_new_files(files: Sequence[tuple[Path, bytes]], **options: Any) -> list[Path]:
        return write(files, **options, on_step=on_step)

    create: Callable[[DirectoryStore, Sequence[SealedJournal]], None] = DirectoryStore.create_sealed

    def create_sealed(store: DirectoryStore, journals: Sequence[SealedJournal]) -> None:
        create(store, journals)
        on_step("created")

    _sealed.write_new_files = write_new_files  # type: ignore[assignment]
    DirectoryStore.create_sealed = create_sealed  # type: ignore[method-assign]
    store_option.SEALED_BATCH_JOURNALS = 2
    return main(["import", "auto", folder, "--store", url, "--json"])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
