"""A rendered context as the request JSON a provider accepts: `for_provider(messages, provider)`.

Providers and what each requires (the tests hold every rule against the providers' own SDK request types
and their documented pairing rules):

- `anthropic` (Messages API): `messages` alternate `user` and `assistant`, starting with `user`; a
  system prompt is the top-level `system` (here `ProviderContext.system`: the leading system messages);
  a later system message is sent as a user turn (`system_as_user`). Tool calls are `tool_use` blocks;
  their results are `tool_result` blocks that come first in the user message right after. Thinking is
  sent back only as the signed blocks Claude wrote (`thinking` with its signature, `redacted_thinking`
  with its data); any other (unsigned, or another provider's reasoning) is dropped. Tool call ids match
  `^[a-zA-Z0-9_-]{1,64}$`; a final assistant message may not end in whitespace.
- `openai-chat` (Chat Completions): `system`, `user`, `assistant` (with `tool_calls`) and `tool` messages;
  every assistant message with tool calls is followed by one `tool` message per call before any other.
  Reasoning is not sent back (dropped). Images go in user messages only.
- `openai-responses` (Responses input items): messages, `function_call` and `function_call_output` items
  with matching `call_id`s. Reasoning goes back only as the provider's own items with their ids, which a
  journal does not keep: dropped.

Every change is a `Repair` in `ProviderContext.repairs` (waybook.projections._provider_turns lists the
kinds); nothing is changed silently and the journal is never touched. A blob or an image kept in the
store's blobs is put inline when `blobs` (a store's `store.blobs`) is given; without it the block is a
placeholder naming it (`content_placeholder`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any, Final, Literal

import attrs

from waybook.codecs import base64_payload, is_text
from waybook.journal import SessionJournal
from waybook.model import BlobBlock, Block, ImageBlock, JournalError, TextBlock, ThinkingBlock, ToolCallBlock
from waybook.projections._base import replay
from waybook.projections._context import ContextMessage, ContextProjection, context_at, render_context
from waybook.projections._provider_turns import Repair, RepairKind, ToolAnswer, Turn, turns

Provider = Literal["anthropic", "openai-chat", "openai-responses"]
PROVIDERS: Final[tuple[Provider, ...]] = ("anthropic", "openai-chat", "openai-responses")
LEADING_USER: Final = "[the conversation before this point was not recorded]"
"""The user turn put before a context that starts with an assistant turn (Anthropic starts with user)."""

_BLOB_PREFIX: Final = "sha256:"
_ANTHROPIC_IMAGES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_OPENAI_IMAGES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_ANTHROPIC_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_OPENAI_ID_MAX: Final = 64


class UnknownProviderError(JournalError, ValueError):
    """`for_provider` was asked for a provider it does not know."""


@attrs.frozen
class ProviderContext:
    """A context as one provider's request takes it: `messages` (the request's `messages`, or for
    `openai-responses` its `input` items), `system` (Anthropic's top-level system prompt, or None), and
    every change made to get there (`repairs`)."""

    provider: Provider
    messages: tuple[dict[str, Any], ...]
    repairs: tuple[Repair, ...]
    system: str | None = None


def for_provider(
    messages: Sequence[ContextMessage], provider: Provider, *, blobs: Any = None
) -> ProviderContext:
    """The messages `render_context` returns as `provider`'s request JSON, with a report of each repair.

    `blobs` (a store's `store.blobs`) puts what the journal keeps as blobs inline; without it, such a
    block is a placeholder naming its digest (reported)."""
    if provider not in PROVIDERS:
        msg = f"unknown provider {provider!r}: choose one of {', '.join(PROVIDERS)}"
        raise UnknownProviderError(msg)
    found, repairs = turns(messages)
    render = _Render(provider, blobs, repairs)
    if provider == "anthropic":
        system, out = render.anthropic(found)
        return ProviderContext(provider, tuple(out), tuple(repairs), system)
    out = render.openai_chat(found) if provider == "openai-chat" else render.openai_responses(found)
    return ProviderContext(provider, tuple(out), tuple(repairs))


def provider_context(
    journal: SessionJournal, provider: Provider, *, leaf: str | None = None, blobs: Any = None
) -> ProviderContext:
    """The model context at `leaf` (default: the active leaf) of `journal`, as `for_provider` gives it."""
    state = replay(ContextProjection(), journal)
    if leaf is None:
        shown = render_context(state.tree, state.refs, journal)
    else:
        shown = context_at(journal, state.tree, leaf)
    return for_provider(shown, provider, blobs=blobs)


class _Render:
    """Neutral turns as one provider's JSON; appends the repairs that rendering makes."""

    def __init__(self, provider: Provider, blobs: Any, repairs: list[Repair]) -> None:
        self.provider = provider
        self.blobs = blobs
        self.repairs = repairs
        self.ids: dict[tuple[str, str], str] = {}  # (turn's first source, recorded id) -> sent id
        self.used: set[str] = set()

    # --- Anthropic -------------------------------------------------------------------------------

    def anthropic(self, found: list[Turn]) -> tuple[str | None, list[dict[str, Any]]]:
        system: list[str] = []
        out: list[dict[str, Any]] = []
        for turn in found:
            if turn.role == "system" and not out:
                system.append(self.text_of(turn))
                continue
            if turn.role == "system":
                self.repair(
                    "system_as_user",
                    turn,
                    "a system message after the conversation began is sent as a user turn (Anthropic "
                    "takes a system prompt only before the messages)",
                )
                blocks = [{"type": "text", "text": self.text_of(turn)}]
                role = "user"
            elif turn.role == "tool":
                blocks = [self.anthropic_result(turn, answer) for answer in turn.answers]
                role = "user"
            elif turn.role == "assistant":
                blocks = self.anthropic_assistant(turn)
                role = "assistant"
            else:
                blocks = [block for b in turn.content for block in self.anthropic_block(b, turn)]
                role = "user"
            if out and out[-1]["role"] == role:
                if turn.role != "tool" and out[-1]["content"] and not _only_results(blocks):
                    self.repair(
                        "roles_merged", turn, f"two {role} turns in a row sent as one (roles alternate)"
                    )
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": role, "content": blocks})
        if out and out[0]["role"] == "assistant":
            self.repairs.append(
                Repair(
                    "leading_user_added",
                    "",
                    f"the context starts with an assistant turn: a user turn {LEADING_USER!r} comes first",
                )
            )
            out.insert(0, {"role": "user", "content": [{"type": "text", "text": LEADING_USER}]})
        if out and out[-1]["role"] == "assistant":
            self.trim_final(out[-1])
        return ("\n\n".join(system) if system else None), out

    def anthropic_assistant(self, turn: Turn) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        dropped = 0
        for block in turn.content:
            if isinstance(block, ThinkingBlock):
                if block.signature and (turn.model is None or "claude" in turn.model.lower()):
                    if block.redacted:
                        blocks.append({"type": "redacted_thinking", "data": block.signature})
                    else:
                        blocks.append(
                            {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
                        )
                else:
                    dropped += 1
            elif isinstance(block, ToolCallBlock):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": self.call_id(turn, block.call_id),
                        "name": block.name,
                        "input": block.arguments,
                    }
                )
            elif isinstance(block, TextBlock):
                blocks.append({"type": "text", "text": block.text})
            else:
                blocks.append({"type": "text", "text": self.placeholder(block, turn, "assistant")})
        if dropped:
            why = "unsigned" if turn.model is None or "claude" in turn.model.lower() else f"from {turn.model}"
            self.repair(
                "thinking_dropped",
                turn,
                f"{dropped} thinking block(s) dropped: Anthropic takes back only the signed thinking "
                f"Claude wrote ({why})",
            )
        return blocks

    def anthropic_block(self, block: Block, turn: Turn) -> list[dict[str, Any]]:
        if isinstance(block, TextBlock):
            return [{"type": "text", "text": block.text}]
        if isinstance(block, ImageBlock):
            image = self.image(block, turn, _ANTHROPIC_IMAGES)
            if isinstance(image, tuple):
                kind, value = image
                source = (
                    {"type": "url", "url": value}
                    if kind == "url"
                    else {"type": "base64", "media_type": _media(block.media_type), "data": value}
                )
                return [{"type": "image", "source": source}]
            return [{"type": "text", "text": image}]
        if isinstance(block, BlobBlock):
            return [{"type": "text", "text": self.blob_text(block, turn)}]
        return [{"type": "text", "text": self.placeholder(block, turn, "user")}]

    def anthropic_result(self, turn: Turn, answer: ToolAnswer) -> dict[str, Any]:
        content = [
            block
            for b in answer.content
            if not isinstance(b, ThinkingBlock | ToolCallBlock)
            for block in self.anthropic_block(b, turn)
            if block.get("type") != "text" or block["text"].strip()
        ]
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.call_id(turn, answer.call_id)}
        if content:
            result["content"] = content
        if answer.is_error:
            result["is_error"] = True
        return result

    def trim_final(self, message: dict[str, Any]) -> None:
        """Anthropic refuses a final assistant message whose text ends in whitespace."""
        last = message["content"][-1]
        if last.get("type") == "text" and last["text"] != last["text"].rstrip():
            last["text"] = last["text"].rstrip()
            self.repairs.append(
                Repair(
                    "trailing_whitespace_trimmed",
                    "",
                    "the final assistant text's trailing whitespace removed (Anthropic refuses it there)",
                )
            )

    # --- OpenAI Chat Completions -------------------------------------------------------------------

    def openai_chat(self, found: list[Turn]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for turn in found:
            if turn.role == "system":
                out.append({"role": "system", "content": self.text_of(turn)})
            elif turn.role == "user":
                out.append({"role": "user", "content": self.openai_parts(turn, "text", "image_url")})
            elif turn.role == "assistant":
                out.append(self.openai_assistant(turn))
            else:
                out += [
                    {
                        "role": "tool",
                        "tool_call_id": self.call_id(turn, answer.call_id),
                        "content": self.answer_text(turn, answer),
                    }
                    for answer in turn.answers
                ]
        return out

    def openai_assistant(self, turn: Turn) -> dict[str, Any]:
        self.drop_reasoning(turn)
        text = "\n\n".join(
            block.text if isinstance(block, TextBlock) else self.placeholder(block, turn, "assistant")
            for block in turn.content
            if not isinstance(block, ThinkingBlock | ToolCallBlock)
        )
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": self.call_id(turn, call.call_id),
                    "type": "function",
                    "function": {"name": call.name, "arguments": _arguments(call)},
                }
                for call in turn.calls
            ]
        return message

    def openai_parts(self, turn: Turn, text_type: str, image_type: str) -> Any:
        parts: list[dict[str, Any]] = []
        for block in turn.content:
            if isinstance(block, ImageBlock):
                image = self.image(block, turn, _OPENAI_IMAGES)
                if isinstance(image, tuple):
                    kind, value = image
                    url = value if kind == "url" else f"data:{_media(block.media_type)};base64,{value}"
                    parts.append(
                        {"type": image_type, "image_url": {"url": url}}
                        if image_type == "image_url"
                        else {"type": image_type, "image_url": url, "detail": "auto"}
                    )
                    continue
                text = image
            elif isinstance(block, TextBlock):
                text = block.text
            elif isinstance(block, BlobBlock):
                text = self.blob_text(block, turn)
            else:
                text = self.placeholder(block, turn, "user")
            parts.append({"type": text_type, "text": text})
        if all(part["type"] == text_type for part in parts) and text_type == "text":
            return "\n\n".join(part["text"] for part in parts)
        return parts

    def answer_text(self, turn: Turn, answer: ToolAnswer) -> str:
        pieces = []
        for block in answer.content:
            if isinstance(block, TextBlock):
                pieces.append(block.text)
            elif isinstance(block, BlobBlock):
                pieces.append(self.blob_text(block, turn))
            elif not isinstance(block, ThinkingBlock | ToolCallBlock):
                pieces.append(self.placeholder(block, turn, "tool"))
        return "\n\n".join(piece for piece in pieces if piece.strip())

    # --- OpenAI Responses ------------------------------------------------------------------------

    def openai_responses(self, found: list[Turn]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for turn in found:
            if turn.role == "system":
                out.append({"role": "system", "content": self.text_of(turn)})
            elif turn.role == "user":
                out.append({"role": "user", "content": self.openai_parts(turn, "input_text", "input_image")})
            elif turn.role == "assistant":
                self.drop_reasoning(turn)
                text = "\n\n".join(
                    b.text if isinstance(b, TextBlock) else self.placeholder(b, turn, "assistant")
                    for b in turn.content
                    if not isinstance(b, ThinkingBlock | ToolCallBlock)
                )
                if text:
                    out.append({"role": "assistant", "content": text})
                out += [
                    {
                        "type": "function_call",
                        "call_id": self.call_id(turn, call.call_id),
                        "name": call.name,
                        "arguments": _arguments(call),
                    }
                    for call in turn.calls
                ]
            else:
                out += [
                    {
                        "type": "function_call_output",
                        "call_id": self.call_id(turn, answer.call_id),
                        "output": self.answer_text(turn, answer),
                    }
                    for answer in turn.answers
                ]
        return out

    def drop_reasoning(self, turn: Turn) -> None:
        count = sum(isinstance(block, ThinkingBlock) for block in turn.content)
        if count:
            where = "Chat Completions" if self.provider == "openai-chat" else "the Responses API"
            self.repair(
                "thinking_dropped",
                turn,
                f"{count} thinking block(s) dropped: {where} takes no reasoning back from a journal",
            )

    # --- shared ----------------------------------------------------------------------------------

    def call_id(self, turn: Turn, recorded: str) -> str:
        """The id a call (and its result) is sent with: the recorded one where the provider takes it
        and no earlier call used it, else a stable rewrite (reported once)."""
        key = (turn.sources[0], recorded)
        sent = self.ids.get(key)
        if sent is not None:
            return sent
        valid = (
            _ANTHROPIC_ID.fullmatch(recorded) is not None
            if self.provider == "anthropic"
            else 0 < len(recorded) <= _OPENAI_ID_MAX
        )
        sent = recorded
        if not valid or recorded in self.used:
            clean = re.sub(r"[^A-Za-z0-9_-]", "_", recorded)[:40] or "call"
            digest = hashlib.sha256(f"{key[0]}\x00{recorded}".encode()).hexdigest()[:12]
            sent = f"{clean}_{digest}"
            why = "is used by an earlier call" if recorded in self.used else "is not an id it takes"
            self.repair("call_id_rewritten", turn, f"call id {recorded!r} {why}: sent as {sent!r}")
        self.ids[key] = sent
        self.used.add(sent)
        return sent

    def image(self, block: ImageBlock, turn: Turn, kinds: frozenset[str]) -> tuple[str, str] | str:
        """("url", URL) or ("base64", DATA) for an image the provider takes, else a placeholder."""
        media = _media(block.media_type)
        source = block.source
        if media not in kinds:
            return self.placeholder(block, turn, "user", why=f"{media} is not an image type it takes")
        if source.startswith(("https://", "http://")):
            return ("url", source)
        data: bytes | None = None
        if source.startswith("data:"):
            data = base64_payload(source)
        elif source.startswith(_BLOB_PREFIX) and self.blobs is not None:
            data = self.blobs.read(source.removeprefix(_BLOB_PREFIX))
        if not data:
            why = "no blob store was given" if source.startswith(_BLOB_PREFIX) else "no bytes to send"
            return self.placeholder(block, turn, "user", why=why)
        return ("base64", base64.b64encode(data).decode("ascii"))

    def blob_text(self, block: BlobBlock, turn: Turn) -> str:
        if self.blobs is not None and is_text(block.media_type):
            data: bytes = self.blobs.read(block.digest)
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        why = "no blob store was given" if self.blobs is None else "its bytes are not text"
        return self.placeholder(block, turn, "user", why=why)

    def placeholder(self, block: Block, turn: Turn, role: str, *, why: str = "") -> str:
        if isinstance(block, BlobBlock):
            text = f"[blob {block.name or ''} {block.media_type}, {block.size} bytes, sha256:{block.digest}]"
        elif isinstance(block, ImageBlock):
            text = f"[image: {block.media_type}]"
        else:
            text = f"[{type(block).__name__}]"
        why = why or f"{role} messages take no {type(block).__name__}"
        self.repair("content_placeholder", turn, f"{text} sent as text: {why}")
        return text

    def text_of(self, turn: Turn) -> str:
        return "\n\n".join(
            block.text if isinstance(block, TextBlock) else self.placeholder(block, turn, turn.role)
            for block in turn.content
        )

    def repair(self, kind: RepairKind, turn: Turn, detail: str) -> None:
        self.repairs.append(Repair(kind, turn.sources[-1] if turn.sources else "", detail))


def _only_results(blocks: list[dict[str, Any]]) -> bool:
    return bool(blocks) and all(block.get("type") == "tool_result" for block in blocks)


def _arguments(call: ToolCallBlock) -> str:
    return json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)


def _media(media_type: str) -> str:
    media = media_type.split(";", 1)[0].strip().lower()
    return "image/jpeg" if media == "image/jpg" else media
