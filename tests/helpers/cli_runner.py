"""Running the `waybook` command in tests.

`waybook(*args)` runs `waybook.cli.main(args)` in this process, with stdout, stderr and stdin of its
own, and answers as `subprocess.run(..., capture_output=True, text=True)` would: exit status, stdout,
stderr. That is the command's whole behaviour but a process's, and an order of magnitude faster.
`on_terminal(*args)` runs it the same way with stdout and stderr on a pseudo-terminal, and returns the
bytes the terminal received.

A few smoke tests run the installed program itself (`installed()`, `run_installed(...)`): the console
script, `python -m waybook`, pipes and terminals. They run this checkout's code (its root first on
PYTHONPATH). Where the console script is missing they skip, but under `CI=true` they fail: CI installs it.
"""

from __future__ import annotations

import contextlib
import io
import os
import pty
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.paths import ROOT
from waybook.cli import main


@dataclass(frozen=True)
class Ran:
    """What one run of the command did."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def _stream() -> io.TextIOWrapper:
    """A text stream with a byte buffer under it (`sys.stdout.buffer`), not a terminal, as a pipe is."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


def waybook(*args: str | Path, cwd: Path | None = None) -> Ran:
    """`waybook ARGS...` in this process (in `cwd`, if given), its stdin empty and not a terminal."""
    argv = [str(a) for a in args]
    out, err = _stream(), _stream()
    with contextlib.ExitStack() as stack:
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        saved_stdin, sys.stdin = sys.stdin, io.StringIO("")
        stack.callback(setattr, sys, "stdin", saved_stdin)
        status = main(argv)
    return Ran(argv, status, _text(out), _text(err))


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def on_terminal(*args: str | Path, columns: int = 80, stdout_too: bool = True) -> tuple[int, bytes]:
    """`waybook ARGS...` in this process with stderr (and stdout, unless `stdout_too` is False) on a
    pseudo-terminal `columns` wide: the exit status and every byte the terminal received. A thread reads
    the terminal while the command runs, so a full terminal buffer never blocks it."""
    argv = [str(a) for a in args]
    main_fd, side_fd = pty.openpty()
    seen = bytearray()

    def read_terminal() -> None:
        while True:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:  # EIO: the command's side is closed and everything it wrote was read
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    try:
        with contextlib.ExitStack() as stack:
            terminal = stack.enter_context(open(side_fd, "w", encoding="utf-8"))
            sink = stack.enter_context(open(os.devnull, "w", encoding="utf-8"))
            stack.enter_context(_environment(COLUMNS=str(columns), TERM="xterm"))
            stack.enter_context(contextlib.redirect_stdout(terminal if stdout_too else sink))
            stack.enter_context(contextlib.redirect_stderr(terminal))
            saved_stdin, sys.stdin = sys.stdin, io.StringIO("")
            stack.callback(setattr, sys, "stdin", saved_stdin)
            status = main(argv)
    finally:
        reader.join(timeout=60)
        os.close(main_fd)
    assert not reader.is_alive(), "the terminal was still being written to a minute after the command"
    return status, bytes(seen)


def installed() -> str:
    """The installed `waybook` program; skips the test where it is missing, or fails it under CI=true."""
    found = shutil.which("waybook")
    if found is not None:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("the `waybook` console script is not installed, and CI=true says it must be")
    pytest.skip("the console script is not installed")


def installed_env(**extra: str) -> dict[str, str]:
    """The environment for the installed program: this checkout's code first on the path."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_installed(*args: str | Path, **options: Any) -> subprocess.CompletedProcess[str]:
    """`waybook ARGS...` as a separate process of the installed program, as a user runs it."""
    options.setdefault("env", installed_env())
    return subprocess.run(
        [installed(), *map(str, args)], capture_output=True, text=True, check=False, **options
    )
