"""The Memory port conformance kit. Every memory adapter passes it unchanged.

Subclass `MemoryPortConformance` in a pytest module named `test_*.py` and define `make_memory`:

    class TestMyStore(MemoryPortConformance):
        def make_memory(self, *, scope: str = "agent", limits: Limits = DEFAULT_LIMITS) -> Memory:
            return Memory(MyJournal(...), scope=scope, limits=limits)

Each test is one behaviour of the port, named for it.
"""

from __future__ import annotations

from typing import Any

from waybook.memory.working import DEFAULT_LIMITS, DirectoryView, FileView, Limits, Memory, Result


class MemoryPortConformance:
    def make_memory(self, *, scope: str = "agent", limits: Limits = DEFAULT_LIMITS) -> Memory:
        raise NotImplementedError

    # --- helpers -----------------------------------------------------------------------------------

    @staticmethod
    def run(memory: Memory, command: str, **fields: Any) -> Result:
        return memory.execute({"command": command, **fields})

    def ok(self, memory: Memory, command: str, **fields: Any) -> Result:
        result = self.run(memory, command, **fields)
        assert result.ok, result.error
        return result

    def code(self, memory: Memory, command: str, **fields: Any) -> str:
        result = self.run(memory, command, **fields)
        assert not result.ok, f"{command} {fields} should fail"
        assert result.error is not None
        return result.error.code

    def files(self, memory: Memory) -> dict[str, str]:
        return {path: f.text for path, f in memory.state().files.items()}

    # --- views -------------------------------------------------------------------------------------

    def test_the_empty_root_view_lists_nothing(self) -> None:
        memory = self.make_memory()
        result = self.ok(memory, "view", path="/memories")
        assert result.value == DirectoryView("/memories", ())
        assert result.receipt is None

    def test_create_overwrite_and_a_range_to_the_end(self) -> None:
        memory = self.make_memory()
        created = self.ok(memory, "create", path="/memories/a.md", text="one")
        assert created.value.overwritten is False  # type: ignore[union-attr]
        overwritten = self.ok(memory, "create", path="/memories/a.md", text="1\n2\n3")
        assert overwritten.value.overwritten is True  # type: ignore[union-attr]
        view = self.ok(memory, "view", path="/memories/a.md", view_range=[2, -1]).value
        assert isinstance(view, FileView)
        assert (view.lines.start, view.lines.end, view.lines.total) == (2, 3, 3)
        assert view.text == "2\n3"

    def test_a_directory_view_lists_immediate_entries_sorted_by_name(self) -> None:
        memory = self.make_memory()
        for path in ("/memories/b.md", "/memories/a/x.md", "/memories/a/deep/y.md", "/memories/c.txt"):
            self.ok(memory, "create", path=path, text="x")
        view = self.ok(memory, "view", path="/memories").value
        assert isinstance(view, DirectoryView)
        assert [(e.name, e.path, e.kind) for e in view.entries] == [
            ("a", "/memories/a", "directory"),
            ("b.md", "/memories/b.md", "file"),
            ("c.txt", "/memories/c.txt", "file"),
        ]
        inner = self.ok(memory, "view", path="/memories/a").value
        assert [e.name for e in inner.entries] == ["deep", "x.md"]  # type: ignore[union-attr]

    def test_a_missing_path_is_not_found(self) -> None:
        memory = self.make_memory()
        assert self.code(memory, "view", path="/memories/none.md") == "NOT_FOUND"
        assert self.code(memory, "delete", path="/memories/none.md") == "NOT_FOUND"

    # --- str_replace -------------------------------------------------------------------------------

    def test_str_replace_replaces_exactly_one_occurrence(self) -> None:
        memory = self.make_memory()
        self.ok(memory, "create", path="/memories/a.md", text="cat dog cat bird")
        assert (
            self.code(memory, "str_replace", path="/memories/a.md", old_text="fish", new_text="x")
            == "MATCH_NOT_FOUND"
        )
        assert (
            self.code(memory, "str_replace", path="/memories/a.md", old_text="cat", new_text="x")
            == "MATCH_NOT_UNIQUE"
        )
        assert (
            self.code(memory, "str_replace", path="/memories/a.md", old_text="", new_text="x")
            == "INVALID_ARGUMENT"
        )
        self.ok(memory, "str_replace", path="/memories/a.md", old_text="dog", new_text="fox")
        assert self.files(memory) == {"/memories/a.md": "cat fox cat bird"}

    # --- line endings ------------------------------------------------------------------------------

    def test_line_endings_are_kept_and_lines_are_logical(self) -> None:
        memory = self.make_memory()
        self.ok(memory, "create", path="/memories/e.txt", text="a\r\nc\rd\r\n")
        full = self.ok(memory, "view", path="/memories/e.txt").value
        assert full.text == "a\r\nc\rd\r\n"  # type: ignore[union-attr]
        assert full.lines.total == 3  # type: ignore[union-attr]
        second = self.ok(memory, "view", path="/memories/e.txt", view_range=[2, 2]).value
        assert second.text == "c"  # type: ignore[union-attr]
        self.ok(memory, "str_replace", path="/memories/e.txt", old_text="c", new_text="C")
        assert self.files(memory)["/memories/e.txt"] == "a\r\nC\rd\r\n"

    def test_insert_uses_zero_based_slots_and_rewrites_with_newlines(self) -> None:
        memory = self.make_memory()
        self.ok(memory, "create", path="/memories/e.txt", text="a\r\nc\rd\r\n")
        self.ok(memory, "insert", path="/memories/e.txt", insert_line=2, text="b")
        assert self.files(memory)["/memories/e.txt"] == "a\nc\nb\nd\n"
        assert self.code(memory, "insert", path="/memories/e.txt", insert_line=5, text="x") == "INVALID_RANGE"
        self.ok(memory, "insert", path="/memories/e.txt", insert_line=0, text="top")
        assert self.files(memory)["/memories/e.txt"].startswith("top\na\n")

    def test_ranges_outside_the_file_are_invalid(self) -> None:
        memory = self.make_memory()
        self.ok(memory, "create", path="/memories/two.md", text="1\n2\n")
        for bad in ([0, 1], [1, 3], [2, 1], [3, -1]):
            assert self.code(memory, "view", path="/memories/two.md", view_range=bad) == "INVALID_RANGE", bad

    # --- delete and rename -------------------------------------------------------------------------

    def test_a_directory_is_deleted_recursively_and_the_root_is_protected(self) -> None:
        memory = self.make_memory()
        self.ok(memory, "create", path="/memories/d/one.md", text="1")
        self.ok(memory, "create", path="/memories/d/sub/two.md", text="22")
        self.ok(memory, "create", path="/memories/keep.md", text="k")
        deleted = self.ok(memory, "delete", path="/memories/d").value
        assert (deleted.kind, deleted.deleted_files, deleted.freed_bytes) == ("directory", 2, 3)  # type: ignore[union-attr]
        assert self.files(memory) == {"/memories/keep.md": "k"}
        for command, fields in (
            ("delete", {"path": "/memories"}),
            ("create", {"path": "/memories", "text": "x"}),
            ("rename", {"old_path": "/memories", "new_path": "/memories/x"}),
        ):
            assert self.code(memory, command, **fields) == "ROOT_PROTECTED"

    def test_rename_never_replaces_a_destination(self) -> None:
        memory = self.make_memory()
        self.ok(memory, "create", path="/memories/a.md", text="a")
        self.ok(memory, "create", path="/memories/b.md", text="b")
        assert (
            self.code(memory, "rename", old_path="/memories/a.md", new_path="/memories/b.md")
            == "ALREADY_EXISTS"
        )
        moved = self.ok(memory, "rename", old_path="/memories/a.md", new_path="/memories/dir/c.md").value
        assert (moved.kind, moved.moved_files) == ("file", 1)  # type: ignore[union-attr]
        self.ok(memory, "rename", old_path="/memories/dir", new_path="/memories/other")
        assert self.files(memory) == {"/memories/b.md": "b", "/memories/other/c.md": "a"}

    def test_a_rename_whose_moved_paths_would_be_too_long_fails_atomically(self) -> None:
        memory = self.make_memory()
        long_name = "n" * 120 + ".md"
        self.ok(memory, "create", path=f"/memories/d/{long_name}", text="x")
        self.ok(memory, "create", path="/memories/d/short.md", text="y")
        deep = "/memories/" + "/".join(
            ["s" * 100] * 9
        )  # 918 bytes: valid, but not with the long name under it
        assert len(deep) + len("/short.md") <= 1024 < len(deep) + 1 + len(long_name)
        assert self.code(memory, "rename", old_path="/memories/d", new_path=deep) == "INVALID_PATH"
        assert set(self.files(memory)) == {f"/memories/d/{long_name}", "/memories/d/short.md"}

    # --- paths -------------------------------------------------------------------------------------

    def test_unsafe_paths_and_extensions_are_refused(self) -> None:
        memory = self.make_memory()
        for path in (
            "/etc/passwd",
            "/memories/../x.md",
            "/memories/a/../../x.md",
            "/memories/%2e%2e/x.md",
            "/memories\\x.md",
            "/memories/a\\b.md",
            "/memories/a\x00.md",
            "/memories/a\n/x.md",  # a newline before a slash: a `$`-anchored pattern would let it through
            "/memories/d\n",
            "/memories//x.md",
            "/memories/./x.md",
            "/memories/a b.md",
            "/memories/cafe\u0301.md",  # not NFC
            "memories/x.md",
            "/memories/" + "x" * 129 + ".md",
            "/memories/" + "/".join(["d" * 100] * 11) + ".md",
        ):
            assert self.code(memory, "create", path=path, text="x") == "INVALID_PATH", path
        assert self.code(memory, "create", path="/memories/x.exe", text="x") == "INVALID_EXTENSION"
        assert self.code(memory, "create", path="/memories/noext", text="x") == "INVALID_EXTENSION"
        assert self.files(memory) == {}
        allowed = ("/memories/.hidden.md", "/memories/_a.md", "/memories/café.md", "/memories/a/-b_.md")
        for path in allowed:  # letters of any script, digits, '.', '_' and '-' anywhere
            assert self.run(memory, "create", path=path, text="x").ok, path

    def test_a_file_where_a_directory_is_needed_is_a_path_conflict(self) -> None:
        memory = self.make_memory()
        self.ok(memory, "create", path="/memories/a.md", text="x")
        self.ok(memory, "create", path="/memories/dir/b.md", text="y")
        assert self.code(memory, "create", path="/memories/a.md/c.md", text="z") == "PATH_CONFLICT"
        assert self.code(memory, "create", path="/memories/dir", text="z") == "INVALID_EXTENSION"
        assert (
            self.code(memory, "str_replace", path="/memories/dir", old_text="y", new_text="z")
            == "PATH_CONFLICT"
        )
        assert self.code(memory, "insert", path="/memories/dir", insert_line=0, text="z") == "PATH_CONFLICT"

    # --- limits and eviction -----------------------------------------------------------------------

    def test_the_least_recently_written_file_is_evicted(self) -> None:
        memory = self.make_memory(limits=Limits(max_files=2))
        self.ok(memory, "create", path="/memories/a.md", text="a")
        self.ok(memory, "create", path="/memories/b.md", text="b")
        self.ok(memory, "view", path="/memories/a.md")  # a view does not change write order
        third = self.ok(memory, "create", path="/memories/c.md", text="c").value
        assert third.evicted == ("/memories/a.md",)  # type: ignore[union-attr]
        self.ok(memory, "create", path="/memories/b.md", text="b2")  # an overwrite refreshes b
        fourth = self.ok(memory, "create", path="/memories/d.md", text="d").value
        assert fourth.evicted == ("/memories/c.md",)  # type: ignore[union-attr]
        self.ok(memory, "rename", old_path="/memories/b.md", new_path="/memories/e.md")  # keeps order
        fifth = self.ok(memory, "create", path="/memories/f.md", text="f").value
        assert fifth.evicted == ("/memories/e.md",)  # type: ignore[union-attr]
        assert set(self.files(memory)) == {"/memories/d.md", "/memories/f.md"}

    def test_total_bytes_evict_the_earliest_written_until_the_write_fits(self) -> None:
        memory = self.make_memory(limits=Limits(max_total_bytes=10))
        self.ok(memory, "create", path="/memories/a.md", text="aaaa")
        self.ok(memory, "create", path="/memories/b.md", text="bbbb")
        result = self.ok(memory, "create", path="/memories/c.md", text="cccccc").value
        assert result.evicted == ("/memories/a.md",)  # type: ignore[union-attr]
        assert memory.state().total_bytes == 10

    def test_a_write_that_cannot_fit_changes_nothing(self) -> None:
        memory = self.make_memory(limits=Limits(max_file_bytes=8, max_total_bytes=8))
        self.ok(memory, "create", path="/memories/a.md", text="old")
        before = memory.state().seq
        assert self.code(memory, "create", path="/memories/a.md", text="x" * 9) == "LIMIT_EXCEEDED"
        assert (
            self.code(memory, "str_replace", path="/memories/a.md", old_text="old", new_text="y" * 9)
            == "LIMIT_EXCEEDED"
        )
        assert self.files(memory) == {"/memories/a.md": "old"}
        assert memory.state().seq == before

    def test_sizes_are_utf8_bytes(self) -> None:
        memory = self.make_memory(limits=Limits(max_file_bytes=4))
        created = self.ok(memory, "create", path="/memories/p.md", text="££").value
        assert created.byte_length == 4  # type: ignore[union-attr]
        assert self.code(memory, "create", path="/memories/q.md", text="£££") == "LIMIT_EXCEEDED"
        assert self.code(memory, "create", path="/memories/r.md", text="\ud800") == "INVALID_ARGUMENT"

    # --- isolation and commands --------------------------------------------------------------------

    def test_scopes_are_isolated(self) -> None:
        one = self.make_memory(scope="agent-1")
        two = self.make_memory(scope="agent-2")
        self.ok(one, "create", path="/memories/secret.md", text="mine")
        assert self.code(two, "view", path="/memories/secret.md") == "NOT_FOUND"
        assert self.files(two) == {}

    def test_invalid_commands_and_arguments_are_typed_failures(self) -> None:
        memory = self.make_memory()
        assert memory.execute({"command": "format_disk"}).error.code == "INVALID_COMMAND"  # type: ignore[union-attr]
        assert memory.execute({"path": "/memories"}).error.code == "INVALID_COMMAND"  # type: ignore[union-attr]
        assert memory.execute("view /memories").error.code == "INVALID_COMMAND"  # type: ignore[arg-type, union-attr]
        for fields in (
            {"command": "create", "path": "/memories/a.md"},
            {"command": "create", "path": "/memories/a.md", "text": 5},
            {"command": "view", "path": "/memories", "view_range": [1]},
            {"command": "view", "path": "/memories", "view_range": ["1", "2"]},
            {"command": "insert", "path": "/memories/a.md", "insert_line": True, "text": "x"},
            {"command": "delete", "path": "/memories/a.md", "recursive": True},
        ):
            result = memory.execute(fields)
            assert result.error is not None, fields
            assert result.error.code == "INVALID_ARGUMENT", fields

    def test_every_write_returns_a_receipt_with_the_tool_call(self) -> None:
        memory = self.make_memory()
        result = memory.execute(
            {"command": "create", "path": "/memories/a.md", "text": "x"}, call_id="toolu_9"
        )
        assert result.receipt is not None
        assert result.receipt.call_id == "toolu_9"
        assert result.receipt.seq == memory.state().seq
        assert len(result.receipt.digest) == 64
