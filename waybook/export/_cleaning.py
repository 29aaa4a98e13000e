"""Training rows that train correctly: what is dropped from a path's messages, by explicit options.

A chat fine-tuning row must be valid: every tool call answered by the tool messages right after it, no
empty assistant turn, no tool message without its call. The defaults make every row valid and say what
they dropped; each choice is an option (docs/export.md lists them).
"""

from __future__ import annotations

from collections import Counter
from typing import Final, Literal

import attrs

from waybook.export._harness import scrub_text
from waybook.model import JournalError, ToolCallBlock

Role = Literal["system", "user", "assistant", "tool"]
ABORTED_STOPS: Final = frozenset({"aborted", "error"})


@attrs.frozen
class ImagePart:
    """An image a row carries: a `data:` URL (or an `http(s)` one) and its media type."""

    url: str
    media_type: str


@attrs.frozen
class Message:
    """A neutral chat message, before it is written in a training format. `text` is all of its text;
    `parts` is its content in order, text and images, when it carries images (user and tool messages)."""

    role: Role
    text: str
    tool_calls: tuple[ToolCallBlock, ...] = ()
    tool_call_id: str | None = None
    thinking: str = ""
    stopped: str | None = None
    parts: tuple[str | ImagePart, ...] = ()

    @property
    def images(self) -> tuple[ImagePart, ...]:
        return tuple(part for part in self.parts if isinstance(part, ImagePart))


@attrs.frozen
class TrainingOptions:
    """What to do with what a valid training row cannot hold as it is.

    `aborted`: "drop" (default) assistant turns that stopped as aborted or error, with their tool
    calls; "keep" keeps them when they are not empty. `unanswered`: "drop" (default) tool calls that got
    no result; "stub" answers each with a tool message saying no result was recorded. `thinking`: "drop"
    (default); "tag" puts it before the text as `<think>...</think>`; "field" keeps it apart, for the
    formats that carry it as `reasoning_content` (TRL's, and the chat templates that read it). `images`:
    "inline" (default) carries
    each image the user or a tool showed the model as a URL (blobs read as `data:` URLs; formats with no
    image form, and roles that take none, get the placeholder); "placeholder" writes
    `[image: <media type>]`; "drop" leaves them out. `blobs`: "inline" (default) puts a text blob's text
    in the row; "reference" writes `[blob NAME TYPE, N bytes, sha256:...]` (see waybook.export._messages).
    `harness`: see below.
    """

    aborted: Literal["drop", "keep"] = attrs.field(
        default="drop", validator=lambda *a: _one_of(*a, "drop", "keep")
    )
    unanswered: Literal["drop", "stub"] = attrs.field(
        default="drop", validator=lambda *a: _one_of(*a, "drop", "stub")
    )
    thinking: Literal["drop", "tag", "field"] = attrs.field(
        default="drop", validator=lambda *a: _one_of(*a, "drop", "tag", "field")
    )
    images: Literal["inline", "placeholder", "drop"] = attrs.field(
        default="inline", validator=lambda *a: _one_of(*a, "inline", "placeholder", "drop")
    )
    blobs: Literal["inline", "reference"] = attrs.field(
        default="inline", validator=lambda *a: _one_of(*a, "inline", "reference")
    )
    harness: Literal["drop", "keep"] = attrs.field(
        default="drop", validator=lambda *a: _one_of(*a, "drop", "keep")
    )
    """"drop" (default) removes harness noise (waybook.export._harness: Claude Code's command tags and
    caveats, slash-command lines, ANSI escapes); "keep" leaves messages as recorded."""
    erased: Literal["drop", "mark"] = attrs.field(
        default="drop", validator=lambda *a: _one_of(*a, "drop", "mark")
    )
    """A row (a trajectory, a turn's sample, a pair's prompt or completion) that holds erased content
    (docs/erasure.md): "drop" (default) leaves the whole row out, counted, so no model learns to write
    a placeholder or to answer a hole; "mark" keeps it with the placeholder naming the erasure in place
    of the erased content. The neighbours' text is never dropped or changed either way."""


class InvalidOptionError(JournalError, ValueError):
    """A training option was given a value it does not have."""


def _one_of(_: object, attribute: attrs.Attribute[str], value: object, *choices: str) -> None:
    if value not in choices:
        msg = (
            f"TrainingOptions.{attribute.name} must be one of {', '.join(map(repr, choices))}, not {value!r}"
        )
        raise InvalidOptionError(msg)


NO_RESULT: Final = "[no result was recorded for this tool call]"


def scrub(message: Message, dropped: Counter[str]) -> Message:
    """`message` without harness noise (waybook.export._harness); `dropped` counts what went."""
    text = scrub_text(message.text, message.role, dropped)
    parts = tuple(scrub_text(p, message.role, Counter()) if isinstance(p, str) else p for p in message.parts)
    if text == message.text and parts == message.parts:
        return message
    return attrs.evolve(message, text=text, parts=parts)


def clean(
    messages: list[Message], options: TrainingOptions, dropped: Counter[str], *, open_end: bool = False
) -> list[Message]:
    """`messages` made valid for training; `dropped` counts what was left out, by reason.

    With `open_end`, the last message may keep tool calls with no result (it is the sample's target:
    what the model said, before any tool answered).
    """
    if options.harness == "drop":
        messages = [scrub(m, dropped) for m in messages]
    out: list[Message] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        i += 1
        if message.role == "tool":
            dropped["tool results without their call"] += 1
            continue
        if message.role != "assistant":
            if message.text or message.images:
                out.append(message)
            else:
                dropped[f"empty {message.role} messages"] += 1
            continue
        results: list[Message] = []
        while i < len(messages) and messages[i].role == "tool":
            results.append(messages[i])
            i += 1
        if message.stopped in ABORTED_STOPS and (options.aborted == "drop" or not _has_output(message)):
            dropped["aborted assistant turns"] += 1
            if results:
                dropped["tool results without their call"] += len(results)
            continue
        out.extend(_turn(message, results, options, dropped, last=open_end and i == len(messages)))
    return out


def _turn(
    message: Message, results: list[Message], options: TrainingOptions, dropped: Counter[str], *, last: bool
) -> list[Message]:
    text = message.text
    thinking = message.thinking if options.thinking == "field" else ""
    if message.thinking and options.thinking != "field":
        if options.thinking == "tag":
            text = f"<think>\n{message.thinking}\n</think>\n\n{text}".rstrip()
        else:
            dropped["thinking blocks"] += 1
    by_call: dict[str, Message] = {}
    for result in results:
        if result.tool_call_id in by_call or result.tool_call_id not in {
            c.call_id for c in message.tool_calls
        }:
            dropped["tool results without their call"] += 1
        else:
            by_call[str(result.tool_call_id)] = result
    calls: list[ToolCallBlock] = []
    answers: list[Message] = []
    for call in message.tool_calls:
        if call.call_id in by_call:
            calls.append(call)
            answers.append(by_call[call.call_id])
        elif last:
            calls.append(call)
        elif options.unanswered == "stub":
            calls.append(call)
            answers.append(Message("tool", NO_RESULT, tool_call_id=call.call_id))
            dropped["unanswered tool calls (stubbed)"] += 1
        else:
            dropped["unanswered tool calls"] += 1
    if not text and not calls:
        dropped["empty assistant turns"] += 1
        return []
    return [attrs.evolve(message, text=text, tool_calls=tuple(calls), thinking=thinking), *answers]


def _has_output(message: Message) -> bool:
    return bool(message.text or message.tool_calls)
