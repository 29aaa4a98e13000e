"""Claude Code's folders: a session's transcript with the sub-agent transcripts beside it, and a folder of
sessions (`~/.claude/projects/<project>/<session>.jsonl`).

Claude Code writes a session's sub-agents to `<session>/subagents/agent-<id>.jsonl`; older versions wrote
`agent-<id>.jsonl` beside the session, naming its `sessionId`. Each imports as a journal of its own,
`<name>.agent-<id>`, linked from the session's journal: by the tool result that names it, else where
`subagent_anchor` infers it hangs from. The walk of these folders is here and only here, and every file
is read with `read_regular` (a regular file; a sub-agent's inside its session's folder, a session's
inside the folder imported).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from waybook.formats._folders import (
    FolderImport,
    ImportedJournal,
    ImportedSession,
    Progress,
    SkippedFile,
    SourceFileError,
    each_session,
)
from waybook.formats._source_files import read_regular
from waybook.formats.claude_code._subagents import SubagentStart, subagent_start
from waybook.formats.claude_code._transcript import import_claude_code, journal_id_for
from waybook.model import JournalError

_HEAD_LINES = 50
"""How many lines of a transcript are searched for its `sessionId`."""


def import_session(path: Path, *, lenient: bool = False, name: str | None = None) -> ImportedSession:
    """The transcript at `path` and the sub-agent transcripts beside it, each a journal.

    `name` names the journals (the session's is `name`, a sub-agent's `<name>.agent-<id>`), so one session
    imports twice under two names; None: the session id. An error in the session's own transcript is
    raised as it is; one in a sub-agent's is a `SourceFileError` naming that file.
    """
    return _session(path, read_regular(path), lenient=lenient, name=name)


def import_folder(path: Path, *, lenient: bool = False, progress: Progress | None = None) -> FolderImport:
    """Every session under the folder `path`, each with its sub-agents, named by session id.

    The session files are the `*.jsonl` under `path` except the sub-agents' (`agent-*.jsonl`, and any
    file in a `subagents` folder), which import with their session. A file that is not a Claude Code
    transcript is skipped under `lenient` (`FolderImport.skipped`); any other failure is a
    `SourceFileError` naming the file. `progress(done, total)` follows the session files read.
    """
    found = list(sessions_in_folder(path, lenient=lenient, progress=progress))
    sessions = tuple(item for item in found if isinstance(item, ImportedSession))
    return FolderImport(path, sessions, tuple(item for item in found if isinstance(item, SkippedFile)))


def sessions_in_folder(
    path: Path, *, lenient: bool = False, progress: Progress | None = None
) -> Iterator[ImportedSession | SkippedFile]:
    """`import_folder`'s sessions (and skipped files) one at a time, in path order: a caller that writes
    each before taking the next holds one session's records, whatever the folder's size."""

    beside = _Beside()

    def one(session: Path) -> ImportedSession:
        data = read_regular(session, inside=path)
        return _session(session, data, lenient=lenient, name=None, beside=beside)

    return each_session(_session_files(path), one, lenient=lenient, progress=progress)


def _session_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*.jsonl")
        if not p.name.startswith("agent-") and "subagents" not in p.relative_to(folder).parts
    )


def _session(
    path: Path, data: bytes, *, lenient: bool, name: str | None, beside: _Beside | None = None
) -> ImportedSession:
    agents = _subagents(path, data, beside)
    main = import_claude_code(data, lenient=lenient, subagents=_starts(path, data, agents, name), name=name)
    subagents = []
    for agent_path, agent_data in agents:
        try:
            sub = import_claude_code(agent_data, lenient=lenient, name=name)
        except JournalError as exc:
            raise SourceFileError(agent_path, exc) from exc
        subagents.append(ImportedJournal(sub.journal, sub.records, sub.report, agent_path))
    return ImportedSession(
        path, ImportedJournal(main.journal, main.records, main.report, path), tuple(subagents)
    )


def _subagents(session: Path, data: bytes, beside: _Beside | None = None) -> list[tuple[Path, bytes]]:
    """The sub-agent transcripts of a session, read: SESSION/subagents/agent-*.jsonl, then agent-*.jsonl
    beside it that name the same session (the older layout). Each must lie inside the session's folder.
    `beside`: a folder walk's index of the transcripts beside its sessions (each read once to index it,
    not once per session of its folder)."""
    home = session.parent

    def read(path: Path) -> bytes:
        return read_regular(path, inside=home, where="session's folder")

    found = [(p, read(p)) for p in sorted((home / session.stem / "subagents").glob("agent-*.jsonl"))]
    if session.name.startswith("agent-"):
        return found
    session_id = _session_id(data)
    if beside is not None:
        return found + [(p, read(p)) for p in beside.naming(home, session_id, read)]
    agents = [(p, read(p)) for p in sorted(home.glob("agent-*.jsonl"))]
    return found + [(p, agent) for p, agent in agents if _session_id(agent) == session_id]


class _Beside:
    """The sub-agent transcripts beside the sessions of a folder walk (`agent-*.jsonl`, the older
    layout), by folder and the session id each names: a folder's are read once, when its first session
    asks, so a folder of S sessions and their sub-agents is not read S times over."""

    def __init__(self) -> None:
        self._folders: dict[Path, dict[str | None, list[Path]]] = {}

    def naming(self, home: Path, session_id: str | None, read: Callable[[Path], bytes]) -> list[Path]:
        """The transcripts beside in `home` that name `session_id`, in path order."""
        index = self._folders.get(home)
        if index is None:
            index = self._folders[home] = {}
            for path in sorted(home.glob("agent-*.jsonl")):
                index.setdefault(_session_id(read(path)), []).append(path)
        return index.get(session_id, [])


def _session_id(data: bytes) -> str | None:
    for line in data.splitlines()[:_HEAD_LINES]:
        with contextlib.suppress(ValueError, RecursionError):  # a hostile line is the importer's to refuse
            value = json.loads(line)
            if isinstance(value, dict) and isinstance(value.get("sessionId"), str):
                return str(value["sessionId"])
    return None


def subagent_files(session: Path, data: bytes) -> list[Path]:
    """The sub-agent transcripts of the session file `session` (whose content is `data`), as `_subagents`
    finds them, unread: SESSION/subagents/agent-*.jsonl, then agent-*.jsonl beside it naming the session."""
    return [path for path, _ in _subagents(session, data)]


def subagent_journal(session: Path, data: bytes, agent: Path, name: str | None = None) -> str:
    """The journal id the sub-agent transcript `agent` of the session `session` imports as."""
    session_id = name or _session_id(data) or session.stem
    return journal_id_for(session_id, agent.stem.removeprefix("agent-"))


def _starts(
    path: Path, session: bytes, agents: list[tuple[Path, bytes]], name: str | None
) -> list[SubagentStart]:
    """The start of each sub-agent found beside the session, by its journal id."""
    starts = []
    for agent_path, agent in agents:
        start = subagent_start(subagent_journal(path, session, agent_path, name), agent)
        if start is not None:
            starts.append(start)
    return starts
