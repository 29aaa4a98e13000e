"""Issue 43: a single-file import (`waybook import FORMAT FILE`) reads a regular file only, for every
format, and says which file it refused: a FIFO (reading one waits for a writer forever), a device, a
socket. A link the user names is followed; a file the import finds itself (a sub-agent's transcript, the
`-wal`, `-journal` and `-shm` files SQLite opens beside a database) must be a regular file inside the
folder it was found in."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.blocking import finishes
from tests.helpers.claude_code import short_transcript
from tests.helpers.cli_runner import waybook
from tests.helpers.paths import FIXTURES
from tests.helpers.pi import HEADER_V3, pi_lines, user
from waybook.formats import RefusedFileError, claude_code

FORMATS = ["pi", "codex", "claude-code", "openai-agents", "langgraph", "opencode", "auto"]
DATABASES = {
    "openai-agents": (FIXTURES / "openai-agents" / "sqlite-session.db", ["--session", "support-1"]),
    "langgraph": (FIXTURES / "langgraph" / "checkpoints.db", ["--thread", "thread-1"]),
}


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    os.mkfifo(path)
    return path


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "session.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        yield path


def refused(fmt: str, path: Path, tmp_path: Path) -> str:
    """Run `waybook import FMT PATH -o OUT`; assert it is refused (exit 2) with nothing written, and
    return the message."""
    out = tmp_path / "out.jsonl"
    ran = finishes(lambda: waybook("import", fmt, str(path), "-o", str(out)))
    assert ran.returncode == 2, ran.stderr
    assert not out.exists()
    assert str(path) in ran.stderr
    assert "nothing was written" in ran.stderr
    return str(ran.stderr)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_fifo_is_refused_by_name_without_waiting(fmt: str, fifo: Path, tmp_path: Path) -> None:
    assert "a FIFO, not a regular file" in refused(fmt, fifo, tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_device_is_refused_by_name(fmt: str, tmp_path: Path) -> None:
    assert "a device, not a regular file" in refused(fmt, Path("/dev/zero"), tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_socket_is_refused_by_name(fmt: str, unix_socket: Path, tmp_path: Path) -> None:
    assert "a socket, not a regular file" in refused(fmt, unix_socket, tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_link_to_a_fifo_is_refused_by_the_name_given(fmt: str, fifo: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(fifo)
    assert "a FIFO, not a regular file" in refused(fmt, link, tmp_path)


def test_a_link_the_user_names_to_a_session_elsewhere_is_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "s.jsonl").write_text(pi_lines(HEADER_V3, user("u1", None, "hello")))
    (tmp_path / "named.jsonl").symlink_to(elsewhere / "s.jsonl")
    ran = waybook("import", "pi", str(tmp_path / "named.jsonl"), "-o", str(tmp_path / "out.jsonl"))
    assert ran.returncode == 0, ran.stderr


def test_a_subagent_transcript_linking_outside_the_sessions_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    (folder / "s-1" / "subagents").mkdir(parents=True)
    (folder / "s-1.jsonl").write_text(short_transcript())
    (tmp_path / "secret.jsonl").write_text(short_transcript(isSidechain=True, agentId="a1"))
    (folder / "s-1" / "subagents" / "agent-a1.jsonl").symlink_to(tmp_path / "secret.jsonl")
    with pytest.raises(RefusedFileError, match="a link outside the session's folder"):
        claude_code.import_session(folder / "s-1.jsonl")
    ran = waybook("import", "claude-code", str(folder / "s-1.jsonl"), "-o", str(tmp_path / "out.jsonl"))
    assert ran.returncode == 2
    assert "agent-a1.jsonl: a link outside the session's folder" in ran.stderr
    assert not (tmp_path / "out.jsonl").exists()


# --- SQLite sources: the database, and the files SQLite opens beside it ---------------------------------


@pytest.mark.parametrize("fmt", sorted(DATABASES))
@pytest.mark.parametrize("side", ["-wal", "-journal", "-shm"])
def test_a_fifo_beside_a_database_is_refused_by_name(fmt: str, side: str, tmp_path: Path) -> None:
    source, options = DATABASES[fmt]
    database = Path(shutil.copy(source, tmp_path / source.name))
    os.mkfifo(tmp_path / (source.name + side))
    out = tmp_path / "out.jsonl"
    ran = finishes(lambda: waybook("import", fmt, str(database), *options, "-o", str(out)))
    assert ran.returncode == 2, ran.stderr
    assert f"{source.name}{side}: a FIFO, not a regular file" in ran.stderr
    assert not out.exists()


@pytest.mark.parametrize("fmt", sorted(DATABASES))
def test_a_log_beside_a_database_linking_elsewhere_is_refused(fmt: str, tmp_path: Path) -> None:
    source, options = DATABASES[fmt]
    (tmp_path / "here").mkdir()
    database = Path(shutil.copy(source, tmp_path / "here" / source.name))
    (tmp_path / "other.db-wal").write_bytes(b"")
    (tmp_path / "here" / (source.name + "-wal")).symlink_to(tmp_path / "other.db-wal")
    ran = waybook("import", fmt, str(database), *options, "-o", str(tmp_path / "out.jsonl"))
    assert ran.returncode == 2, ran.stderr
    assert "a link outside the database's folder" in ran.stderr
