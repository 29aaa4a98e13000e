"""Strands Agents' `SessionRepository` on any waybook store (docs/strands.md).

A session is two kinds of journal. The session journal holds the session, its agents' records (state,
conversation-manager state) and multi-agent state, each create or update a custom entry holding
Strands' own `to_dict()`. Each agent's messages are a journal of their own, one tree node per
`SessionMessage` (a user, assistant or tool-result node with text, reasoning and tool-use blocks as
waybook blocks, and the session message's own dict kept verbatim beside them).

Nothing is erased. `update_message` (Strands redacts a message that way) moves the leaf back to the
message before it and appends the updated message and copies of the ones after it: the original stays
in the journal, on the abandoned branch. `delete_session` appends a reset to the session's journals.

A message whose content `waybook erase` took is listed in its place as the placeholder naming the
erasure (`_erased`), every tool use still answered; an erased session or agent record is read as never
written (Strands writes it again when it needs it), never as a broken session.

Writes are compare-and-append, so the checks Strands' repositories make hold across processes: two
writers creating the same message id (two processes running one session) cannot both succeed; the one
that commits second gets Strands' own `SessionException` ("already exists"), and nothing of it is
written. Strands is imported lazily: install `waybook[strands]`.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Final

import attrs

from waybook._masking import Redact, secret_mask
from waybook.integrations._extras import needs_extra
from waybook.integrations._history import Thread, Threads, arguments, extended, message_of, node, replaced
from waybook.integrations._keyed import KeyedJournals, Tail, retrying
from waybook.model import (
    ERASED_TOOL_NAME,
    AnyBody,
    AssistantMessage,
    Block,
    CustomEntry,
    NodeBody,
    Record,
    Reset,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
)
from waybook.projections import Provider, ProviderContext
from waybook.stores import JournalStore

with needs_extra(
    "waybook.integrations.strands", runtime="Strands Agents", extra="strands", modules=("strands",)
):
    from strands.session.session_repository import SessionRepository
    from strands.types.exceptions import SessionException
    from strands.types.session import Session, SessionAgent, SessionMessage

if TYPE_CHECKING:
    from strands.multiagent.base import MultiAgentBase

RUNTIME: Final = "strands"
NAMESPACE: Final = "strands"
SESSION: Final = "strands.session"
AGENT: Final = "strands.agent"
MULTI_AGENT: Final = "strands.multi_agent"
DELETED: Final = "strands: delete_session"


@attrs.define
class SessionFold:
    """A session journal since its last reset: the session, its agents and multi-agent states (dicts)."""

    session: dict[str, Any] | None = None
    agents: dict[str, dict[str, Any]] = attrs.Factory(dict)
    multi_agents: dict[str, dict[str, Any]] = attrs.Factory(dict)


def _apply_session(fold: SessionFold, record: Record) -> SessionFold:
    body = record.body
    if isinstance(body, Reset):
        return SessionFold()
    if isinstance(body, CustomEntry) and record.erased is None:  # an erased one: as if never written
        if body.type == SESSION:
            fold.session = body.data
        elif body.type == AGENT:
            fold.agents[body.data["agent_id"]] = body.data
        elif body.type == MULTI_AGENT:
            fold.multi_agents[body.data["id"]] = body.data["state"]
    return fold


def _decode(body: Any) -> Any:
    return message_of(NAMESPACE, body)


def _node(stored: dict[str, Any]) -> NodeBody:
    """The node recording one session message (its dict): the message the agent sees as blocks."""
    message = stored.get("redact_message") or stored.get("message") or {}
    content = [block for block in message.get("content") or [] if isinstance(block, dict)]
    if message.get("role") == "user" and len(content) == 1 and isinstance(content[0].get("toolResult"), dict):
        result = content[0]["toolResult"]
        texts = [
            TextBlock(text=item["text"])
            for item in result.get("content") or []
            if isinstance(item.get("text"), str)
        ]
        return node(
            NAMESPACE,
            "tool",
            stored,
            texts or [TextBlock(text="")],
            call_id=str(result.get("toolUseId")),
            is_error=result.get("status") == "error",
        )
    blocks: list[Block] = []
    for block in content:
        if isinstance(block.get("text"), str):
            blocks.append(TextBlock(text=block["text"]))
        elif isinstance(block.get("reasoningContent"), dict):
            reasoning = block["reasoningContent"].get("reasoningText") or {}
            if isinstance(reasoning.get("text"), str):
                blocks.append(ThinkingBlock(thinking=reasoning["text"], signature=reasoning.get("signature")))
        elif isinstance(block.get("toolUse"), dict):
            use = block["toolUse"]
            blocks.append(
                ToolCallBlock(str(use.get("toolUseId")), str(use.get("name")), arguments(use.get("input")))
            )
    role = message.get("role")
    return node(NAMESPACE, role if role in ("user", "assistant") else None, stored, blocks)


def _erased(record: Record, before: Any, after: Any) -> dict[str, Any] | None:
    """The session message shown for an erased record (as `placeholder_records` shows it): the
    placeholder as a tool result for the same tool use, an assistant message giving back the tool uses
    the results after it answer, or a user message; its id the one after the message before it (Strands
    numbers an agent's messages in order), its times the record's."""
    body = record.body
    shown = next((b.text for b in getattr(body, "content", ()) if isinstance(b, TextBlock)), "")
    content: list[dict[str, Any]]
    if isinstance(body, ToolResult):
        result = {"toolUseId": body.call_id, "status": "success", "content": [{"text": shown}]}
        role, content = "user", [{"toolResult": result}]
    elif isinstance(body, AssistantMessage):
        calls = [(c.call_id, c.name) for c in body.tool_calls]
        for answer in _parts(after, "toolResult"):  # a message of several results, stored whole
            use_id = answer.get("toolUseId")
            if isinstance(use_id, str) and all(use_id != c for c, _ in calls):
                calls.append((use_id, ERASED_TOOL_NAME))
        uses = [{"toolUse": {"toolUseId": c, "name": n, "input": {}}} for c, n in calls]
        role, content = "assistant", [{"text": shown}, *uses]
    elif isinstance(body, CustomEntry) and body.type != f"{NAMESPACE}.message":
        return None  # not a message of this runtime
    elif made := [u["toolUseId"] for u in _parts(before, "toolUse") if isinstance(u.get("toolUseId"), str)]:
        results = [{"toolUseId": c, "status": "success", "content": [{"text": shown}]} for c in made]
        role, content = "user", [{"toolResult": result} for result in results]
    else:
        role, content = "user", [{"text": shown}]
    previous = before.get("message_id") if isinstance(before, dict) else None
    following = after.get("message_id") if isinstance(after, dict) else None
    if isinstance(previous, int):
        message_id = previous + 1
    else:
        message_id = following - 1 if isinstance(following, int) and following > 0 else 0
    return {
        "message": {"role": role, "content": content},
        "message_id": message_id,
        "redact_message": None,
        "created_at": record.at,
        "updated_at": record.at,
    }


def _parts(stored: Any, kind: str) -> list[dict[str, Any]]:
    """The `kind` parts (`toolUse`, `toolResult`) of a stored session message's content."""
    message = stored.get("message") if isinstance(stored, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return [
        block[kind]
        for block in content or []
        if isinstance(block, dict) and isinstance(block.get(kind), dict)
    ]


def _by_id(thread: Thread) -> dict[int, dict[str, Any]]:
    return {stored["message_id"]: stored for stored in thread.messages()}


class WaybookSessionRepository(SessionRepository):
    """A Strands `SessionRepository` on a waybook store: `RepositorySessionManager(session_id=...,
    session_repository=WaybookSessionRepository(store))`. Safe across processes wherever the store is."""

    def __init__(self, store: JournalStore, *, redact: Redact = False) -> None:
        """`redact` masks secrets before anything is stored: True with the built-in detector (the one
        `export --redact` uses), or a list of extra regular expressions to mask too (as `Session`'s;
        docs/erasure.md)."""
        mask = secret_mask(redact, who="WaybookSessionRepository")
        blocking: JournalStore = getattr(store, "blocking", store)  # a ThreadedStore's blocking store
        self._sessions = KeyedJournals(
            blocking,
            runtime=f"{RUNTIME}-session",
            prefix="strs",
            fields=("session_id",),
            initial=SessionFold,
            apply=_apply_session,
            mask=mask,
        )
        self._messages = Threads(
            blocking,
            runtime=f"{RUNTIME}-messages",
            prefix="strm",
            fields=("session_id", "agent_id"),
            decode=_decode,
            mask=mask,
            placeholder=_erased,
        )

    @property
    def store(self) -> JournalStore:
        return self._sessions.store

    def journal_ids(self, session_id: str, agent_id: str | None = None) -> str | None:
        """The session's journal, or with `agent_id` that agent's message journal (None if none yet)."""
        if agent_id is None:
            return self._sessions.current((session_id,))
        return self._messages.journal_id((session_id, agent_id))

    def for_provider(self, session_id: str, agent_id: str, provider: Provider) -> ProviderContext:
        """The agent's messages as `provider`'s request JSON, every repair reported (`for_provider`)."""
        return self._messages.for_provider((session_id, agent_id), provider)

    # --- sessions ----------------------------------------------------------------------------------------

    def create_session(self, session: Session, **kwargs: Any) -> Session:
        data = session.to_dict()

        def plan(tail: Tail[SessionFold]) -> list[AnyBody]:
            if tail.state.session is not None:
                msg = f"Session {session.session_id} already exists"
                raise SessionException(msg)
            return [CustomEntry(parent=None, type=SESSION, data=data)]

        self._write_session(session.session_id, plan, create=True)
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        fold = self._session(session_id)
        return Session.from_dict(fold.session) if fold is not None and fold.session is not None else None

    def delete_session(self, session_id: str, **kwargs: Any) -> None:
        """A reset of the session's journal and of each of its agents' message journals (nothing erased)."""
        fold = self._session(session_id)
        if fold is None or fold.session is None:
            msg = f"Session {session_id} does not exist"
            raise SessionException(msg)
        for agent_id in fold.agents:
            key = (session_id, agent_id)
            self._messages.write(key, lambda thread: [Reset(reason=DELETED)] if thread.path else [])
        self._write_session(session_id, lambda tail: [Reset(reason=DELETED)] if tail.state.session else None)

    # --- agents ------------------------------------------------------------------------------------------

    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        data = session_agent.to_dict()

        def plan(tail: Tail[SessionFold]) -> list[AnyBody]:
            self._require_session(session_id, tail.state)
            if session_agent.agent_id in tail.state.agents:
                msg = f"Agent {session_agent.agent_id} already exists in session {session_id}"
                raise SessionException(msg)
            return [CustomEntry(parent=None, type=AGENT, data=data)]

        self._write_session(session_id, plan)

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        fold = self._session(session_id)
        found = fold.agents.get(agent_id) if fold is not None and fold.session is not None else None
        return SessionAgent.from_dict(copy.deepcopy(found)) if found is not None else None

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        def plan(tail: Tail[SessionFold]) -> list[AnyBody]:
            previous = self._require_agent(session_id, session_agent.agent_id, tail.state)
            session_agent.created_at = previous["created_at"]  # as FileSessionRepository keeps it
            return [CustomEntry(parent=None, type=AGENT, data=session_agent.to_dict())]

        self._write_session(session_id, plan)

    # --- messages ----------------------------------------------------------------------------------------

    def create_message(
        self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any
    ) -> None:
        """Append the message; SessionException if its id is already stored (by any writer)."""
        self._require_agent(session_id, agent_id)
        data = session_message.to_dict()

        def plan(thread: Thread) -> list[AnyBody]:
            if data["message_id"] in _by_id(thread):
                msg = (
                    f"Message {data['message_id']} already exists in agent {agent_id} in session {session_id}"
                )
                raise SessionException(msg)
            return extended([data], _node)

        self._messages.write((session_id, agent_id), plan)

    def read_message(
        self, session_id: str, agent_id: str, message_id: int, **kwargs: Any
    ) -> SessionMessage | None:
        found = self._stored(session_id, agent_id).get(message_id)
        return SessionMessage.from_dict(copy.deepcopy(found)) if found is not None else None

    def update_message(
        self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any
    ) -> None:
        """Replace a message: the leaf moves back before it, the new one and copies of its successors are
        appended; the original stays in the journal."""
        self._require_agent(session_id, agent_id)
        message_id = session_message.message_id

        def plan(thread: Thread) -> list[AnyBody]:
            stored = thread.messages()
            position = next((i for i, m in enumerate(stored) if m["message_id"] == message_id), None)
            if position is None:
                msg = f"Message {message_id} does not exist in session {session_id}"
                raise SessionException(msg)
            session_message.created_at = stored[position]["created_at"]  # as FileSessionRepository keeps it
            updated = [*stored[:position], session_message.to_dict(), *stored[position + 1 :]]
            return replaced(thread, updated, _node, f"strands: update_message {message_id}")

        self._messages.write((session_id, agent_id), plan)

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        fold = self._session(session_id)
        if fold is None or fold.session is None or agent_id not in fold.agents:
            return []
        stored = self._stored(session_id, agent_id)
        ordered = [stored[key] for key in sorted(stored)]
        window = ordered[offset : offset + limit] if limit is not None else ordered[offset:]
        return [SessionMessage.from_dict(copy.deepcopy(message)) for message in window]

    # --- multi-agent state -------------------------------------------------------------------------------

    def create_multi_agent(self, session_id: str, multi_agent: MultiAgentBase, **kwargs: Any) -> None:
        state = multi_agent.serialize_state()

        def plan(tail: Tail[SessionFold]) -> list[AnyBody]:
            self._require_session(session_id, tail.state)
            return [CustomEntry(parent=None, type=MULTI_AGENT, data={"id": multi_agent.id, "state": state})]

        self._write_session(session_id, plan)

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        fold = self._session(session_id)
        found = (
            fold.multi_agents.get(multi_agent_id) if fold is not None and fold.session is not None else None
        )
        return copy.deepcopy(found) if found is not None else None

    def update_multi_agent(self, session_id: str, multi_agent: MultiAgentBase, **kwargs: Any) -> None:
        state = multi_agent.serialize_state()

        def plan(tail: Tail[SessionFold]) -> list[AnyBody]:
            self._require_session(session_id, tail.state)
            if multi_agent.id not in tail.state.multi_agents:
                msg = f"MultiAgent state {multi_agent.id} in session {session_id} does not exist"
                raise SessionException(msg)
            return [CustomEntry(parent=None, type=MULTI_AGENT, data={"id": multi_agent.id, "state": state})]

        self._write_session(session_id, plan)

    # --- internals ---------------------------------------------------------------------------------------

    def _session(self, session_id: str) -> SessionFold | None:
        tail = self._sessions.tail((session_id,), create=False)
        return tail.state if tail is not None else None

    def _write_session(self, session_id: str, plan: Any, *, create: bool = False) -> None:
        """Compare-and-append what `plan` decides from the session journal (a journal is made only by
        `create_session`)."""
        with self._sessions.lock:
            tail = self._sessions.tail((session_id,), create=create)
            if tail is None:
                msg = f"Session {session_id} does not exist"
                raise SessionException(msg)
            retrying(tail, lambda: plan(tail))

    def _require_session(self, session_id: str, fold: SessionFold | None) -> SessionFold:
        if fold is None or fold.session is None:
            msg = f"Session {session_id} does not exist"
            raise SessionException(msg)
        return fold

    def _require_agent(
        self, session_id: str, agent_id: str, fold: SessionFold | None = None
    ) -> dict[str, Any]:
        fold = self._require_session(session_id, fold if fold is not None else self._session(session_id))
        if agent_id not in fold.agents:
            msg = f"Agent {agent_id} does not exist in session {session_id}"
            raise SessionException(msg)
        return fold.agents[agent_id]

    def _stored(self, session_id: str, agent_id: str) -> dict[int, dict[str, Any]]:
        fold = self._session(session_id)
        if fold is None or fold.session is None or agent_id not in fold.agents:
            return {}
        thread = self._messages.read((session_id, agent_id))
        return _by_id(thread) if thread is not None else {}


__all__ = ["WaybookSessionRepository"]


__all__ = ["WaybookSessionRepository"]
