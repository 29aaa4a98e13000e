"""Run the same tool inputs through the SDK's reference memory tool and through waybook's.

`seen(tool, input)` is what the model reads after the SDK's tool runner has run the call: the result text,
or the error content the runner renders (a `ToolError`'s content; `repr` of any other exception).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anthropic.lib.tools import ToolError
from anthropic.lib.tools._tool_dispatch import tool_error_content
from anthropic.tools import BetaLocalFilesystemMemoryTool

from waybook.integrations.anthropic_memory import WaybookMemoryTool
from waybook.journal import InMemoryJournal
from waybook.memory import Limits, Memory

Seen = tuple[str, str]


def seen(tool: Any, tool_input: Any, *, strict: bool = False) -> Seen:
    try:
        return ("ok", tool.call(tool_input))
    except ToolError as error:
        return ("error", str(tool_error_content(error)))
    except Exception as error:
        if strict:  # waybook's tool must never raise anything but ToolError
            raise
        return ("error", str(tool_error_content(error)))


def waybook_tool(limits: Limits | None = None) -> WaybookMemoryTool:
    memory = Memory(InMemoryJournal(), scope="claude", **({"limits": limits} if limits else {}))
    return WaybookMemoryTool(memory)


class Pair:
    """The reference (a directory under `base`) and waybook's tool, fed the same inputs."""

    def __init__(self, base: Path) -> None:
        self.reference = BetaLocalFilesystemMemoryTool(str(base))
        self.root = base / "memories"
        self.ours = waybook_tool()

    def both(self, tool_input: Any) -> tuple[Seen, Seen]:
        return seen(self.reference, tool_input), seen(self.ours, tool_input, strict=True)

    def same(self, tool_input: Any) -> Seen:
        reference, ours = self.both(tool_input)
        assert ours == reference, f"{tool_input!r}:\n ours      {ours!r}\n reference {reference!r}"
        return ours

    def reference_files(self) -> dict[str, str]:
        return {
            "/memories/" + p.relative_to(self.root).as_posix(): p.read_bytes().decode()
            for p in sorted(self.root.rglob("*"))
            if p.is_file()
        }

    def reference_directories(self) -> list[str]:
        return sorted(
            "/memories/" + p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_dir()
        )

    def our_directories(self) -> list[str]:
        return sorted(self.ours.memory.state().kept)

    def our_files(self) -> dict[str, str]:
        return {path: file.text for path, file in sorted(self.ours.memory.state().files.items())}
