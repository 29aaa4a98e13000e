"""The Anthropic memory tool adapter returns the reference implementation's texts."""

from __future__ import annotations

from waybook.journal import InMemoryJournal
from waybook.memory import Memory
from waybook.memory.anthropic import AnthropicMemoryTool, ToolText


def tool() -> AnthropicMemoryTool:
    return AnthropicMemoryTool(Memory(InMemoryJournal(), scope="claude"))


def test_create_then_view_with_line_numbers() -> None:
    t = tool()
    created = t.call(
        {"command": "create", "path": "/memories/notes.md", "file_text": "a\nb\n"}, call_id="toolu_1"
    )
    assert created == ToolText("File created successfully at: /memories/notes.md", receipt=created.receipt)
    assert created.receipt is not None
    assert created.receipt.call_id == "toolu_1"
    view = t.call({"command": "view", "path": "/memories/notes.md"})
    assert (
        view.text
        == "Here's the content of /memories/notes.md with line numbers:\n     1\ta\n     2\tb\n     3\t"
    )


def test_create_on_an_existing_file_is_refused_as_the_reference_does() -> None:
    t = tool()
    t.call({"command": "create", "path": "/memories/a.md", "file_text": "x"})
    again = t.call({"command": "create", "path": "/memories/a.md", "file_text": "y"})
    assert again == ToolText("File /memories/a.md already exists", is_error=True)


def test_a_view_range_past_the_end_is_clamped_as_the_reference_does() -> None:
    t = tool()
    t.call({"command": "create", "path": "/memories/a.md", "file_text": "1\n2"})
    view = t.call({"command": "view", "path": "/memories/a.md", "view_range": [2, 99]})
    assert view.text.endswith("     2\t2")
    assert not view.is_error


def test_str_replace_messages() -> None:
    t = tool()
    t.call({"command": "create", "path": "/memories/a.md", "file_text": "x\ny\nx\n"})
    missing = t.call({"command": "str_replace", "path": "/memories/a.md", "old_str": "zz", "new_str": "q"})
    assert (
        missing.text
        == "No replacement was performed, old_str `zz` did not appear verbatim in /memories/a.md."
    )
    many = t.call({"command": "str_replace", "path": "/memories/a.md", "old_str": "x", "new_str": "q"})
    assert many.text == (
        "No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 3. "
        "Please ensure it is unique"
    )
    done = t.call({"command": "str_replace", "path": "/memories/a.md", "old_str": "y", "new_str": "Y"})
    assert done.text.startswith("The memory file has been edited. Here is the snippet showing the change")
    assert "     2\tY" in done.text


def test_insert_delete_and_rename_messages() -> None:
    t = tool()
    t.call({"command": "create", "path": "/memories/a.md", "file_text": "1\n2\n"})
    bad = t.call({"command": "insert", "path": "/memories/a.md", "insert_line": 7, "insert_text": "x"})
    assert bad.text == "Invalid `insert_line` parameter: 7. It should be within the range [0, 2]."
    ok = t.call({"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "x\n"})
    assert ok.text == "The file /memories/a.md has been edited."
    assert (
        t.call({"command": "delete", "path": "/memories"}).text
        == "Cannot delete the /memories directory itself"
    )
    assert (
        t.call({"command": "delete", "path": "/memories/none.md"}).text
        == "The path /memories/none.md does not exist"
    )
    t.call({"command": "create", "path": "/memories/b.md", "file_text": "b"})
    clash = t.call({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"})
    assert clash.text == "The destination /memories/b.md already exists"
    moved = t.call({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/c.md"})
    assert moved.text == "Successfully renamed /memories/a.md to /memories/c.md"
    assert (
        t.call({"command": "delete", "path": "/memories/c.md"}).text == "Successfully deleted /memories/c.md"
    )


def test_directory_listing_and_path_errors() -> None:
    t = tool()
    t.call({"command": "create", "path": "/memories/d/x.md", "file_text": "hello"})
    listing = t.call({"command": "view", "path": "/memories"}).text
    assert listing.splitlines() == [
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:",
        "5B\t/memories",
        "5B\t/memories/d/",
        "5B\t/memories/d/x.md",
    ]
    assert (
        t.call({"command": "view", "path": "/etc/passwd"}).text
        == "Path must start with /memories, got: /etc/passwd"
    )
    escape = t.call({"command": "view", "path": "/memories/../etc"})
    assert escape == ToolText("Path /memories/../etc would escape /memories directory", is_error=True)
    assert t.call({"command": "fly"}).text == "Unknown command: fly"
    assert (
        t.call({"command": "create", "path": "/memories/a.md"}).text
        == "Parameter `file_text` is required for command: create"
    )
