"""Pydantic AI's message history on any waybook store (docs/pydantic-ai.md).

One journal per conversation id; each `ModelMessage` is a tree node (a request becomes a user, system or
tool-result node, a response an assistant node; text, thinking and tool-call parts become waybook blocks,
and the message's own JSON, as `ModelMessagesTypeAdapter` writes it, is kept verbatim beside them, so
every part comes back exactly, known or not). One line around a run:

    result = WaybookMessageHistory(store, "chat-1").run_sync(agent, "What's the weather?")

loads the history, runs the agent with it, and appends the run's new messages at the head the history was
read at: if another writer appended meanwhile, `StaleHistoryError` and nothing is written (the run saw a
history that is no longer the conversation). `undo_run` moves the leaf back before the last run and
`clear` appends a reset; nothing is erased. A message whose content `waybook erase` took comes back as
the placeholder naming the erasure, in the part its kind was (`_erased`), every tool call still answered.
Pydantic AI is imported lazily: install `waybook[pydantic-ai]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from waybook._masking import Redact, secret_mask
from waybook.integrations._extras import needs_extra
from waybook.integrations._history import (
    Thread,
    Threads,
    arguments,
    cleared,
    extended,
    in_worker,
    message_of,
    node,
    result_text,
    truncated,
)
from waybook.model import (
    ERASED_TOOL_NAME,
    AssistantMessage,
    Block,
    CustomEntry,
    NodeBody,
    Record,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
)
from waybook.projections import Provider, ProviderContext
from waybook.stores import JournalStore

with needs_extra(
    "waybook.integrations.pydantic_ai", runtime="Pydantic AI", extra="pydantic-ai", modules=("pydantic_ai",)
):
    from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

if TYPE_CHECKING:
    from pydantic_ai.agent import AbstractAgent
    from pydantic_ai.run import AgentRunResult

RUNTIME: Final = "pydantic-ai"
NAMESPACE: Final = "pydantic_ai"


def _decode(body: Any) -> Any:
    return message_of(NAMESPACE, body)


def _node(message: dict[str, Any]) -> NodeBody:
    """The node recording one message (its JSON): typed parts as blocks, the JSON verbatim beside them."""
    parts = [part for part in message.get("parts") or [] if isinstance(part, dict)]
    kinds = [part.get("part_kind") for part in parts]
    blocks: list[Block] = []
    if message.get("kind") == "response":
        for part in parts:
            kind = part.get("part_kind")
            if kind == "text" and isinstance(part.get("content"), str):
                blocks.append(TextBlock(text=part["content"]))
            elif kind == "thinking" and isinstance(part.get("content"), str):
                blocks.append(ThinkingBlock(thinking=part["content"], signature=part.get("signature")))
            elif kind == "tool-call" and isinstance(part.get("tool_call_id"), str):
                call = ToolCallBlock(
                    part["tool_call_id"], str(part["tool_name"]), arguments(part.get("args"))
                )
                blocks.append(call)
        return node(NAMESPACE, "assistant", message, blocks)
    if kinds == ["tool-return"] and isinstance(parts[0].get("tool_call_id"), str):
        part = parts[0]
        content = (TextBlock(text=result_text(part.get("content"))),)
        return node(
            NAMESPACE, "tool", message, content, call_id=part["tool_call_id"], tool_name=part.get("tool_name")
        )
    if kinds and all(kind == "system-prompt" for kind in kinds):
        return node(
            NAMESPACE, "system", message, [TextBlock(text=result_text(p.get("content"))) for p in parts]
        )
    for part in parts:
        if part.get("part_kind") == "user-prompt":
            prompt = part.get("content")
            texts: list[Any] = (
                [prompt] if isinstance(prompt, str) else prompt if isinstance(prompt, list) else []
            )
            blocks.extend(TextBlock(text=item) for item in texts if isinstance(item, str))
    return node(NAMESPACE, "user", message, blocks)


def _erased(record: Record, before: Any, after: Any) -> dict[str, Any] | None:
    """The message shown for an erased record (as `placeholder_records` shows it): the placeholder as a
    tool return for the same call, a response giving back the calls the returns after it answer, a system
    prompt, or a user prompt (for a request stored whole right after a response with calls: the returns
    for them), each stamped with the record's time. So every tool call of the history is answered."""
    body = record.body
    shown = next((b.text for b in getattr(body, "content", ()) if isinstance(b, TextBlock)), "")
    at = record.at
    if isinstance(body, ToolResult):
        name = body.tool_name or ERASED_TOOL_NAME
        return _request([_return(body.call_id, name, shown, at)])
    if isinstance(body, AssistantMessage):
        calls = [(call.call_id, call.name) for call in body.tool_calls]
        for part in _parts(after, "tool-return"):  # a request of several returns, stored whole
            if isinstance(part.get("tool_call_id"), str) and all(part["tool_call_id"] != c for c, _ in calls):
                calls.append((part["tool_call_id"], str(part.get("tool_name") or ERASED_TOOL_NAME)))
        uses = [
            {"part_kind": "tool-call", "tool_name": name, "args": {}, "tool_call_id": call}
            for call, name in calls
        ]
        return {
            "kind": "response",
            "parts": [{"part_kind": "text", "content": shown}, *uses],
            "timestamp": at,
        }
    if isinstance(body, SystemMessage):
        return _request([{"part_kind": "system-prompt", "content": shown, "timestamp": at}])
    if isinstance(body, CustomEntry) and body.type != f"{NAMESPACE}.message":
        return None  # not a message of this runtime
    made = [p for p in _parts(before, "tool-call") if isinstance(p.get("tool_call_id"), str)]
    if made and isinstance(before, dict) and before.get("kind") == "response":
        return _request([_return(p["tool_call_id"], str(p.get("tool_name")), shown, at) for p in made])
    return _request([{"part_kind": "user-prompt", "content": shown, "timestamp": at}])


def _parts(message: Any, kind: str) -> list[dict[str, Any]]:
    parts = message.get("parts") if isinstance(message, dict) else None
    return [p for p in parts or [] if isinstance(p, dict) and p.get("part_kind") == kind]


def _return(call_id: str, tool_name: str, shown: str, at: str) -> dict[str, Any]:
    return {
        "part_kind": "tool-return",
        "tool_name": tool_name,
        "content": shown,
        "tool_call_id": call_id,
        "timestamp": at,
    }


def _request(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "request", "parts": parts}


def _dump(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    dumped: list[dict[str, Any]] = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    return dumped


class WaybookMessageHistory:
    """A Pydantic AI conversation kept in a waybook store: `WaybookMessageHistory(store, conversation_id)`.

    Histories with the same id on the same store are one conversation, across objects and processes.
    """

    def __init__(self, store: JournalStore, conversation_id: str, *, redact: Redact = False) -> None:
        """`redact` masks secrets before anything is stored: True with the built-in detector (the one
        `export --redact` uses), or a list of extra regular expressions to mask too (as `Session`'s;
        docs/erasure.md)."""
        mask = secret_mask(redact, who="WaybookMessageHistory")
        self.conversation_id = conversation_id
        self._threads = Threads(
            store,
            runtime=RUNTIME,
            prefix="pai",
            fields=("conversation_id",),
            decode=_decode,
            mask=mask,
            placeholder=_erased,
        )
        self._key = (conversation_id,)

    @property
    def store(self) -> JournalStore:
        return self._threads.store

    @property
    def journal_id(self) -> str | None:
        """The conversation's journal in the store (None before its first message)."""
        return self._threads.journal_id(self._key)

    def for_provider(self, provider: Provider) -> ProviderContext:
        """The conversation as `provider`'s request JSON, every repair reported (`for_provider`)."""
        return self._threads.for_provider(self._key, provider)

    def messages(self) -> list[ModelMessage]:
        """The conversation as committed now, ready for `message_history=`; `append` checks against it."""
        thread = self._threads.read(self._key)
        stored = thread.messages() if thread is not None else []
        validated: list[ModelMessage] = ModelMessagesTypeAdapter.validate_python(stored)
        return validated

    def append(self, messages: Sequence[ModelMessage]) -> None:
        """Append `messages` (a run's `new_messages()`) in one atomic batch, at the head `messages()` last
        read: StaleHistoryError if another writer appended since, and nothing is written."""
        if messages:
            dumped = _dump(messages)
            self._threads.write(self._key, lambda _: extended(dumped, _node), checked=True)

    def undo_run(self) -> list[ModelMessage]:
        """Take back the last run's messages (those sharing its `run_id`): the leaf moves back before them,
        and they stay in the journal on an abandoned branch. Returns them."""
        undone: list[Any] = []

        def plan(thread: Thread) -> list[Any]:
            stored = thread.messages()
            keep = len(stored) - 1 if stored else 0
            run_id = stored[-1].get("run_id") if stored else None
            while run_id is not None and keep > 0 and stored[keep - 1].get("run_id") == run_id:
                keep -= 1
            undone[:] = stored[keep:]
            return truncated(thread, keep, "pydantic-ai: undo_run")

        self._threads.write(self._key, plan, checked=True)
        validated: list[ModelMessage] = ModelMessagesTypeAdapter.validate_python(undone)
        return validated

    def clear(self) -> None:
        """Start the conversation over with a reset; every earlier message stays in the journal."""
        self._threads.write(self._key, lambda thread: cleared(thread, "pydantic-ai: clear"), checked=True)

    # --- one line around a run ----------------------------------------------------------------------

    def run_sync(
        self, agent: AbstractAgent[Any, Any], user_prompt: Any = None, **options: Any
    ) -> AgentRunResult[Any]:
        """`agent.run_sync(user_prompt, message_history=<this history>, **options)`, then append its new
        messages (StaleHistoryError if the conversation changed while the agent ran)."""
        result = agent.run_sync(user_prompt, message_history=self.messages(), **options)
        self.append(result.new_messages())
        return result

    async def run(
        self, agent: AbstractAgent[Any, Any], user_prompt: Any = None, **options: Any
    ) -> AgentRunResult[Any]:
        """The async `run_sync`: store reads and writes run off the event loop."""
        history = await in_worker(self.store, self.messages)
        result = await agent.run(user_prompt, message_history=history, **options)
        new = result.new_messages()
        await in_worker(self.store, lambda: self.append(new))
        return result


__all__ = ["WaybookMessageHistory"]
