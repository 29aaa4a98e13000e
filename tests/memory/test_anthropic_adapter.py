"""WaybookMemoryTool is the SDK's memory tool: its classes, runner and errors; plus waybook's receipts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic")

import anyio
from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError

from tests.memory.anthropic_reference import Pair, seen, waybook_tool
from tests.memory.scripted_anthropic import ScriptedModel, memory_call, text
from waybook import InMemoryJournal, Session
from waybook.integrations.anthropic_memory import AsyncWaybookMemoryTool, WaybookMemoryTool
from waybook.memory import Limits, Memory

M = "/memories"


def memory() -> Memory:
    return Memory(InMemoryJournal(), scope="claude")


def test_the_tools_are_the_sdks_abstract_memory_tools() -> None:
    assert isinstance(WaybookMemoryTool(memory()), BetaAbstractMemoryTool)
    assert isinstance(AsyncWaybookMemoryTool(memory()), BetaAsyncAbstractMemoryTool)
    assert WaybookMemoryTool(memory()).to_dict() == {"type": "memory_20250818", "name": "memory"}
    cached = WaybookMemoryTool(memory(), cache_control={"type": "ephemeral"})
    assert cached.to_dict()["cache_control"] == {"type": "ephemeral"}


def test_errors_are_the_sdks_tool_error() -> None:
    tool = WaybookMemoryTool(memory())
    with pytest.raises(ToolError) as refused:
        tool.call({"command": "view", "path": f"{M}/none.md"})
    assert refused.value.content == f"The path {M}/none.md does not exist. Please provide a valid path."


def test_the_sdks_tool_runner_runs_it_as_is() -> None:
    model = ScriptedModel(
        [
            [memory_call("toolu_1", command="create", path=f"{M}/prefs.md", file_text="likes tea\n")],
            [
                memory_call("toolu_2", command="view", path=f"{M}/none.md"),
                memory_call(
                    "toolu_3", command="str_replace", path=f"{M}/prefs.md", old_str="tea", new_str="coffee"
                ),
            ],
            [text("Noted.")],
        ]
    )
    tool = WaybookMemoryTool(memory())
    runner = model.client().beta.messages.tool_runner(
        model="scripted", max_tokens=64, messages=[{"role": "user", "content": "remember"}], tools=[tool]
    )
    final = runner.until_done()
    assert final.content[0].text == "Noted."
    assert model.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = model.tool_results()
    assert results["toolu_1"]["content"] == f"File created successfully at: {M}/prefs.md"
    assert results["toolu_2"]["is_error"] is True
    assert results["toolu_3"]["content"].endswith("     1\tlikes coffee\n     2\t")
    assert tool.memory.state().files[f"{M}/prefs.md"].text == "likes coffee\n"


def test_the_async_twin_runs_under_the_sdks_async_runner() -> None:
    model = ScriptedModel(
        [
            [memory_call("toolu_1", command="create", path=f"{M}/a.md", file_text="a")],
            [memory_call("toolu_2", command="rename", old_path=f"{M}/a.md", new_path=f"{M}/b.md")],
            [text("done")],
        ]
    )
    tool = AsyncWaybookMemoryTool(memory())

    async def run() -> Any:
        runner = model.async_client().beta.messages.tool_runner(
            model="scripted", max_tokens=64, messages=[{"role": "user", "content": "go"}], tools=[tool]
        )
        return await runner.until_done()

    assert anyio.run(run).content[0].text == "done"
    assert model.tool_results()["toolu_2"]["content"] == f"Successfully renamed {M}/a.md to {M}/b.md"
    assert list(tool.memory.state().files) == [f"{M}/b.md"]
    assert [call.command for call in tool.take_calls()] == ["create", "rename"]


def test_the_async_twin_answers_exactly_as_the_sync_tool(tmp_path: Path) -> None:
    sync_tool, async_tool = waybook_tool(), AsyncWaybookMemoryTool(memory())
    steps: list[Any] = [
        {"command": "create", "path": f"{M}/a.md", "file_text": "1\n2\n"},
        {"command": "insert", "path": f"{M}/a.md", "insert_line": 9, "insert_text": "x"},
        {"command": "view", "path": f"{M}/a.md", "view_range": [2.5, 3]},
        None,
        {"command": "view", "path": M},
    ]

    async def async_seen(step: Any) -> tuple[str, str]:
        try:
            return ("ok", await async_tool.call(step))
        except ToolError as error:
            return ("error", str(error.content))

    for step in steps:
        assert anyio.run(async_seen, step) == seen(sync_tool, step, strict=True)
    assert anyio.run(async_tool.clear_all_memory) == "All memory cleared"


def test_a_call_id_given_by_the_runtime_is_on_the_record_and_the_receipt() -> None:
    tool = WaybookMemoryTool(memory())
    tool.call({"command": "create", "path": f"{M}/a.md", "file_text": "a"}, call_id="toolu_9")
    (call,) = tool.take_calls()
    assert call.call_id == "toolu_9"
    assert call.receipt is not None
    assert call.receipt.call_id == "toolu_9"
    assert tool.memory.history(f"{M}/a.md")[-1].call_id == "toolu_9"


def test_without_a_call_id_the_receipt_links_the_session_entry_to_the_memory_record() -> None:
    """The runner passes no call id: the runtime writes each call's receipt into its tool-result entry."""
    model = ScriptedModel(
        [[memory_call("toolu_1", command="create", path=f"{M}/a.md", file_text="a")], [text("ok")]]
    )
    tool = WaybookMemoryTool(memory())
    runner = model.client().beta.messages.tool_runner(
        model="scripted", max_tokens=64, messages=[{"role": "user", "content": "go"}], tools=[tool]
    )
    session = Session.create(InMemoryJournal("s"), journal_id="s")
    for message in runner:
        runner.generate_tool_call_response()  # runs the turn's tools now (the runner caches the result)
        uses = [block for block in message.content if block.type == "tool_use" and block.name == "memory"]
        for use, call in zip(uses, tool.take_calls(), strict=True):
            details = call.receipt.as_details() if call.receipt else None
            session.tool_result(
                use.id, call.text, tool_name="memory", is_error=call.is_error, details=details
            )
    (entry,) = [r for r in session.journal.read() if r.kind == "waybook.tool_result/1"]
    receipt = entry.body.details["memory_receipt"]
    assert entry.body.call_id == "toolu_1"
    assert receipt["seq"] == tool.memory.history(f"{M}/a.md")[-1].seq


def test_clear_all_memory_tombstones_every_file_and_keeps_history() -> None:
    tool = WaybookMemoryTool(memory())
    tool.call({"command": "create", "path": f"{M}/a.md", "file_text": "a"})
    tool.call({"command": "create", "path": f"{M}/d/b.md", "file_text": "b"})
    assert tool.clear_all_memory() == "All memory cleared"
    assert tool.memory.state().files == {}
    assert [r.event for r in tool.memory.history(f"{M}/d/b.md")][-1] == "tombstoned"


def test_clear_all_memory_removes_read_only_notes_too() -> None:
    tool = WaybookMemoryTool(memory())
    tool.call({"command": "create", "path": f"{M}/a.md", "file_text": "a"})
    tool.call({"command": "create", "path": f"{M}/rules.md", "file_text": "---\ndescription: r\n---\nx\n"})
    assert tool.memory.set_read_only(f"{M}/rules.md", True).ok  # the host's call
    assert tool.clear_all_memory() == "All memory cleared"  # the host can always remove a note
    assert tool.memory.state().files == {}


def test_the_model_cannot_make_a_note_read_only() -> None:
    tool = WaybookMemoryTool(memory())
    with pytest.raises(ToolError, match=r"^Error: .*set by the host"):
        tool.call(
            {"command": "create", "path": f"{M}/rules.md", "file_text": "---\nread_only: true\n---\nx\n"}
        )
    assert tool.memory.state().files == {}


# --- the deliberate differences listed in docs/memory.md -----------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        f"{M}//a.md",
        f"{M}/./a.md",
        f"{M}/d/../a.md",
        "/memoriesX/a.md",
        f"{M}/a b.md",
        f"{M}/cafe\u0301.md",  # not in Unicode normal form C: one name has one spelling
    ],
)
def test_a_path_the_reference_would_resolve_is_refused_unless_canonical(path: str, tmp_path: Path) -> None:
    reference, ours = Pair(tmp_path).both({"command": "create", "path": path, "file_text": "x"})
    assert reference == ("ok", f"File created successfully at: {path}")
    assert ours[0] == "error"
    assert ours[1].startswith("Error: ")
    assert "segment" in ours[1] or "outside /memories" in ours[1] or "normal form C" in ours[1]


@pytest.mark.parametrize("path", [f"{M}/.hidden.md", f"{M}/café.md", f"{M}/_a.md", f"{M}/日本.md"])
def test_hidden_non_ascii_and_underscore_names_are_notes_as_in_the_reference(
    path: str, tmp_path: Path
) -> None:
    reference, ours = Pair(tmp_path).both({"command": "create", "path": path, "file_text": "x"})
    assert reference == ours == ("ok", f"File created successfully at: {path}")


def test_a_path_that_leaves_memories_and_comes_back_is_refused_as_escaping(tmp_path: Path) -> None:
    path = f"{M}/../memories/a.md"
    reference, ours = Pair(tmp_path).both({"command": "create", "path": path, "file_text": "x"})
    assert reference[0] == "ok"
    assert ours == ("error", f"Path {path} would escape /memories directory")


def test_a_file_needs_an_allowed_extension(tmp_path: Path) -> None:
    reference, ours = Pair(tmp_path).both({"command": "create", "path": f"{M}/notes", "file_text": "x"})
    assert reference[0] == "ok"
    assert ours[0] == "error"
    assert ours[1].startswith("Error: ")
    assert ".md" in ours[1]


def test_malformed_create_text_leaves_no_empty_file_behind(tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    for file_text in (None, 5, "\ud800"):
        pair.same({"command": "create", "path": f"{M}/b.md", "file_text": file_text})
        assert pair.reference_files() == {f"{M}/b.md": ""}  # the reference created it before failing
        assert pair.our_files() == {}
        (tmp_path / "memories" / "b.md").unlink()


def test_a_directory_outlives_its_last_file_as_on_disk(tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    pair.same({"command": "create", "path": f"{M}/d/e/a.md", "file_text": "a"})
    pair.same({"command": "delete", "path": f"{M}/d/e/a.md"})
    assert pair.same({"command": "view", "path": f"{M}/d"})[0] == "ok"  # lists the empty d/e
    pair.same({"command": "rename", "old_path": f"{M}/d", "new_path": f"{M}/x/y"})
    pair.same({"command": "view", "path": M})
    pair.same({"command": "create", "path": f"{M}/x/y/e", "file_text": "over a directory"})
    pair.same({"command": "delete", "path": f"{M}/x"})
    pair.same({"command": "view", "path": f"{M}/x/y"})
    pair.same({"command": "view", "path": M})


def test_a_failed_rename_makes_no_directories(tmp_path: Path) -> None:
    # The reference makes the destination's parents before it finds the source missing; waybook's
    # refusal changes nothing (docs/memory.md lists the difference).
    pair = Pair(tmp_path)
    pair.same({"command": "rename", "old_path": f"{M}/none.md", "new_path": f"{M}/p/q.md"})
    assert (tmp_path / "memories" / "p").is_dir()
    assert not pair.ours.memory.state().is_directory(f"{M}/p")


def test_limits_evict_the_earliest_written_files_and_refuse_what_cannot_fit() -> None:
    tool = waybook_tool(Limits(max_file_bytes=8, max_total_bytes=12, max_files=2))
    tool.call({"command": "create", "path": f"{M}/a.md", "file_text": "aaaa"})
    tool.call({"command": "create", "path": f"{M}/b.md", "file_text": "bbbb"})
    tool.call({"command": "create", "path": f"{M}/c.md", "file_text": "cccc"})
    assert sorted(tool.memory.state().files) == [f"{M}/b.md", f"{M}/c.md"]
    with pytest.raises(ToolError, match=r"^Error: .*the limit is 8 bytes per file"):
        tool.call({"command": "create", "path": f"{M}/d.md", "file_text": "d" * 9})
    assert sorted(tool.memory.state().files) == [f"{M}/b.md", f"{M}/c.md"]


def test_a_read_only_file_refuses_edits() -> None:
    tool = WaybookMemoryTool(memory())
    tool.call({"command": "create", "path": f"{M}/r.md", "file_text": "---\ndescription: r\n---\nx\n"})
    assert tool.memory.set_read_only(f"{M}/r.md", True).ok  # the host's call
    with pytest.raises(ToolError, match=r"^Error: .*read-only"):
        tool.call({"command": "str_replace", "path": f"{M}/r.md", "old_str": "x", "new_str": "y"})
