"""OpenCode's compaction filter, and how its outcome maps onto waybook's compaction and exclusions.

OpenCode (anomalyco/opencode, packages/opencode/src/session/message-v2.ts) sends the model
`toModelMessages(filterCompacted(messages))`. `filterCompacted` walks the messages newest first:
- an assistant message with `summary`, `finish` and no `error` marks its `parentID` (the compaction's
  user message) completed;
- at a completed user message with a `compaction` part, the walk stops there, or, when the part names a
  `tail_start_id`, goes on back to that message and stops at it (the tail the compaction kept);
- then, if the newest user message with a tail-naming compaction part has a summary after it and its
  tail was found before it, the result is reordered: [compaction .. summary] + [tail .. compaction) +
  everything after the summary. Messages before the stop are not sent.

`filter_compacted` is that rule on the messages in order (JSON values compared as JavaScript compares
them), answering the positions sent, in the order sent. `plan` says how waybook's records reproduce it:
- `Summarized`: a `Compaction` after the summary message stands for the compaction message and its
  summary (the pair OpenCode puts first), keeping the tail; the pair itself is kept verbatim, out of the
  context (waybook shows the compaction's summary in its place).
- `Cut`: OpenCode's result is a plain suffix that starts elsewhere (a tail with no pair before it); each
  message before it is excluded, so nothing is added to what OpenCode sends (no compaction is reproduced
  then: an older one would bring its summary back).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

Message = tuple[dict[str, Any], Sequence[dict[str, Any]]]

_MISSING: Final = object()


def truthy(value: Any) -> bool:
    """JavaScript's truthiness of a decoded JSON value (`_MISSING`: undefined)."""
    if value is None or value is _MISSING or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, int | float):
        return value == value and value != 0  # NaN and 0 are falsy
    if isinstance(value, str):
        return value != ""
    return True  # every object and array, even empty


def _key(value: Any) -> Any:
    """A value as JavaScript's Set and === tell values apart (an object is only ever itself)."""
    if value is _MISSING or value is None or isinstance(value, str | bool):
        return ("v", type(value).__name__, value)
    if isinstance(value, int | float):
        return ("n", float(value)) if value == value else object()
    return object()


def same(a: Any, b: Any) -> bool:
    """`a === b` for decoded JSON values."""
    return bool(_key(a) == _key(b))


def _id(message: Message) -> Any:
    return message[0].get("id", _MISSING)


def _role(message: Message) -> Any:
    return message[0].get("role")


def _compaction_part(message: Message, *, with_tail: bool = False) -> dict[str, Any] | None:
    for part in message[1]:
        if part.get("type") == "compaction" and (not with_tail or "tail_start_id" in part):
            return part
    return None


def filter_compacted(messages: Sequence[Message]) -> list[int]:
    """The positions of `messages` (oldest first) that OpenCode sends, in the order it sends them."""
    result: list[int] = []
    completed: set[Any] = set()
    retain: Any = _MISSING
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        info = message[0]
        result.append(position)
        if truthy(retain):
            if same(_id(message), retain):
                break
            continue
        if _role(message) == "user" and _key(_id(message)) in completed:
            part = _compaction_part(message)
            if part is None:
                continue
            tail = part.get("tail_start_id", _MISSING)
            if not truthy(tail):
                break
            retain = tail
            if same(_id(message), retain):
                break
            continue
        if (
            _role(message) == "assistant"
            and truthy(info.get("summary", _MISSING))
            and truthy(info.get("finish", _MISSING))
            and not truthy(info.get("error", _MISSING))
        ):
            completed.add(_key(info.get("parentID", _MISSING)))
    result.reverse()
    found = [
        i
        for i, p in enumerate(result)
        if _role(messages[p]) == "user" and _compaction_part(messages[p], with_tail=True)
    ]
    if not found:
        return result
    at = found[-1]
    compaction = messages[result[at]]
    part = _compaction_part(compaction, with_tail=True)
    assert part is not None
    summary = next(
        (
            i
            for i in range(at + 1, len(result))
            if _role(messages[result[i]]) == "assistant"
            and truthy(messages[result[i]][0].get("summary", _MISSING))
            and same(messages[result[i]][0].get("parentID", _MISSING), _id(compaction))
        ),
        -1,
    )
    tail_id = part.get("tail_start_id", _MISSING)
    tail = (
        next((i for i, p in enumerate(result) if same(_id(messages[p]), tail_id)), -1)
        if truthy(tail_id)
        else -1
    )
    if 0 <= tail < at < summary:
        return result[at : summary + 1] + result[tail:at] + result[summary + 1 :]
    return result


@attrs.frozen
class Summarized:
    """OpenCode sends [compaction .. summary] + [tail .. compaction) + after the summary."""

    compaction: int
    summary: int
    tail: int | None


@attrs.frozen
class Cut:
    """OpenCode sends the messages from `start` on, as they are."""

    start: int


def plan(messages: Sequence[Message]) -> Summarized | Cut | None:
    """How to reproduce OpenCode's filtered context in waybook records (None: nothing is filtered)."""
    count = len(messages)
    sent = filter_compacted(messages)
    if sent == list(range(count)):
        return None
    first = sent[0]
    if _role(messages[first]) == "user" and _compaction_part(messages[first]) is not None:
        for summary in _summaries(messages, first):
            head, after = list(range(first, summary + 1)), list(range(summary + 1, count))
            rest = sent[len(head) :]
            if sent[: len(head)] != head or len(rest) < len(after) or rest[len(rest) - len(after) :] != after:
                continue
            kept = rest[: len(rest) - len(after)]
            if kept == list(range(first - len(kept), first)):
                return Summarized(first, summary, kept[0] if kept else None)
    if sent == list(range(first, count)):
        return Cut(first)
    return None  # not a shape OpenCode's rule makes; the import keeps the full context


def _summaries(messages: Sequence[Message], compaction: int) -> list[int]:
    """The summary messages answering the compaction at `compaction`: the completed ones first."""
    candidates = [
        p
        for p in range(compaction + 1, len(messages))
        if _role(messages[p]) == "assistant"
        and truthy(messages[p][0].get("summary", _MISSING))
        and same(messages[p][0].get("parentID", _MISSING), _id(messages[compaction]))
    ]

    def done(p: int) -> bool:
        info = messages[p][0]
        return truthy(info.get("finish", _MISSING)) and not truthy(info.get("error", _MISSING))

    return [p for p in candidates if done(p)] + [p for p in candidates if not done(p)]


def shapes(messages: Sequence[Message]) -> tuple[tuple[Summarized, ...], Cut | None]:
    """Every compaction the records reproduce, oldest first, and the cut at the end (if any).

    The compaction in force at the end is reproduced as `plan` says. An earlier completed compaction is
    reproduced too (so the context right after it was OpenCode's then), unless a later context OpenCode
    sends still shows its compaction or summary message (a later tail reaching back over it): there the
    pair stays two plain messages, as OpenCode shows them.

    When OpenCode's context at the end is a plain cut (`Cut`), no compaction is reproduced: every pair
    before the cut would put its summary back in front of the messages OpenCode sends, and none after it
    is compacted away (a newest compaction whose tail is missing, answered by an errored summary, leaves
    the walk at an older compaction's tail). The pairs stay plain messages, excluded with the rest.
    """
    final = plan(messages)
    if isinstance(final, Cut):
        return (), final
    shown = set(filter_compacted(messages))
    found: list[Summarized] = [final] if isinstance(final, Summarized) else []
    last = final.summary if isinstance(final, Summarized) else len(messages)
    for summary in range(last - 1, -1, -1):
        info = messages[summary][0]
        if not (
            _role(messages[summary]) == "assistant"
            and truthy(info.get("summary", _MISSING))
            and truthy(info.get("finish", _MISSING))
            and not truthy(info.get("error", _MISSING))
        ):
            continue
        earlier = plan(messages[: summary + 1])
        if not isinstance(earlier, Summarized) or earlier.summary != summary:
            continue
        if earlier.compaction in shown or earlier.summary in shown:
            continue
        if found and earlier.summary >= found[-1].compaction:
            continue  # it would overlap the next compaction's pair
        found.append(earlier)
        shown |= set(filter_compacted(messages[: summary + 1]))
    return tuple(reversed(found)), None
