"""Progress on stderr for a long command, phase by phase, so the whole run shows it (terminal only)."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, Self

from rich.console import Console

PROGRESS_THRESHOLD = 20_000
"""Replays of at least this many records show a progress bar (on a terminal only)."""


class Phases:
    """A progress display for the phases of one command (replaying, reading, writing ...).

    Shown only when stderr is a terminal and the work is at least `threshold` records, or always with
    `force` (a command's --progress: then drawn on stderr as on a terminal); otherwise every call is a
    no-op, so commands call it unconditionally.
    """

    def __init__(self, records: int, *, threshold: int | None = None, force: bool = False) -> None:
        limit = PROGRESS_THRESHOLD if threshold is None else threshold
        self.enabled = force or (records >= limit and sys.stderr.isatty())
        self._force = force
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> Self:
        if self.enabled:
            from rich.progress import Progress

            console = Console(stderr=True, force_terminal=True) if self._force else Console(stderr=True)
            self._progress = Progress(console=console, transient=True)
            self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def start(self, description: str, total: int | None = None) -> None:
        """Begin a phase; `total` None shows it as running without a known end."""
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.update(self._task, visible=False)
        self._task = self._progress.add_task(description, total=total)

    def advance(self, completed: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=completed)
