"""Microsoft Agent Framework's `HistoryProvider` on any waybook store (docs/agent-framework.md).

agent-framework-core 1.x keeps a session's conversation in a history provider: a `ContextProvider`
whose `get_messages(session_id, state=...)` loads the history before a run and whose
`save_messages(session_id, messages, state=...)` stores the run's input and response messages after it
(the 0.x `ChatMessageStore` protocol is gone). `WaybookHistoryProvider` is one: one journal per session
id; each `Message` is a tree node (user, system, assistant or tool result, with text, reasoning and
function-call contents as waybook blocks, and the message's own `to_dict()` JSON kept verbatim beside
them, so every content comes back exactly, known or not).

Saving drops the messages the history already ends with, as the framework's own providers do
(`filter_new_messages`), and appends the rest at the head the history was loaded at: if another writer
saved to the session since this provider loaded it (a second process running the same session), the
save raises `StaleHistoryError` and writes nothing, instead of interleaving two runs. `clear` appends a
reset; nothing is erased. A message whose content `waybook erase` took comes back as the placeholder
naming the erasure, every function call still answered (`_erased`). The framework is imported lazily:
install `waybook[agent-framework]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final

from waybook._masking import Redact, secret_mask
from waybook.integrations._extras import needs_extra
from waybook.integrations._history import (
    Threads,
    arguments,
    cleared,
    extended,
    in_worker,
    message_of,
    node,
    result_text,
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
    "waybook.integrations.agent_framework",
    runtime="Microsoft Agent Framework",
    extra="agent-framework",
    modules=("agent_framework",),
):
    from agent_framework import HistoryProvider, Message
    from agent_framework._sessions import filter_new_messages

RUNTIME: Final = "agent-framework"
NAMESPACE: Final = "agent_framework"
DEFAULT_SESSION: Final = "default"
_ROLES: Final = {"user": "user", "system": "system", "assistant": "assistant"}


def _decode(body: Any) -> Any:
    return message_of(NAMESPACE, body)


def _node(message: dict[str, Any]) -> NodeBody:
    """The node recording one message (its JSON): typed contents as blocks, the JSON beside them."""
    contents = [content for content in message.get("contents") or [] if isinstance(content, dict)]
    role = message.get("role")
    if role == "tool" and len(contents) == 1 and contents[0].get("type") == "function_result":
        result = contents[0]
        if isinstance(result.get("call_id"), str):
            blocks = [TextBlock(text=result_text(result.get("result")))]
            return node(NAMESPACE, "tool", message, blocks, call_id=result["call_id"])
    found: list[Block] = []
    for content in contents:
        kind = content.get("type")
        if kind == "text" and isinstance(content.get("text"), str):
            found.append(TextBlock(text=content["text"]))
        elif kind == "text_reasoning" and isinstance(content.get("text"), str):
            found.append(ThinkingBlock(thinking=content["text"]))
        elif kind == "function_call" and isinstance(content.get("call_id"), str):
            name, args = str(content.get("name")), arguments(content.get("arguments"))
            found.append(ToolCallBlock(call_id=content["call_id"], name=name, arguments=args))
    return node(NAMESPACE, _ROLES.get(str(role)), message, found)  # type: ignore[arg-type]


def _erased(record: Record, before: Any, after: Any) -> dict[str, Any] | None:
    """The message shown for an erased record (as `placeholder_records` shows it): the placeholder as a
    tool message with a result for the same call, an assistant message giving back the calls the results
    after it answer, a system message, or a user message (for a message stored whole right after an
    assistant message with calls: a tool message answering them). So every function call is answered."""
    body = record.body
    shown = next((b.text for b in getattr(body, "content", ()) if isinstance(b, TextBlock)), "")
    text = {"type": "text", "text": shown}
    if isinstance(body, ToolResult):
        return _message("tool", [{"type": "function_result", "call_id": body.call_id, "result": shown}])
    if isinstance(body, AssistantMessage):
        calls = [(call.call_id, call.name) for call in body.tool_calls]
        for result in _contents(after, "function_result"):  # a tool message of several results
            if isinstance(result.get("call_id"), str) and all(result["call_id"] != c for c, _ in calls):
                calls.append((result["call_id"], ERASED_TOOL_NAME))
        uses = [{"type": "function_call", "call_id": c, "name": n, "arguments": {}} for c, n in calls]
        return _message("assistant", [text, *uses])
    if isinstance(body, SystemMessage):
        return _message("system", [text])
    if isinstance(body, CustomEntry) and body.type != f"{NAMESPACE}.message":
        return None  # not a message of this runtime
    made = [c["call_id"] for c in _contents(before, "function_call") if isinstance(c.get("call_id"), str)]
    if made and isinstance(before, dict) and before.get("role") == "assistant":
        return _message("tool", [{"type": "function_result", "call_id": c, "result": shown} for c in made])
    return _message("user", [text])


def _contents(message: Any, kind: str) -> list[dict[str, Any]]:
    contents = message.get("contents") if isinstance(message, dict) else None
    return [c for c in contents or [] if isinstance(c, dict) and c.get("type") == kind]


def _message(role: str, contents: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": role, "contents": contents}


class WaybookHistoryProvider(HistoryProvider):
    """An Agent Framework history provider on a waybook store: `WaybookHistoryProvider(store)`.

    Providers on the same store share their sessions, across objects and processes. The options are the
    `HistoryProvider` ones (load_messages, store_inputs, store_outputs, ...).
    """

    DEFAULT_SOURCE_ID: ClassVar[str] = "waybook_history"

    def __init__(
        self,
        store: JournalStore,
        *,
        source_id: str = DEFAULT_SOURCE_ID,
        redact: Redact = False,
        **options: Any,
    ) -> None:
        """`redact` masks secrets before anything is stored: True with the built-in detector (the one
        `export --redact` uses), or a list of extra regular expressions to mask too (as `Session`'s;
        docs/erasure.md)."""
        mask = secret_mask(redact, who="WaybookHistoryProvider")
        super().__init__(source_id, **options)
        self._threads = Threads(
            store,
            runtime=RUNTIME,
            prefix="maf",
            fields=("session_id",),
            decode=_decode,
            mask=mask,
            placeholder=_erased,
        )

    @property
    def store(self) -> JournalStore:
        return self._threads.store

    def journal_id(self, session_id: str | None) -> str | None:
        """The session's journal in the store (None before its first message)."""
        return self._threads.journal_id((session_id or DEFAULT_SESSION,))

    def for_provider(self, session_id: str | None, provider: Provider) -> ProviderContext:
        """The session's messages as `provider`'s request JSON, every repair reported (`for_provider`)."""
        return self._threads.for_provider((session_id or DEFAULT_SESSION,), provider)

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        """The session's messages as committed now; the next `save_messages` is checked against them."""
        return await in_worker(self.store, lambda: self.messages_now(session_id))

    async def save_messages(
        self,
        session_id: str | None,
        messages: Sequence[Message],
        *,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Append the messages the history does not already end with, in one atomic batch, at the head
        the history was loaded at (StaleHistoryError if another writer saved since)."""
        if messages:
            batch = list(messages)
            await in_worker(self.store, lambda: self.save_now(session_id, batch))

    async def clear(self, session_id: str | None) -> None:
        """Start the session's history over with a reset; every earlier message stays in the journal."""
        key = (session_id or DEFAULT_SESSION,)
        await in_worker(
            self.store,
            lambda: self._threads.write(key, lambda t: cleared(t, "agent-framework: clear"), checked=True),
        )

    # --- blocking twins ----------------------------------------------------------------------------------

    def messages_now(self, session_id: str | None) -> list[Message]:
        thread = self._threads.read((session_id or DEFAULT_SESSION,))
        return [Message.from_dict(message) for message in thread.messages()] if thread is not None else []

    def save_now(self, session_id: str | None, messages: Sequence[Message]) -> None:
        def plan(thread: Any) -> list[Any]:
            existing = [Message.from_dict(message) for message in thread.messages()]
            given = [message.to_dict() for message in messages]
            # compared as stored (secrets masked), appended as given: masking records what it masked
            as_stored = [Message.from_dict(thread.as_stored(message)) for message in given]
            fresh = {id(message) for message in filter_new_messages(existing, as_stored)}
            return extended([m for m, s in zip(given, as_stored, strict=True) if id(s) in fresh], _node)

        self._threads.write((session_id or DEFAULT_SESSION,), plan, checked=True)


__all__ = ["WaybookHistoryProvider"]


__all__ = ["WaybookHistoryProvider"]
