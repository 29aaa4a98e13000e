"""Claude Code transcripts: import (a transcript, a session with its sub-agents, a folder of sessions),
and the context Claude Code would send for one."""

from waybook.formats.claude_code._context import (
    api_messages,
    replay_context,
)
from waybook.formats.claude_code._folder import (
    import_folder,
    import_session,
    sessions_in_folder,
    subagent_journal,
)
from waybook.formats.claude_code._subagents import Anchor, SubagentStart, subagent_anchor, subagent_start
from waybook.formats.claude_code._transcript import (
    ClaudeCodeImport,
    GrowingTranscript,
    import_claude_code,
    journal_id_for,
)

__all__ = [
    "Anchor",
    "api_messages",
    "ClaudeCodeImport",
    "GrowingTranscript",
    "import_claude_code",
    "import_folder",
    "import_session",
    "journal_id_for",
    "replay_context",
    "sessions_in_folder",
    "subagent_anchor",
    "subagent_journal",
    "subagent_start",
    "SubagentStart",
]
