"""Where `waybook watch` looks for sessions, and which files under a folder are sessions of which format.

The default folders are the agents' own, each only if it is there: Claude Code's projects folder
(`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`), Codex's sessions folder (`$CODEX_HOME/sessions`,
else `~/.codex/sessions`), Pi's (`$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`) and
OpenCode's storage (`$XDG_DATA_HOME/opencode/storage`, else `~/.local/share/opencode/storage`). Under a
folder, every `*.jsonl` file is a candidate; its format is read from its first lines (as `waybook import
auto` reads it). A Claude Code sub-agent's transcript (`agent-*.jsonl`, or any file in a `subagents`
folder) is followed with its session, not alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import attrs

from waybook.formats import detect_format

PEEK: Final = 64 << 10
"""A file whose first 64 KiB show no format is no session (the detection reads that much)."""


@attrs.frozen
class Root:
    """A folder (or one file) to watch, as given or found."""

    path: Path
    agent: str | None = None
    """The agent whose default folder it is (None for a folder named on the command line)."""


def default_roots(environ: os._Environ[str] | dict[str, str] | None = None) -> list[Root]:
    """The agents' own session folders that exist on this machine."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())

    def under(variable: str, default: Path, *parts: str) -> Path:
        base = env.get(variable)
        return (Path(base).expanduser() if base else default).joinpath(*parts)

    data = env.get("XDG_DATA_HOME")
    data_home = Path(data) if data and Path(data).is_absolute() else home / ".local" / "share"
    candidates = [
        Root(under("CLAUDE_CONFIG_DIR", home / ".claude", "projects"), "claude-code"),
        Root(under("CODEX_HOME", home / ".codex", "sessions"), "codex"),
        Root(under("PI_CODING_AGENT_DIR", home / ".pi" / "agent", "sessions"), "pi"),
        Root(data_home / "opencode" / "storage", "opencode"),
    ]
    return [root for root in candidates if root.path.is_dir()]


def is_subagent_file(path: Path, root: Path) -> bool:
    """A Claude Code sub-agent's transcript, followed with its session."""
    if path.name.startswith("agent-"):
        return True
    try:
        return "subagents" in path.relative_to(root).parts
    except ValueError:
        return False


def candidates(root: Path) -> Iterator[Path]:
    """Every `*.jsonl` file under `root` (or `root` itself, a file) that is not a sub-agent's, in path
    order; a link to a file outside the folder is left out (an import never follows one)."""
    if root.is_file():
        yield root
        return
    home = root.resolve()
    for path in sorted(root.rglob("*.jsonl")):
        if is_subagent_file(path, root):
            continue
        try:
            if not path.resolve().is_relative_to(home) or not path.is_file():
                continue
        except OSError:
            continue
        yield path


def format_of(path: Path) -> str | None:
    """`claude-code`, `codex` or `pi` for a session file; None when its first lines show none (yet)."""
    found = detect_format(path)
    return found if found in ("claude-code", "codex", "pi") else None
