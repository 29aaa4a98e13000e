"""A feed server in its own process, for the tests that kill and restart one mid-stream.

    python -m tests.helpers.feed_server STORE_URL

Opens the store, serves its feed (`waybook.stores.FeedServer`) on 127.0.0.1, prints its port on a line
of its own once it listens, and serves until its standard input closes (or it is killed).
`ServerProcess` is the parent's side: start it, read its address, SIGKILL it, stop it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Self

ROOT = Path(__file__).resolve().parents[2]


class ServerProcess:
    """A `FeedServer` serving `url` in a child process (started at once; `address` once it listens)."""

    def __init__(self, url: str) -> None:
        environment = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.feed_server", url],
            cwd=ROOT,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        port = self.process.stdout.readline().strip()  # the exact state: it listens
        if not port.isdigit():
            self.stop()
            msg = f"the feed server process did not start (exit {self.process.returncode})"
            raise RuntimeError(msg)
        self.address = ("127.0.0.1", int(port))

    def kill(self) -> None:
        """SIGKILL: no cleanup, no goodbye; the kernel closes its sockets."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=60)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=60)


def main() -> None:
    from waybook.stores import FeedServer, open_store

    with open_store(sys.argv[1]) as store, FeedServer(store) as server:
        print(server.address[1], flush=True)
        sys.stdin.read()  # until the parent closes our stdin


if __name__ == "__main__":
    main()
