"""An adapter for Anthropic's memory tool (`memory_20250818`): its input in, its reference texts out.

`AnthropicMemoryTool(memory).call(tool_input)` takes the tool's input (`command`, `path`, `view_range`,
`file_text`, `old_str`, `new_str`, `insert_line`, `insert_text`, `old_path`, `new_path`) and returns
`ToolText(text, is_error)` with the plain text Anthropic's reference implementation returns. Where the
two contracts differ (create on an existing file, views out of range, ...) the adapter follows the
reference; docs/memory.md lists every difference. Writes still go through the port, so each one is a
journal record with a receipt (`ToolText.receipt`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from waybook.memory.paths import ROOT, PathError, normalize
from waybook.memory.port import Memory
from waybook.memory.results import Receipt, Result

LINE_NUMBER_WIDTH: Final = 6
MAX_LINES: Final = 999_999


@attrs.frozen
class ToolText:
    text: str
    is_error: bool = False
    receipt: Receipt | None = None


def _error(text: str) -> ToolText:
    return ToolText(text, is_error=True)


class AnthropicMemoryTool:
    """Serve Anthropic's memory tool from a waybook Memory port."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def call(self, tool_input: Mapping[str, Any], *, call_id: str | None = None) -> ToolText:
        command = tool_input.get("command")
        handler = {
            "view": self._view,
            "create": self._create,
            "str_replace": self._str_replace,
            "insert": self._insert,
            "delete": self._delete,
            "rename": self._rename,
        }.get(command if isinstance(command, str) else "")
        if handler is None:
            return _error(f"Unknown command: {command}")
        try:
            return handler(tool_input, call_id)
        except KeyError as missing:
            return _error(f"Parameter `{missing.args[0]}` is required for command: {command}")

    # --- commands --------------------------------------------------------------------------------

    def _view(self, data: Mapping[str, Any], call_id: str | None) -> ToolText:
        path = data["path"]
        problem = self._path_problem(path)
        if problem is not None:
            return problem
        state = self._memory.state()
        canonical = normalize(path)
        if state.is_directory(canonical):
            return ToolText(self._listing(path, canonical))
        if not state.is_file(canonical):
            return _error(f"The path {path} does not exist. Please provide a valid path.")
        lines = state.files[canonical].text.split("\n")
        if len(lines) > MAX_LINES:
            return _error(f"File {path} exceeds maximum line limit of 999,999 lines.")
        start_number = 1
        view_range = data.get("view_range")
        if view_range and len(view_range) == 2:
            start = max(1, int(view_range[0])) - 1
            end = len(lines) if view_range[1] == -1 else int(view_range[1])
            lines = lines[start:end]
            start_number = start + 1
        numbered = [
            f"{str(i + start_number).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines)
        ]
        return ToolText(f"Here's the content of {path} with line numbers:\n" + "\n".join(numbered))

    def _create(self, data: Mapping[str, Any], call_id: str | None) -> ToolText:
        path, text = data["path"], data["file_text"]
        problem = self._path_problem(path)
        if problem is not None:
            return problem
        if self._memory.state().is_file(normalize(path)):
            return _error(f"File {path} already exists")
        result = self._memory.execute({"command": "create", "path": path, "text": text}, call_id=call_id)
        return self._written(result, f"File created successfully at: {path}")

    def _str_replace(self, data: Mapping[str, Any], call_id: str | None) -> ToolText:
        path, old, new = data["path"], data["old_str"], data.get("new_str") or ""
        problem = self._existing_file(path)
        if problem is not None:
            return problem
        content = self._memory.state().files[normalize(path)].text
        count = content.count(old) if old else 0
        if count == 0:
            return _error(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")
        if count > 1:
            lines, start = [], 0
            while (pos := content.find(old, start)) != -1:
                lines.append(content[:pos].count("\n") + 1)
                start = pos + 1
            return _error(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
                f"{', '.join(map(str, lines))}. Please ensure it is unique"
            )
        result = self._memory.execute(
            {"command": "str_replace", "path": path, "old_text": old, "new_text": new}, call_id=call_id
        )
        if not result.ok:
            return self._failure(result)
        changed = content[: content.find(old)].count("\n")
        new_lines = self._memory.state().files[normalize(path)].text.split("\n")
        first, last = max(0, changed - 2), min(len(new_lines), changed + 3)
        snippet = [
            f"{str(n).rjust(LINE_NUMBER_WIDTH)}\t{new_lines[n - 1]}" for n in range(first + 1, last + 1)
        ]
        text = (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        )
        return ToolText(text + "\n".join(snippet), receipt=result.receipt)

    def _insert(self, data: Mapping[str, Any], call_id: str | None) -> ToolText:
        path, line, text = data["path"], data["insert_line"], data["insert_text"]
        problem = self._existing_file(path)
        if problem is not None:
            return problem
        lines = self._memory.state().files[normalize(path)].text.splitlines()
        if not isinstance(line, int) or line < 0 or line > len(lines):
            return _error(
                f"Invalid `insert_line` parameter: {line}. It should be within the range [0, {len(lines)}]."
            )
        result = self._memory.execute(
            {"command": "insert", "path": path, "insert_line": line, "text": text.rstrip("\n")},
            call_id=call_id,
        )
        return self._written(result, f"The file {path} has been edited.")

    def _delete(self, data: Mapping[str, Any], call_id: str | None) -> ToolText:
        path = data["path"]
        problem = self._path_problem(path)
        if problem is not None:
            return problem
        if normalize(path) == ROOT:
            return _error("Cannot delete the /memories directory itself")
        result = self._memory.execute({"command": "delete", "path": path}, call_id=call_id)
        if not result.ok and result.error is not None and result.error.code == "NOT_FOUND":
            return _error(f"The path {path} does not exist")
        return self._written(result, f"Successfully deleted {path}")

    def _rename(self, data: Mapping[str, Any], call_id: str | None) -> ToolText:
        old, new = data["old_path"], data["new_path"]
        for path in (old, new):
            problem = self._path_problem(path)
            if problem is not None:
                return problem
        result = self._memory.execute(
            {"command": "rename", "old_path": old, "new_path": new}, call_id=call_id
        )
        if not result.ok and result.error is not None:
            if result.error.code == "ALREADY_EXISTS":
                return _error(f"The destination {new} already exists")
            if result.error.code == "NOT_FOUND":
                return _error(f"The path {old} does not exist")
        return self._written(result, f"Successfully renamed {old} to {new}")

    # --- helpers ---------------------------------------------------------------------------------

    def _path_problem(self, path: Any) -> ToolText | None:
        if not isinstance(path, str) or not path.startswith(ROOT):
            return _error(f"Path must start with /memories, got: {path}")
        try:
            normalize(path)
        except PathError:
            return _error(f"Path {path} would escape /memories directory")
        return None

    def _existing_file(self, path: Any) -> ToolText | None:
        problem = self._path_problem(path)
        if problem is not None:
            return problem
        state = self._memory.state()
        canonical = normalize(path)
        if state.is_directory(canonical):
            return _error(f"The path {path} is not a file.")
        if not state.is_file(canonical):
            return _error(f"The path {path} does not exist. Please provide a valid path.")
        return None

    def _listing(self, shown: str, directory: str) -> str:
        state = self._memory.state()
        prefix = directory + "/" if directory != ROOT else ROOT + "/"
        rows: dict[str, int] = {}
        for file in state.files_under(directory):
            relative = file.path[len(prefix) :].split("/")
            for depth in range(1, min(len(relative), 2) + 1):
                is_file = depth == len(relative)
                key = "/".join(relative[:depth]) + ("" if is_file else "/")
                rows[key] = rows.get(key, 0) + file.size
        base = shown.rstrip("/") if shown != "/" else shown
        total = sum(f.size for f in state.files_under(directory))
        header = f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
        lines = [f"{_size(total)}\t{shown}"] + [
            f"{_size(size)}\t{base}/{key}" for key, size in sorted(rows.items())
        ]
        return f"{header}\n" + "\n".join(lines)

    def _written(self, result: Result, success: str) -> ToolText:
        if result.ok:
            return ToolText(success, receipt=result.receipt)
        return self._failure(result)

    @staticmethod
    def _failure(result: Result) -> ToolText:
        assert result.error is not None
        return _error(f"Error: {result.error.message}")


def _size(size: int) -> str:
    """Sizes as the reference prints them: 0B, 512B, 1.5K, 2M."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    index = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / (1024**index)
    return f"{int(value)}{units[index]}" if value == int(value) else f"{value:.1f}{units[index]}"
