"""Issue 39.5: each format walks its own folders (`import_folder`, `import_session`) and answers typed
values; issue 43: an import reads regular files only, inside the folder it walks (`read_regular`)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.claude_code import short_transcript
from tests.helpers.paths import SHARED_FIXTURES
from tests.helpers.shapes import calls_made
from waybook.formats import (
    FolderImport,
    ImportedSession,
    RefusedFileError,
    SkippedFile,
    SourceFileError,
    claude_code,
    codex,
)
from waybook.formats._detect import detect_folder_format, detect_format
from waybook.formats._source_files import read_regular
from waybook.formats.opencode import OpenCodeStorageError, read_opencode
from waybook.model import SubagentLink

SESSION = "258c7280-ae70-4798-800f-63464d01a85d"
needs_shared = pytest.mark.skipif(
    not SHARED_FIXTURES.is_dir(), reason="shared/fixtures is not beside this checkout"
)


def project(tmp_path: Path) -> Path:
    """A Claude Code project folder: session s-1 with one sub-agent in SESSION/subagents/."""
    folder = tmp_path / "project"
    (folder / "s-1" / "subagents").mkdir(parents=True)
    (folder / "s-1.jsonl").write_text(short_transcript())
    agent = short_transcript(isSidechain=True, agentId="a1")
    (folder / "s-1" / "subagents" / "agent-a1.jsonl").write_text(agent)
    return folder


# --- typed values --------------------------------------------------------------------------------------


@needs_shared
def test_a_claude_code_folder_imports_as_sessions_each_with_its_subagents() -> None:
    found = claude_code.import_folder(SHARED_FIXTURES / "claude-code")
    assert isinstance(found, FolderImport)
    assert len(found.sessions) == 5
    assert len(found.journals) == 9  # five sessions and four sub-agents beside them
    (spotter,) = [s for s in found.sessions if s.source.name == f"{SESSION}.jsonl"]
    assert spotter.journal.journal == SESSION
    assert [sub.journal for sub in spotter.subagents] == [
        f"{SESSION}.agent-a881341",
        f"{SESSION}.agent-acompact-fffbd0",
    ]
    links = {r.body.journal for r in spotter.journal.records if isinstance(r.body, SubagentLink)}
    assert links == {sub.journal for sub in spotter.subagents}
    assert all(sub.source.is_relative_to(SHARED_FIXTURES) for sub in spotter.subagents)
    assert found.skipped == ()


def test_one_session_imports_with_its_subagents_under_the_name_given(tmp_path: Path) -> None:
    session = claude_code.import_session(project(tmp_path) / "s-1.jsonl", name="mine")
    assert isinstance(session, ImportedSession)
    assert [j.journal for j in session.journals] == ["mine", "mine.agent-a1"]
    assert session.subagents[0].source.name == "agent-a1.jsonl"


@needs_shared
def test_a_codex_folder_skips_a_stray_file_under_lenient_and_names_it_otherwise(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(SHARED_FIXTURES / "codex", folder)
    stray = folder / "2026" / "05" / "stray.jsonl"
    stray.parent.mkdir(parents=True)
    stray.write_text(short_transcript())
    found = codex.import_folder(folder, lenient=True)
    assert [s.source.name for s in found.sessions] == [p.name for p in folder.glob("rollout-*.jsonl")]
    assert found.skipped == (SkippedFile(stray, found.skipped[0].reason),)
    assert "session_meta" in found.skipped[0].reason or "not" in found.skipped[0].reason
    with pytest.raises(SourceFileError) as refused:
        codex.import_folder(folder)
    assert refused.value.path == stray


@needs_shared
def test_progress_is_told_of_every_session_file_read(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    found = claude_code.import_folder(SHARED_FIXTURES / "claude-code", progress=lambda *d: seen.append(d))
    total = len(found.sessions)
    assert seen == [(done, total) for done in range(total + 1)]


@needs_shared
def test_sessions_in_folder_gives_each_session_before_it_reads_the_next_file(tmp_path: Path) -> None:
    """Issue 50 (a whole home): a folder import holds one session at a time, so a session comes back
    before the next file is read; a damaged file stops the walk only when its turn comes."""
    folder = tmp_path / "sessions"
    shutil.copytree(SHARED_FIXTURES / "codex", folder)
    later = folder / "zz" / "rollout-later.jsonl"
    later.parent.mkdir()
    later.write_text('{"type":"session_meta"\n')
    walk = codex.sessions_in_folder(folder)
    first = next(walk)
    assert isinstance(first, ImportedSession)
    assert first.source.name.startswith("rollout-2026")
    with pytest.raises(SourceFileError) as refused:
        next(walk)
    assert refused.value.path == later


@needs_shared
def test_a_claude_code_folder_walked_one_session_at_a_time_equals_its_import_folder() -> None:
    folder = SHARED_FIXTURES / "claude-code"
    walked = [s for s in claude_code.sessions_in_folder(folder) if isinstance(s, ImportedSession)]
    assert tuple(walked) == claude_code.import_folder(folder).sessions


def _old_layout_project(root: Path, sessions: int) -> Path:
    """A project folder of the older layout: each session's sub-agent transcript beside it."""
    folder = root / f"project-{sessions}"
    folder.mkdir()
    for i in range(sessions):
        (folder / f"s-{i:04d}.jsonl").write_text(short_transcript(f"s-{i:04d}"))
        agent = short_transcript(f"s-{i:04d}", isSidechain=True, agentId=f"a{i:04d}")
        (folder / f"agent-a{i:04d}.jsonl").write_text(agent)
    return folder


def test_a_folder_walk_reads_the_transcripts_beside_its_sessions_once_not_once_per_session(
    tmp_path: Path,
) -> None:
    """Issue 50 (a whole home): every session of a folder read every agent-*.jsonl beside it to find its
    own, so a folder of S sessions and S sub-agents cost S * S reads (16x the calls at 4x the sessions);
    the walk indexes them once per folder. Each session still gets exactly its own sub-agent."""

    def walk(folder: Path) -> Callable[[], object]:
        return lambda: [s.subagents for s in claude_code.sessions_in_folder(folder)]  # type: ignore[union-attr]

    small, large = _old_layout_project(tmp_path, 20), _old_layout_project(tmp_path, 80)
    assert calls_made(walk(large)) / calls_made(walk(small)) < 5.5
    for found in claude_code.sessions_in_folder(small):
        assert isinstance(found, ImportedSession)
        number = found.source.stem.removeprefix("s-")
        assert [sub.source.name for sub in found.subagents] == [f"agent-a{number}.jsonl"]
    assert (
        claude_code.import_session(small / "s-0003.jsonl").subagents
        == next(
            s
            for s in claude_code.sessions_in_folder(small)
            if s.source.name == "s-0003.jsonl"  # type: ignore[union-attr]
        ).subagents
    )


# --- regular files only, inside the folder (issue 43) -------------------------------------------------


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "agent-x.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(RefusedFileError, match="a FIFO, not a regular file") as refused:
        read_regular(fifo)
    assert refused.value.path == fifo
    assert detect_format(fifo) is None


def test_a_folder_or_a_link_leading_outside_is_refused_and_a_link_inside_is_read(tmp_path: Path) -> None:
    home, outside = tmp_path / "home", tmp_path / "secret.jsonl"
    home.mkdir()
    outside.write_text("secret\n")
    (home / "real.jsonl").write_text("mine\n")
    (home / "out.jsonl").symlink_to(outside)
    (home / "in.jsonl").symlink_to(home / "real.jsonl")
    (home / "dir.jsonl").mkdir()
    with pytest.raises(RefusedFileError, match="a link outside the folder"):
        read_regular(home / "out.jsonl", inside=home)
    with pytest.raises(RefusedFileError, match="a folder, not a regular file"):
        read_regular(home / "dir.jsonl", inside=home)
    assert read_regular(home / "in.jsonl", inside=home) == b"mine\n"
    assert read_regular(home / "out.jsonl") == b"secret\n"  # a file the caller names itself: followed


def test_a_fifo_among_a_sessions_subagents_is_refused(tmp_path: Path) -> None:
    folder = project(tmp_path)
    os.mkfifo(folder / "s-1" / "subagents" / "agent-x.jsonl")
    with pytest.raises(RefusedFileError, match="FIFO") as refused:
        claude_code.import_session(folder / "s-1.jsonl")
    assert refused.value.path.name == "agent-x.jsonl"


def test_a_session_file_linking_outside_the_folder_is_not_imported(tmp_path: Path) -> None:
    folder = project(tmp_path)
    (tmp_path / "elsewhere.jsonl").write_text(short_transcript("s-2"))
    (folder / "s-2.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(RefusedFileError, match="outside the folder"):
        claude_code.import_folder(folder)
    with pytest.raises(RefusedFileError, match="outside the folder"):
        claude_code.import_folder(folder, lenient=True)  # not a file of another format: never skipped


def test_a_fifo_in_a_codex_folder_is_refused_and_auto_detection_passes_it_by(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    os.mkfifo(folder / "a.jsonl")
    (folder / "b.jsonl").write_text(short_transcript())
    with pytest.raises(RefusedFileError, match="FIFO"):
        codex.import_folder(folder)
    assert detect_folder_format(folder) == "claude-code"


def test_a_fifo_in_an_opencode_storage_folder_is_damage_lenient_skips(tmp_path: Path) -> None:
    storage = tmp_path / "storage"
    (storage / "session" / "prj").mkdir(parents=True)
    (storage / "session" / "prj" / "ses_1.json").write_text(json.dumps({"id": "ses_1"}))
    (storage / "message" / "ses_1").mkdir(parents=True)
    os.mkfifo(storage / "message" / "ses_1" / "msg_1.json")
    with pytest.raises(OpenCodeStorageError, match="FIFO"):
        read_opencode(storage, None)
    assert read_opencode(storage, None, lenient=True).messages == ()
