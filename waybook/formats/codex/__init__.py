"""The Codex CLI's sessions: a rollout file, or a folder of them (`~/.codex/sessions`), imported as
waybook records; and what Codex sends its model for one (`replay_history`, `context_items`)."""

from waybook.formats.codex._folder import import_folder, sessions_in_folder
from waybook.formats.codex._rollout import (
    CodexImport,
    GrowingRollout,
    context_items,
    import_codex,
    replay_history,
)

__all__ = [
    "CodexImport",
    "GrowingRollout",
    "context_items",
    "import_codex",
    "import_folder",
    "replay_history",
    "sessions_in_folder",
]
