"""The integrations' typed errors: a runtime's extra is not installed; a history changed since it was read."""

from __future__ import annotations

from waybook.model import ConflictError, Head, StaleWriterError


class MissingExtraError(ImportError):
    """An integration was used without its runtime installed. Install the named extra."""

    def __init__(self, *, integration: str, runtime: str, extra: str, missing: str | None) -> None:
        self.integration = integration
        self.runtime = runtime
        self.extra = extra
        msg = (
            f"{integration} needs {runtime} (module {missing!r} is not installed): "
            f"pip install 'waybook[{extra}]'"
        )
        super().__init__(msg, name=missing)


class StaleHistoryError(StaleWriterError):
    """A write that rewrites history (set, delete, undo, a run's new messages) was decided from a history
    that another writer has changed since; nothing was written."""

    def __init__(self, *, journal: str, key: str, expected: Head, actual: Head) -> None:
        self.journal, self.key, self.expected, self.actual = journal, key, expected, actual
        msg = (
            f"{key} (journal {journal}) changed since it was last read here (read at seq {expected.seq}, "
            f"now at seq {actual.seq}); nothing was written. Read the messages again, decide again, retry."
        )
        ConflictError.__init__(self, msg)


__all__ = ["MissingExtraError", "StaleHistoryError"]
