"""Imports that grow (issue 47): importing a prefix of a session file and then the rest gives the records
an import of the whole file gives, for every real session and every place it can be cut.

Each format's growing import is fed the file a line at a time. After every line, the records it holds
must be the start of the whole file's records (a record depends only on the lines at or before it), and
those records plus what it says the end would add (`pending`) must be the one-shot import of the file cut
there. The one-shot import is the same code fed everything, so the two can only agree by construction if
nothing looks ahead: that is what is checked, cut by cut.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.claude_code import Transcript
from tests.helpers.formats import SHARED_FIXTURES, needs_shared
from waybook.formats._foreign import ForeignFormatError
from waybook.formats._growing import GrowingImport, complete_lines
from waybook.formats.claude_code import GrowingTranscript, SubagentStart, import_claude_code, subagent_start
from waybook.formats.codex import import_codex
from waybook.formats.codex._rollout import GrowingRollout
from waybook.formats.pi import import_pi
from waybook.formats.pi._growing import GrowingPi
from waybook.model import Compaction, NewRecord, SubagentLink

CLAUDE = sorted((SHARED_FIXTURES / "claude-code").rglob("*.jsonl")) if SHARED_FIXTURES.is_dir() else []
CODEX = sorted((SHARED_FIXTURES / "codex").glob("*.jsonl")) if SHARED_FIXTURES.is_dir() else []
PI = sorted((SHARED_FIXTURES / "pi").glob("*.jsonl")) if SHARED_FIXTURES.is_dir() else []
SESSION = "258c7280-ae70-4798-800f-63464d01a85d"

Whole = Callable[[bytes], tuple[NewRecord, ...]]


def whole_claude(data: bytes) -> tuple[NewRecord, ...]:
    return import_claude_code(data).records


def whole_codex(data: bytes) -> tuple[NewRecord, ...]:
    return import_codex(data).records


def whole_pi(data: bytes) -> tuple[NewRecord, ...]:
    return import_pi(data).records


def cut_by_cut(data: bytes, growing: GrowingImport, whole: Whole, *, every: int = 1, step: int = 1) -> int:
    """Feed `data` a line at a time; check the growing import against the whole file every `step` lines
    and, every `every` lines, against the one-shot import of the file cut there. Returns the cuts checked
    against a one-shot import."""
    everything = whole(data)
    checked, seen = 0, 0
    for number, end, line in complete_lines(data):
        growing.feed(number, line)
        if number % step and number % every and end != len(data):
            continue
        new = growing.records[seen:]
        assert tuple(new) == everything[seen : seen + len(new)], f"line {number} changed a record before it"
        seen += len(new)
        if number % every == 0 or end == len(data):
            records = tuple(growing.records)
            try:
                cut = whole(data[:end])
            except ForeignFormatError:
                cut = ()  # not a session yet (no header line so far)
            assert records + tuple(growing.pending()) == cut, f"cut after line {number}"
            checked += 1
    growing.finish()
    assert tuple(growing.records) == everything
    return checked


def sized(paths: list[Path], *, small: int = 500_000) -> list[Any]:
    """The files as parameters, the large ones marked slow (their guarantee is held by the small ones)."""
    return [
        pytest.param(path, marks=pytest.mark.slow) if path.stat().st_size >= small else path for path in paths
    ]


@needs_shared(CLAUDE)
@pytest.mark.parametrize("path", sized(CLAUDE), ids=lambda p: p.name[:24])
def test_a_claude_code_transcript_cut_anywhere_imports_as_the_start_of_the_whole(path: Path) -> None:
    data = path.read_bytes()
    every = 1 if len(data) < 500_000 else 97  # the long session: every 97th cut against a one-shot
    assert cut_by_cut(data, GrowingTranscript(), whole_claude, every=every)


@needs_shared(CODEX)
@pytest.mark.parametrize("lines", [120, pytest.param(None, marks=pytest.mark.slow)], ids=["120-lines", "all"])
@pytest.mark.parametrize("path", CODEX, ids=lambda p: p.name[:24])
def test_a_codex_rollout_cut_anywhere_imports_as_the_start_of_the_whole(
    path: Path, lines: int | None
) -> None:
    data = b"".join(path.read_bytes().splitlines(keepends=True)[:lines])
    assert cut_by_cut(data, GrowingRollout(), whole_codex, every=3)


def test_a_prompt_recorded_only_as_an_event_is_decided_as_the_whole_file_decides_it() -> None:
    """Issue 44.2's rule (`event_prompts`: a user_message event is the prompt unless a user item of its
    turn carries its text) looks at the lines after the event; the growing import holds the event, and
    the lines after it, until its turn decides: cut anywhere, it gives the whole file's records."""
    from tests.helpers.paths import FIXTURES

    data = (FIXTURES / "codex" / "event-prompts.jsonl").read_bytes()
    assert cut_by_cut(data, GrowingRollout(), whole_codex, every=7)


@needs_shared(PI)
@pytest.mark.slow
@pytest.mark.parametrize("path", PI, ids=lambda p: p.name[:24])
def test_a_pi_session_cut_anywhere_imports_as_the_start_of_the_whole(path: Path) -> None:
    # Pi's import is done again whole as the file grows (its loader reads the whole file first)
    assert cut_by_cut(path.read_bytes(), GrowingPi(), whole_pi, every=50, step=50)


@needs_shared(CLAUDE)
@pytest.mark.slow
def test_a_session_with_its_sub_agents_cut_anywhere_links_them_where_the_whole_file_does() -> None:
    """The sub-agents found beside the session are known from the start (as a folder import knows them),
    and the session is cut line by line: every link is where the whole file puts it."""
    folder = SHARED_FIXTURES / "claude-code" / "spotter"
    data = (folder / f"{SESSION}.jsonl").read_bytes()
    starts = [
        start
        for path in sorted((folder / SESSION / "subagents").glob("agent-*.jsonl"))
        if (start := subagent_start(f"{SESSION}.agent-{path.stem[6:]}", path.read_bytes())) is not None
    ]

    def whole(cut: bytes) -> tuple[NewRecord, ...]:
        return import_claude_code(cut, subagents=starts).records

    assert cut_by_cut(data, GrowingTranscript(subagents=starts), whole, every=211)
    links = [r.body.journal for r in whole(data) if isinstance(r.body, SubagentLink)]
    assert sorted(links) == sorted(start.journal for start in starts)


def test_the_header_waits_for_the_lines_that_name_the_session() -> None:
    """A file that starts with a line naming no session (a snapshot) imports its header from the first
    line that does: a cut before it holds nothing yet, rather than a header a later line would change."""
    t = Transcript()
    t.lines.append({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}})
    t.user("hi")
    t.assistant("m1", {"type": "text", "text": "hello"}, stop="end_turn")
    data = t.text().encode()
    growing = GrowingTranscript()
    first, rest = data.split(b"\n", 1)
    growing.feed(1, first)
    assert tuple(growing.records) == ()
    assert cut_by_cut(rest, growing_from(growing, 2), lambda cut: whole_claude(first + b"\n" + cut))


def growing_from(growing: GrowingTranscript, first: int) -> GrowingImport:
    """`growing`, fed on from line `first` (numbering the rest of a file whose first lines it was fed)."""

    class Shifted:
        def feed(self, number: int, line: bytes | str) -> None:
            growing.feed(number + first - 1, line)

        def __getattr__(self, name: str) -> Any:
            return getattr(growing, name)

    return Shifted()  # type: ignore[return-value]


def test_a_compaction_waits_for_its_summary_on_the_next_line() -> None:
    t = Transcript()
    t.user("old work")
    last = t.assistant("msg_1", {"type": "text", "text": "done"}, stop="end_turn")
    t.add(
        "system", None, subtype="compact_boundary", logicalParentUuid=last, compactMetadata={"preTokens": 9}
    )
    t.user("Summary: old work done.", isCompactSummary=True)
    t.user("next task")
    data = t.text().encode()
    growing = GrowingTranscript()
    for number, _, line in list(complete_lines(data))[:3]:
        growing.feed(number, line)
    assert not any(isinstance(r.body, Compaction) for r in growing.records)  # its summary may come next
    (held,) = [r.body for r in growing.pending() if isinstance(r.body, Compaction)]
    assert held.summary == ""  # what a file ending here gives
    assert cut_by_cut(data, GrowingTranscript(), whole_claude)
    (compaction,) = [r.body for r in whole_claude(data) if isinstance(r.body, Compaction)]
    assert compaction.summary == "Summary: old work done."


def test_a_sub_agent_named_by_its_progress_line_is_linked_there_not_at_its_result() -> None:
    """Claude Code 2.1 names a sub-agent in an `agent_progress` line as it starts: the link is written
    there (so a watcher can import the sub-agent while it runs), and the tool result that names it again
    adds no second link."""
    t = Transcript()
    t.user("research it")
    task = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Task",
        "input": {"prompt": "look", "subagent_type": "x"},
    }
    t.assistant("msg_1", task)
    progress = t.add("progress", data={"type": "agent_progress", "agentId": "a1"}, parentToolUseID="toolu_1")
    answer = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "found"}]
    t.user(answer, toolUseResult={"agentId": "a1"})
    t.assistant("msg_2", {"type": "text", "text": "done"}, stop="end_turn")
    records = whole_claude(t.text().encode())
    (link,) = [r for r in records if isinstance(r.body, SubagentLink)]
    assert (link.body.journal, link.body.call_id, link.body.agent) == ("s-1.agent-a1", "toolu_1", "x")
    assert [r.id for r in records].index(link.id) == [r.id for r in records].index(progress) + 1
    assert cut_by_cut(t.text().encode(), GrowingTranscript(), whole_claude)


def test_a_sub_agent_found_beside_is_linked_after_the_first_message_newer_than_its_start() -> None:
    """A warm-up agent starts before the session's first prompt: it is linked right after that prompt,
    from the lines read so far, wherever the file is cut after it."""
    t = Transcript()
    prompt = t.user("hi")
    t.assistant("m1", {"type": "text", "text": "hello"}, stop="end_turn")
    t.user("more")
    warmup = {"type": "user", "uuid": "w1", "sessionId": "s-1", "timestamp": "2026-02-10T20:59:59.000Z"}
    start = SubagentStart("s-1.agent-w", {**warmup, "message": {"role": "user", "content": "Warmup"}})

    def whole(cut: bytes) -> tuple[NewRecord, ...]:
        return import_claude_code(cut, subagents=[start]).records

    records = whole(t.text().encode())
    ids = [r.id for r in records]
    assert ids.index("link:s-1.agent-w") == ids.index(prompt) + 1
    assert cut_by_cut(t.text().encode(), GrowingTranscript(subagents=[start]), whole)
    late = GrowingTranscript()
    for number, _, line in complete_lines(t.text().encode()):
        late.feed(number, line)
    assert not late.add_subagent(start)  # its place has passed: the import must start again


@needs_shared(CLAUDE)
@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.name[:24])
def test_no_record_is_dated_by_a_line_after_it(path: Path) -> None:
    """A record's time comes from the lines read when it is written, never from a later one (issue 47:
    a sub-agent's file cut at 30 lines gave 21:55:33.072 where the whole file gave 21:55:37.064)."""
    growing, newest, written = GrowingTranscript(), "", 0
    for number, _, line in complete_lines(path.read_bytes()):
        stamp = json.loads(line).get("timestamp")
        newest = max(newest, stamp) if isinstance(stamp, str) else newest
        growing.feed(number, line)
        for record in growing.records[written:]:
            assert record.at <= newest, f"{record.id} is dated {record.at}, after line {number}"
        written = len(growing.records)
