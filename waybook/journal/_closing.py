"""`with journal:` closes the journal when the block ends, for every adapter alike."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ClosedOnExit:
    """A journal (or store) used as a context manager: the block's end calls its `close()`."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
