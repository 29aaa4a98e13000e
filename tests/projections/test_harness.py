"""Issue 44: harness entries are a category every reader knows (`waybook.projections.harness_kind`).

On the shared spotter session, 1,371 of the nodes are Claude Code's own bookkeeping (progress lines, hook
summaries, snapshots, queue operations, system lines); the conversation is the rest.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.helpers.formats import journal_of
from tests.helpers.paths import SHARED_FIXTURES
from waybook.formats import import_claude_code
from waybook.model._records import (
    AssistantMessage,
    CustomEntry,
    ImageBlock,
    Node,
    TextBlock,
    UserMessage,
)
from waybook.projections import harness_counts, harness_kind, is_harness

SPOTTER = SHARED_FIXTURES / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def user(text: str) -> UserMessage:
    return UserMessage(parent=None, content=(TextBlock(text=text),))


@pytest.mark.skipif(not SPOTTER.is_file(), reason="shared/fixtures is not beside this checkout")
def test_the_spotter_session_holds_1371_harness_entries_and_its_conversation_is_the_rest() -> None:
    journal = journal_of(import_claude_code(SPOTTER.read_bytes()).records)
    bodies = [r.body for r in journal.read() if isinstance(r.body, Node)]
    counts = harness_counts(bodies)
    assert sum(counts.values()) == 1371
    assert counts["progress"] == 1333
    assert counts["hook"] == 3
    kept = Counter(type(b).__name__ for b in bodies if not is_harness(b))
    assert kept["AssistantMessage"] == 152
    assert kept["ToolResult"] == 186


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("<local-command-caveat>Caveat: do not respond.</local-command-caveat>", "command"),
        ("<command-name>/compact</command-name>\n<command-message>compact</command-message>", "command"),
        ("/clear", "command"),
        ("<environment_context>\n<cwd>/w</cwd>\n</environment_context>", "injected context"),
        ("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>...</INSTRUCTIONS>", "injected context"),
        ("please run /compact later", None),
        ("what does <command-name> mean in your transcripts?", None),
        ("[Request interrupted by user]", None),
    ],
)
def test_a_user_message_is_harness_only_when_the_harness_wrote_all_of_it(text: str, kind: str | None) -> None:
    assert harness_kind(user(text)) == kind


def test_custom_entries_are_harness_by_their_agent_and_type_and_in_context_ones_never() -> None:
    def custom(kind: str, *, in_context: bool = False) -> CustomEntry:
        return CustomEntry(parent=None, type=kind, data={}, in_context=in_context)

    assert harness_kind(custom("claude_code.progress")) == "progress"
    assert harness_kind(custom("claude_code.system.stop_hook_summary")) == "hook"
    assert harness_kind(custom("codex.event_msg.token_count")) == "event"
    assert harness_kind(custom("pi.model_change")) == "settings"
    assert harness_kind(custom("langgraph.checkpoint")) == "checkpoint"
    assert harness_kind(custom("pi.branch_summary", in_context=True)) is None
    assert harness_kind(custom("openai_agents.item")) is None  # a model item kept verbatim: conversation
    assert harness_kind(custom("pi.joined_line")) is None  # the user's data, kept: shown
    image = UserMessage(
        parent=None, content=(TextBlock(text="/clear"), ImageBlock(media_type="image/png", source="x"))
    )
    assert harness_kind(image) is None
    assert (
        harness_kind(
            AssistantMessage(parent=None, content=(TextBlock(text="/clear"),), stop_reason="end_turn")
        )
        is None
    )
