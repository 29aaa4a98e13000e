"""Counting the bytes this process reads from one file, strace-free.

`BytesRead(path)`, entered, counts every byte the JSONL adapter's file layer (`OsFileOps.pread`, through
which every journal read goes) reads from `path`; a Python file object opened on `path` counts as the
whole file (the most it may read). Other files (a store's catalog, a checkpoint, a page's assets) are not
counted.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from types import TracebackType
from typing import Any
from unittest import mock

from waybook.journal._jsonl._file_ops import OsFileOps


class BytesRead:
    """`with BytesRead(path) as read: ...`, then `read.total`: the bytes read from `path` meanwhile."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self.total = 0
        self._patches: list[Any] = []

    def __enter__(self) -> BytesRead:
        real_pread, real_open = OsFileOps.pread, io.open

        def pread(ops: OsFileOps, fd: int, size: int, offset: int) -> bytes:
            data = real_pread(ops, fd, size, offset)
            if Path(os.readlink(f"/proc/self/fd/{fd}")) == self.path:
                self.total += len(data)
            return data

        def open_counted(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, str | os.PathLike) and Path(file).resolve() == self.path:
                self.total += self.path.stat().st_size
            return real_open(file, *args, **kwargs)

        self._patches = [
            mock.patch.object(OsFileOps, "pread", pread),
            mock.patch("io.open", open_counted),
            mock.patch("builtins.open", open_counted),
        ]
        for patch in self._patches:
            patch.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        for patch in reversed(self._patches):
            patch.stop()
