"""LlamaIndex's `BaseChatStore` on any waybook store (docs/llama-index.md).

One journal per chat key; each `ChatMessage` is a tree node (user, system, assistant or tool-result, with
its text, thinking and tool-call blocks as waybook blocks, and its own JSON, `model_dump(mode="json")`,
kept verbatim beside them; a message whose content `waybook erase` took comes back as the placeholder
naming the erasure, every tool call still answered). Nothing else is erased:

- `delete_message(key, idx)` moves the leaf back to message idx-1 and appends copies of the messages after
  idx: message idx stays in the journal, on the abandoned branch, and so do the originals of its
  successors;
- `delete_last_message(key)` moves the leaf back one message;
- `delete_messages(key)` appends a reset; the key is then gone from `get_keys` until it is written again;
- `set_messages(key, messages)` keeps the prefix the stored messages share with `messages`, moves the
  leaf there, and appends the rest; `add_message(key, message, idx)` with an index is a set.

Appending a message decides from the journal as it is (a lost race re-reads and appends after the
winner). Set, insert and delete rewrite the history this store last read, so they are appended at the
head it read at: `StaleHistoryError` if another writer changed the key since (read again and retry).
LlamaIndex is imported lazily: install `waybook[llama-index]`.
"""

from __future__ import annotations

from typing import Any, Final

from waybook._masking import Redact, secret_mask
from waybook.integrations._extras import needs_extra
from waybook.integrations._history import (
    Thread,
    Threads,
    arguments,
    extended,
    message_of,
    node,
    replaced,
    truncated,
)
from waybook.model import (
    ERASED_TOOL_NAME,
    AssistantMessage,
    Block,
    CustomEntry,
    NodeBody,
    Record,
    Reset,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
)
from waybook.projections import Provider, ProviderContext
from waybook.stores import JournalStore

with needs_extra(
    "waybook.integrations.llama_index", runtime="LlamaIndex", extra="llama-index", modules=("llama_index",)
):
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.llms import ChatMessage
    from llama_index.core.storage.chat_store.base import BaseChatStore

RUNTIME: Final = "llama-index"
NAMESPACE: Final = "llama_index"
_ROLES: Final = {
    "user": "user",
    "system": "system",
    "developer": "system",
    "assistant": "assistant",
    "model": "assistant",
    "chatbot": "assistant",
}


def _decode(body: Any) -> Any:
    return message_of(NAMESPACE, body)


def _node(message: dict[str, Any]) -> NodeBody:
    """The node recording one message (its JSON): typed blocks as waybook blocks, the JSON beside them."""
    role = message.get("role")
    blocks: list[Block] = []
    for block in message.get("blocks") or []:
        kind = block.get("block_type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            blocks.append(TextBlock(text=block["text"]))
        elif kind == "thinking" and isinstance(block.get("content"), str):
            blocks.append(ThinkingBlock(thinking=block["content"]))
        elif kind == "tool_call" and isinstance(block.get("tool_call_id"), str):
            call = ToolCallBlock(
                block["tool_call_id"], str(block["tool_name"]), arguments(block.get("tool_kwargs"))
            )
            blocks.append(call)
    extra = message.get("additional_kwargs") or {}
    if role == "tool" and isinstance(extra.get("tool_call_id"), str):
        texts = [block for block in blocks if isinstance(block, TextBlock)]
        return node(
            NAMESPACE, "tool", message, texts, call_id=extra["tool_call_id"], tool_name=extra.get("name")
        )
    return node(NAMESPACE, _ROLES.get(str(role)), message, blocks)  # type: ignore[arg-type]


def _erased(record: Record, before: Any, after: Any) -> dict[str, Any] | None:
    """The message shown for an erased record (as `placeholder_records` shows it): the placeholder as a
    tool message for the same call, an assistant message giving back the calls the tool messages after
    it answer, a system message, or a user message. So every tool call is answered."""
    body = record.body
    shown = next((b.text for b in getattr(body, "content", ()) if isinstance(b, TextBlock)), "")
    text = {"block_type": "text", "text": shown}
    if isinstance(body, ToolResult):
        extra = {"tool_call_id": body.call_id, "name": body.tool_name or ERASED_TOOL_NAME}
        return {"role": "tool", "additional_kwargs": extra, "blocks": [text]}
    if isinstance(body, AssistantMessage):
        calls = [
            {"block_type": "tool_call", "tool_call_id": c.call_id, "tool_name": c.name, "tool_kwargs": {}}
            for c in body.tool_calls
        ]
        return {"role": "assistant", "additional_kwargs": {}, "blocks": [text, *calls]}
    if isinstance(body, CustomEntry) and body.type != f"{NAMESPACE}.message":
        return None  # not a message of this runtime
    role = "system" if isinstance(body, SystemMessage) else "user"
    return {"role": role, "additional_kwargs": {}, "blocks": [text]}


def _dump(message: ChatMessage) -> dict[str, Any]:
    """The message's own JSON (`model_dump(mode="json")`; SimpleChatStore's wrapper around it fails under
    pydantic 2.14)."""
    dumped: dict[str, Any] = message.model_dump(mode="json")
    return dumped


def _load(stored: list[Any]) -> list[ChatMessage]:
    return [ChatMessage.model_validate(message) for message in stored]


class WaybookChatStore(BaseChatStore):
    """A LlamaIndex chat store on a waybook `JournalStore`: `WaybookChatStore(store)`.

    Chat stores on the same store share their keys, across objects and processes.
    """

    _threads: Threads = PrivateAttr()

    def __init__(self, store: JournalStore, *, redact: Redact = False, **data: Any) -> None:
        """`redact` masks secrets before anything is stored: True with the built-in detector (the one
        `export --redact` uses), or a list of extra regular expressions to mask too (as `Session`'s;
        docs/erasure.md)."""
        mask = secret_mask(redact, who="WaybookChatStore")
        super().__init__(**data)
        self._threads = Threads(
            store,
            runtime=RUNTIME,
            prefix="lix",
            fields=("chat_key",),
            decode=_decode,
            mask=mask,
            placeholder=_erased,
        )

    @classmethod
    def class_name(cls) -> str:
        return "WaybookChatStore"

    @property
    def store(self) -> JournalStore:
        return self._threads.store

    def journal_id(self, key: str) -> str | None:
        """The journal of `key` in the store (None before its first write)."""
        return self._threads.journal_id((key,))

    def for_provider(self, key: str, provider: Provider) -> ProviderContext:
        """The messages of `key` as `provider`'s request JSON, every repair reported (`for_provider`)."""
        return self._threads.for_provider((key,), provider)

    # --- BaseChatStore ----------------------------------------------------------------------------------

    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        dumped = [_dump(message) for message in messages]
        self._threads.write(
            (key,), lambda thread: replaced(thread, dumped, _node, "llama-index: set_messages"), checked=True
        )

    def get_messages(self, key: str) -> list[ChatMessage]:
        thread = self._threads.read((key,))
        return _load(thread.messages()) if thread is not None and thread.live else []

    def add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        dumped = _dump(message)
        if idx is None:
            self._threads.write((key,), lambda _: extended([dumped], _node))
            return

        def insert(thread: Thread) -> list[Any]:
            stored = thread.messages() if thread.live else []
            return replaced(thread, [*stored[:idx], dumped, *stored[idx:]], _node, "llama-index: add_message")

        self._threads.write((key,), insert, checked=True)

    def delete_messages(self, key: str) -> list[ChatMessage] | None:
        """Every message of `key`, which is then reset (the messages stay in the journal); None if none."""
        removed: list[list[Any]] = []

        def plan(thread: Thread) -> list[Any]:
            removed[:] = [thread.messages()] if thread.live else []
            return [Reset(reason="llama-index: delete_messages")] if thread.live else []  # even when empty

        return self._delete(key, plan, removed)

    def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Message `idx` of `key`, taken off the history by a leaf move back to message idx-1 and copies
        of the messages after it; None if there is no such message."""
        removed: list[list[Any]] = []

        def plan(thread: Thread) -> list[Any]:
            stored = thread.messages() if thread.live else []
            if not -len(stored) <= idx < len(stored):
                removed.clear()
                return []
            position = idx % len(stored)
            removed[:] = [[stored[position]]]
            rest = stored[:position] + stored[position + 1 :]
            return replaced(thread, rest, _node, f"llama-index: delete_message {position}")

        found = self._delete(key, plan, removed)
        return found[0] if found else None

    def delete_last_message(self, key: str) -> ChatMessage | None:
        """The last message of `key`, taken off by a leaf move back one message; None if there is none."""
        removed: list[list[Any]] = []

        def plan(thread: Thread) -> list[Any]:
            stored = thread.messages() if thread.live else []
            removed[:] = [stored[-1:]] if stored else []
            return truncated(thread, len(stored) - 1, "llama-index: delete_last_message") if stored else []

        found = self._delete(key, plan, removed)
        return found[0] if found else None

    def get_keys(self) -> list[str]:
        keys = []
        with self._threads.keyed.lock:
            for (key,), journal_id in self._threads.keyed.listed():
                if self._threads.keyed.tail_of(journal_id).state.live:
                    keys.append(key)
        return keys

    # --- internals ----------------------------------------------------------------------------------------

    def _delete(self, key: str, plan: Any, removed: list[list[Any]]) -> list[ChatMessage] | None:
        if self._threads.journal_id((key,)) is None:
            return None
        self._threads.write((key,), plan, checked=True)
        return _load(removed[0]) if removed else None


__all__ = ["WaybookChatStore"]


__all__ = ["WaybookChatStore"]
