"""A rendered context as turns a provider can take: tool calls paired with their results, every repair named.

What a journal holds is what happened, and what happened is not always a request a provider accepts: a
crash or a cancelled turn leaves a tool call with no result (the next request is refused, and the session
can never be resumed); a runtime may record a result whose call is not on the path, or stream one turn
as several assistant messages. `turns` turns the messages `render_context` returns into provider-neutral
turns that every provider accepts, and says what it changed, message by message:

- an assistant message right after another (no result or user message between) joins it: one turn;
- each tool call is answered by the results that follow its turn, before the next user or assistant
  message; a call with none gets a synthetic error result saying no result was recorded
  (`orphaned_call`); a result that answers no open call of the turn before it is dropped
  (`orphaned_result`), and so is a second result for one call (`duplicate_result`);
- a message left with nothing to send (blank text, no call) is dropped (`empty_dropped`).

Thinking, images, blobs and system messages are left for each provider's rules (waybook.projections.
_providers). The journal is never touched: this is a pure function of the messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, get_args

import attrs

from waybook.model import (
    AssistantMessage,
    BlobBlock,
    Block,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
)
from waybook.projections._context import ContextMessage

RepairKind = Literal[
    "orphaned_call",
    "orphaned_result",
    "duplicate_result",
    "roles_merged",
    "empty_dropped",
    "thinking_dropped",
    "system_as_user",
    "leading_user_added",
    "call_id_rewritten",
    "content_placeholder",
    "trailing_whitespace_trimmed",
]
REPAIR_KINDS: Final[tuple[RepairKind, ...]] = get_args(RepairKind)
"""Every repair kind, in the order `RepairKind` declares them."""

NO_RESULT_RECORDED: Final = "[no result was recorded for this tool call]"
"""The text of the synthetic result an orphaned tool call gets (marked as an error where the provider
has the flag): the call was made, and nothing says what came of it."""


@attrs.frozen
class Repair:
    """One change made so a provider accepts the context: its `kind`, the record it concerns
    (`source`, a record id), and what was done, in words (`detail`)."""

    kind: RepairKind
    source: str
    detail: str


@attrs.frozen
class ToolAnswer:
    """A tool result in a turn: the call it answers, its content, whether it is an error, and the
    record it came from (None for a synthetic result)."""

    call_id: str
    content: tuple[Block, ...]
    is_error: bool
    source: str | None


@attrs.frozen
class Turn:
    """A provider-neutral turn. `role` "tool" holds the answers to the assistant turn before it, one for
    each of its calls, in call order; any other role holds content blocks. `sources` are the record ids
    it came from; `model` is the assistant's model where recorded (thinking's provenance)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: tuple[Block, ...] = ()
    answers: tuple[ToolAnswer, ...] = ()
    sources: tuple[str, ...] = ()
    model: str | None = None

    @property
    def calls(self) -> tuple[ToolCallBlock, ...]:
        return tuple(block for block in self.content if isinstance(block, ToolCallBlock))


def turns(messages: Sequence[ContextMessage]) -> tuple[list[Turn], list[Repair]]:
    """`messages` as turns with every tool call answered in place, and the repairs that took."""
    repairs: list[Repair] = []
    out: list[Turn] = []
    pending: Turn | None = None  # the last assistant turn with calls, while its results may follow
    answered: dict[str, ToolAnswer] = {}
    for message in messages:
        record = message.record
        if message.role == "tool":
            body = record.body
            assert isinstance(body, ToolResult)
            _answer(body, record.id, pending, answered, repairs)
            continue
        if message.role == "assistant" and pending is not None and not answered:
            # The same turn streamed as another message: no result or user message came between.
            merged = _assistant(message, repairs)
            if merged is not None:
                joined = attrs.evolve(
                    pending,
                    content=pending.content + merged.content,
                    sources=(*pending.sources, record.id),
                )
                repairs.append(
                    Repair(
                        "roles_merged",
                        record.id,
                        f"assistant message joined the assistant turn of {pending.sources[0]} "
                        "(one turn recorded as several messages)",
                    )
                )
                out[-1] = joined
                pending = joined if joined.calls else None
            continue
        if pending is not None:
            out.append(_close(pending, answered, repairs))
            pending, answered = None, {}
        turn = _assistant(message, repairs) if message.role == "assistant" else _plain(message, repairs)
        if turn is None:
            continue
        if out and turn.role == "assistant" and out[-1].role == "assistant":
            previous = out[-1]
            out[-1] = attrs.evolve(
                previous, content=previous.content + turn.content, sources=previous.sources + turn.sources
            )
            repairs.append(
                Repair(
                    "roles_merged",
                    record.id,
                    f"assistant message joined the assistant turn of {previous.sources[0]} "
                    "(two assistant messages in a row)",
                )
            )
            turn = out[-1]
        else:
            out.append(turn)
        if turn.role == "assistant" and turn.calls:
            pending = turn
    if pending is not None:
        out.append(_close(pending, answered, repairs))
    return out, repairs


def _answer(
    body: ToolResult,
    source: str,
    pending: Turn | None,
    answered: dict[str, ToolAnswer],
    repairs: list[Repair],
) -> None:
    calls = {call.call_id for call in pending.calls} if pending is not None else set()
    if body.call_id not in calls:
        where = (
            "no assistant turn with tool calls comes right before it"
            if pending is None
            else (f"the assistant turn before it ({pending.sources[0]}) made no call {body.call_id!r}")
        )
        repairs.append(
            Repair("orphaned_result", source, f"result for call {body.call_id!r} dropped: {where}")
        )
        return
    if body.call_id in answered:
        repairs.append(
            Repair(
                "duplicate_result",
                source,
                f"second result for call {body.call_id!r} dropped (the first, "
                f"{answered[body.call_id].source}, is kept)",
            )
        )
        return
    answered[body.call_id] = ToolAnswer(body.call_id, tuple(body.content), body.is_error, source)


def _close(pending: Turn, answered: dict[str, ToolAnswer], repairs: list[Repair]) -> Turn:
    """The results of `pending`, one per call in call order, synthetic where none was recorded."""
    answers = []
    for call in pending.calls:
        answer = answered.get(call.call_id)
        if answer is None:
            repairs.append(
                Repair(
                    "orphaned_call",
                    pending.sources[-1],
                    f"call {call.call_id!r} ({call.name}) had no recorded result: answered with an "
                    f"error result {NO_RESULT_RECORDED!r}",
                )
            )
            answer = ToolAnswer(call.call_id, (TextBlock(text=NO_RESULT_RECORDED),), True, None)
        answers.append(answer)
    return Turn("tool", answers=tuple(answers), sources=pending.sources)


def _assistant(message: ContextMessage, repairs: list[Repair]) -> Turn | None:
    body = message.record.body
    model = body.model if isinstance(body, AssistantMessage) else None
    content = tuple(block for block in message.content if not _blank(block))
    if not any(not isinstance(block, ThinkingBlock) for block in content):
        repairs.append(
            Repair("empty_dropped", message.source, "assistant message with no text and no tool call dropped")
        )
        return None
    return Turn("assistant", content, sources=(message.source,), model=model)


def _plain(message: ContextMessage, repairs: list[Repair]) -> Turn | None:
    content = tuple(block for block in message.content if not _blank(block))
    if not content:
        repairs.append(Repair("empty_dropped", message.source, f"empty {message.role} message dropped"))
        return None
    role: Literal["system", "user"] = "system" if message.role == "system" else "user"
    return Turn(role, content, sources=(message.source,))


def _blank(block: Block) -> bool:
    if isinstance(block, TextBlock):
        return not block.text.strip()
    if isinstance(block, ThinkingBlock):
        return not block.thinking.strip() and not block.signature
    return not isinstance(block, ToolCallBlock | ImageBlock | BlobBlock)
