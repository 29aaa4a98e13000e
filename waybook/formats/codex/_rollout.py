"""The Codex CLI's rollout JSONL, imported as waybook records.

A rollout line is `{timestamp, type, payload}`. Codex rebuilds what it sends to the model by replaying
the `response_item` payloads in order, replacing the whole history at a `compacted` line, and dropping
the last N user turns at a `thread_rolled_back` event (`replay_history` below does exactly that, and the
tests hold every import to it). Import maps:

- `session_meta`: the header (its payload in `metadata["codex"]`), and `base_instructions` as the
  first system message.
- A run of model output items (`reasoning`, assistant `message`, `function_call`, `custom_tool_call`,
  `web_search_call`, ...): one terminal assistant message of thinking, text and tool-call blocks, with
  each item's other fields in `details["codex"]["items"]`. The stop reason is inferred (`tool_use` when
  the run ends with a call) and the inference is recorded. Its usage is the token counts of the
  `token_count` events inside the run (each event's `last_token_usage`, as Codex wrote it: `input_tokens`
  includes `cached_input_tokens`); an event whose cumulative counts did not grow is a repeat, not counted.
- `function_call_output`, `custom_tool_call_output`: a tool result answering its call by `call_id`.
- User, developer and system `message`s: user and system messages.
- `event_msg` `user_message` (the prompt as Codex's interface shows it): a user message when no user
  `response_item` of its turn carries the same text (rollouts that record the prompt only as an event),
  closing the turn before it; else kept as below, so a prompt is never imported twice. Codex itself
  rebuilds its history from response items only (`replay_history`); such a prompt is the one node the
  import adds to it.
- `compacted`: a reset, a `codex.compacted` entry holding the line, and the replacement history as the
  new root path, since Codex sends exactly that history afterwards. (Not a waybook compaction record:
  that one always renders its summary first, which is not what Codex sends.)
- `event_msg` `thread_rolled_back`: a leaf move back past the last N user turns (the dropped turns stay
  in the journal), and the event kept.
- Every other `event_msg`, `turn_context` and unknown line: a custom entry `codex.<type>` holding the
  line verbatim, out of the model context.

Ids are `cx-<line>` (deterministic), the header's id is the rollout's session id. A rollout forked from
another names it in `session_meta.forked_from_id`; the header's metadata keeps it as `forked_from`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs
import msgspec

from waybook.formats._foreign import (
    FALLBACK_TIMESTAMP,
    ForeignFormatError,
    ImportReport,
    LineTally,
    NotThisFormatError,
    named,
    read_json_lines,
    stable_id,
    text_of,
    timestamp,
)
from waybook.formats._growing import JsonLines, feed_all
from waybook.formats._responses import (
    call_names,
    is_model_item,
    item_body,
    items_of_context,
    kind_of,
    message_body,
    turn_body,
)
from waybook.model import AnyBody, CustomEntry, Header, LeafMoved, NewRecord, Reset, SystemMessage, TextBlock

SOURCE: Final = "codex"
PROMPT_EVENT: Final = "codex_event"
"""The details key of a user message made from an `event_msg` `user_message`: its line and payload."""
_CONTEXTUAL_USER_PREFIXES: Final = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<skill>",
    "<user_shell_command>",
)


@attrs.frozen
class CodexImport:
    records: tuple[NewRecord, ...]
    report: ImportReport


def import_codex(data: bytes | str, *, lenient: bool = False, name: str | None = None) -> CodexImport:
    """Map a Codex rollout file's content to the records of a new journal, with a report of every line.
    `name` names the journal in its header instead of the session's id (which its metadata keeps)."""
    rollout = GrowingRollout(lenient=lenient, name=name)
    feed_all(rollout, data)
    rollout.raise_problems()
    return CodexImport(records=tuple(rollout.records), report=rollout.report())


class GrowingRollout:
    """A Codex rollout imported a line at a time (`waybook.formats._growing.GrowingImport`): the records
    wait for the `session_meta` line (the header); a run of model output items waits for the item that
    ends it, as the whole-file import writes it as one assistant entry."""

    def __init__(self, *, lenient: bool = False, name: str | None = None) -> None:
        self.lines = JsonLines(source=SOURCE, lenient=lenient)
        self._name = name
        self._builder = _Builder()
        self._token_counts = 0  # lines read that hold only token counts
        self._other = False  # whether a line read holds anything else
        self._meta = False  # whether a session_meta line was read
        self._mapping: list[tuple[int, str]] = []
        self._finished = False

    def feed(self, number: int, line: bytes | str) -> None:
        if self._finished:
            msg = "the rollout was finished: nothing more can be fed"
            raise ValueError(msg)
        value = self.lines.take(number, line)
        if value is None:
            return
        payload = value.get("payload")
        if value.get("type") == "session_meta":
            self._meta = True
        if (
            value.get("type") == "event_msg"
            and isinstance(payload, dict)
            and payload.get("type") == "token_count"
        ):
            self._token_counts += 1
        else:
            self._other = True
        self._builder.take(number, value)

    @property
    def records(self) -> Sequence[NewRecord]:
        header = self._builder.header
        return () if header is None else [named(header, self._name), *self._builder.records]

    @property
    def problems(self) -> Sequence[tuple[int, str]]:
        return [*self.lines.problems, *self._builder.problems, *self._mapping]

    def pending(self) -> tuple[NewRecord, ...]:
        if self._finished or self._builder.header is None:
            return ()
        clone = self._builder.fork()
        clone.finish()
        return tuple(clone.records[len(self._builder.records) :])

    def finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        try:
            self._builder.finish()
        except _MAPPING_ERRORS as exc:
            self._mapping.append((self.lines.total, f"{type(exc).__name__}: {exc}"))

    def report(self) -> ImportReport:
        builder = self._builder
        if not self._finished:
            builder = builder.fork()
            builder.finish()
        return self.lines.report(builder.tally, builder.inferred)

    def raise_problems(self) -> None:
        """Raise what an import of the whole file raises: lines that are not JSON objects, a file with no
        session_meta line, lines that could not be mapped."""
        self.lines.raise_problems()
        if not self._meta:
            raise NotThisFormatError(SOURCE, _not_a_rollout(self._token_counts, other=self._other))
        if self._builder.problems or self._mapping:
            raise ForeignFormatError(SOURCE, sorted([*self._builder.problems, *self._mapping]))
        if self._builder.header is None:
            raise ForeignFormatError(SOURCE, [(1, "no session_meta line: this is not a Codex rollout")])


_MAPPING_ERRORS: Final = (KeyError, TypeError, ValueError, AttributeError, RecursionError)


def _not_a_rollout(token_counts: int, *, other: bool) -> str:
    """What a file without a session_meta header holds instead."""
    if token_counts and not other:
        return (
            f"holds only token counts ({token_counts} event_msg token_count lines) and no session_meta "
            "header: there is no session in it to import"
        )
    return "no session_meta line: this is not a Codex rollout"


# --- the reference: what Codex sends -----------------------------------------------------------------


def is_user_turn_boundary(item: Any) -> bool:
    """A user message that starts a turn (not one of the context messages Codex injects)."""
    if not isinstance(item, dict) or item.get("type") != "message" or item.get("role") != "user":
        return False
    for text in text_of(item.get("content")):
        if text.lstrip().lower().startswith(_CONTEXTUAL_USER_PREFIXES):
            return False
    return True


def replay_history(data: bytes | str) -> list[dict[str, Any]]:
    """The response items Codex sends after the last line of a rollout, replayed as Codex replays them."""
    lines, _, _ = read_json_lines(data, source=SOURCE, lenient=True)
    history: list[dict[str, Any]] = []
    for _, line in lines:
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "response_item":
            history.append(payload)
        elif kind == "compacted":
            history = _after_compaction(history, payload)
        elif kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            del history[_rollback_cut(history, payload.get("num_turns", 0)) :]
    return history


def _after_compaction(history: list[dict[str, Any]], payload: dict[str, Any]) -> list[dict[str, Any]]:
    replacement = payload.get("replacement_history")
    if isinstance(replacement, list):
        return [item for item in replacement if isinstance(item, dict)]
    first_user = next((i for i, item in enumerate(history) if is_user_turn_boundary(item)), len(history))
    users = [
        _user_message("\n".join(text_of(item.get("content"))))
        for item in history
        if is_user_turn_boundary(item)
    ]
    return [*history[:first_user], *users, _user_message(str(payload.get("message", "")))]


def _user_message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _rollback_cut(history: list[dict[str, Any]], turns: Any) -> int:
    if not isinstance(turns, int) or turns <= 0:
        return len(history)
    users = [i for i, item in enumerate(history) if is_user_turn_boundary(item)]
    if not users:
        return len(history)
    return users[0] if turns >= len(users) else users[len(users) - turns]


# --- prompts recorded only as events ----------------------------------------------------------------


def event_prompts(lines: list[tuple[int, dict[str, Any]]]) -> set[int]:
    """The lines of `event_msg` `user_message`s that no user `response_item` of their turn (the lines
    between the model items before and after the event) carries: prompts recorded only as events."""
    found: set[int] = set()
    turn: list[str] = []  # the texts of the user response items since the last model item
    waiting: list[tuple[int, str]] = []  # events of this turn not matched yet
    for number, line in lines:
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "response_item" and is_model_item(payload):
            found.update(n for n, _ in waiting)
            turn, waiting = [], []
        elif kind == "response_item" and is_user_turn_boundary(payload):
            turn.append(_spaced("\n".join(text_of(payload.get("content")))))
            waiting = [(n, text) for n, text in waiting if not _carries(turn[-1], text)]
        elif _is_prompt_event(kind, payload):
            text = _spaced(str(payload.get("message", "")))
            if not any(_carries(item, text) for item in turn):
                waiting.append((number, text))
    found.update(n for n, _ in waiting)
    return found


def _is_prompt_event(kind: Any, payload: dict[str, Any]) -> bool:
    return (
        kind == "event_msg"
        and payload.get("type") == "user_message"
        and isinstance(payload.get("message"), str)
    )


def _spaced(text: str) -> str:
    return " ".join(text.split())


def _carries(item_text: str, prompt: str) -> bool:
    return bool(prompt) and (item_text == prompt or prompt in item_text)


# --- mapping -------------------------------------------------------------------------------------------


class _Builder:
    def __init__(self) -> None:
        self.prompts: set[int] = set()  # the event_msg user_message lines that become user messages
        self.turn_texts: list[str] = []  # the texts of the user response items since the last model item
        self.waiting: list[tuple[int, str]] = []  # prompt events of this turn no user item carried yet
        self.held: list[tuple[int, dict[str, Any]]] = []  # lines read while a prompt event waits
        self.problems: list[tuple[int, str]] = []  # lines that could not be mapped
        self.header: NewRecord | None = None
        self.records: list[NewRecord] = []
        self.tally = LineTally()
        self.inferred: list[str] = []
        self.at = FALLBACK_TIMESTAMP
        self.leaf: str | None = None
        self.model: str | None = None
        self.calls: dict[str, str] = {}  # call_id -> tool name
        self.history: list[tuple[dict[str, Any], str]] = []  # (item, node id) as Codex would send them
        self.turn: list[tuple[int, dict[str, Any]]] = []  # model items of the open assistant turn
        self.usage: dict[str, int] = {}  # the token counts of the open turn's requests
        self.turn_at = FALLBACK_TIMESTAMP  # the time of the open turn's last item
        self.totals: Any = None  # the session's cumulative token counts, as the last token_count gave them
        self.deferred: list[tuple[int, dict[str, Any]]] = []  # lines seen inside the open turn

    # lines

    def take(self, number: int, line: dict[str, Any]) -> None:
        """Read one line. A prompt recorded only as an event (`event_prompts`' rule) is decided when its
        turn shows whether a user response item carries it: it waits, with every line after it, until a
        model item (a prompt) or a user item carrying its text (not one) comes, or the file ends."""
        kind, payload = line.get("type"), line.get("payload")
        if isinstance(payload, dict):
            if kind == "response_item" and is_model_item(payload):
                self.prompts.update(n for n, _ in self.waiting)
                self.turn_texts, self.waiting = [], []
            elif kind == "response_item" and is_user_turn_boundary(payload):
                self.turn_texts.append(_spaced("\n".join(text_of(payload.get("content")))))
                self.waiting = [
                    (n, text) for n, text in self.waiting if not _carries(self.turn_texts[-1], text)
                ]
            elif _is_prompt_event(kind, payload):
                text = _spaced(str(payload.get("message", "")))
                if not any(_carries(item, text) for item in self.turn_texts):
                    self.waiting.append((number, text))
        self.held.append((number, line))
        if not self.waiting:
            self._run_held()

    def _run_held(self) -> None:
        held, self.held = self.held, []
        for number, line in held:
            try:
                self._take(number, line)
            except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
                self.problems.append((number, f"{type(exc).__name__}: {exc}"))

    def _take(self, number: int, line: dict[str, Any]) -> None:
        self.at = timestamp(line.get("timestamp"), self.at)
        kind, payload = line.get("type"), line.get("payload")
        if kind == "response_item" and isinstance(payload, dict):
            if is_model_item(payload):
                self.turn_at = self.at  # the turn is dated by its last item, not by the line that closes it
            self._item(number, payload)
        elif number in self.prompts:
            self._close_turn()
            self._prompt(number, line)
        elif self.turn and kind != "compacted" and not _is_rollback(kind, payload):
            for key, value in self._request_usage(payload).items():
                self.usage[key] = self.usage.get(key, 0) + value
            self.deferred.append((number, line))  # keeps the turn one record; emitted right after it
        else:
            self._other(number, line)

    def finish(self) -> None:
        self.prompts.update(n for n, _ in self.waiting)  # the file ends: what waits is a prompt
        self.waiting = []
        self._run_held()
        self._close_turn()

    def fork(self) -> _Builder:
        """A copy that can be finished without changing this one (lines and items are shared: no one
        changes them once read)."""
        clone = _Builder.__new__(_Builder)
        clone.__dict__.update(self.__dict__)
        for key, value in self.__dict__.items():
            if isinstance(value, list | dict | set):
                setattr(clone, key, type(value)(value))
        clone.tally = self.tally.fork()
        return clone

    def _other(self, number: int, line: dict[str, Any], *, deferred: bool = False) -> None:
        kind, payload = line.get("type"), line.get("payload")
        if kind == "session_meta" and self.header is None and isinstance(payload, dict):
            self._session_meta(number, payload)
        elif kind == "compacted" and isinstance(payload, dict):
            self._close_turn()
            self._compacted(number, line, payload)
        elif _is_rollback(kind, payload):
            self._close_turn()
            self._rollback(number, line)
        else:
            if kind == "turn_context" and isinstance(payload, dict):
                self.model = payload.get("model", self.model)
            if not deferred and self._request_usage(payload):
                self.inferred.append(
                    f"line {number}: token counts outside a model turn, kept but not as usage"
                )
            self._keep(number, line)

    def _request_usage(self, payload: Any) -> dict[str, int]:
        """The token counts of the model request a `token_count` event reports (its `last_token_usage`,
        else the growth of its cumulative `total_token_usage`); none for another line, or for a repeat
        (the cumulative counts did not grow: no request was made)."""
        if not isinstance(payload, dict) or payload.get("type") != "token_count":
            return {}
        info = payload.get("info")
        if not isinstance(info, dict):
            return {}
        total, last = info.get("total_token_usage"), info.get("last_token_usage")
        previous = self.totals
        if isinstance(total, dict):
            self.totals = total
            if total == previous:
                return {}
        if isinstance(last, dict):
            return {k: v for k, v in last.items() if type(v) is int}
        if isinstance(total, dict):
            before = previous if isinstance(previous, dict) else {}
            return {k: v - _count(before.get(k)) for k, v in total.items() if type(v) is int}
        return {}

    def _item(self, number: int, item: dict[str, Any]) -> None:
        if is_model_item(item):
            self.turn.append((number, item))
            return
        self._close_turn()
        if kind_of(item) == "message":
            self._node(number, message_body(item, self.leaf, SOURCE), [item])
        else:
            name = self.calls.get(str(item.get("call_id")))
            self._node(number, item_body(item, self.leaf, SOURCE, name), [item])

    # records

    def _node(self, number: int, body: AnyBody, items: list[dict[str, Any]]) -> str:
        node_id = f"cx-{number}"
        self.records.append(NewRecord(id=node_id, at=self.at, body=body))
        self.tally.mapped(number)
        self.leaf = node_id
        self.history.extend((item, node_id) for item in items)
        return node_id

    def _keep(self, number: int, line: dict[str, Any]) -> None:
        kind = line.get("type")
        payload = line.get("payload")
        sub = payload.get("type") if isinstance(payload, dict) else None
        name = f"codex.{kind}" + (f".{sub}" if kind == "event_msg" and isinstance(sub, str) else "")
        node_id = f"cx-{number}"
        body = CustomEntry(parent=self.leaf, type=stable_id(name), data=line)
        self.records.append(NewRecord(id=node_id, at=self.at, body=body))
        self.leaf = node_id
        self.tally.kept(number)

    def _prompt(self, number: int, line: dict[str, Any]) -> None:
        """A prompt Codex recorded only as an `event_msg`: the user message of its turn."""
        payload = line["payload"]
        item = _user_message(str(payload["message"]))
        body = message_body(item, self.leaf, SOURCE)
        event = {"line": number, "payload": payload}
        body = msgspec.structs.replace(body, details={**(body.details or {}), PROMPT_EVENT: event})
        self._node(number, body, [item])

    def _session_meta(self, number: int, payload: dict[str, Any]) -> None:
        session = payload.get("id")
        journal = stable_id(session) if isinstance(session, str) and session else "codex-session"
        meta: dict[str, Any] = {"codex": payload}
        if isinstance(payload.get("forked_from_id"), str):
            meta["forked_from"] = payload["forked_from_id"]
        self.header = NewRecord(
            id=journal, at=self.at, body=Header(journal=journal, creator="codex", metadata=meta)
        )
        self.tally.mapped(number)
        instructions = payload.get("base_instructions")
        text = instructions.get("text") if isinstance(instructions, dict) else instructions
        if isinstance(text, str):
            body = SystemMessage(
                parent=self.leaf,
                content=(TextBlock(text=text),),
                details={SOURCE: {"base_instructions": True}},
            )
            self.records.append(NewRecord(id="cx-instructions", at=self.at, body=body))
            self.leaf = "cx-instructions"

    def _close_turn(self) -> None:
        if not self.turn:
            return
        turn, self.turn = self.turn, []
        now, self.at = self.at, self.turn_at
        items = [item for _, item in turn]
        self.calls.update(call_names(items))
        body = turn_body(items, self.leaf, self.model, SOURCE, lines=[n for n, _ in turn])
        if self.usage:
            body = msgspec.structs.replace(body, usage=self.usage)
            self.usage = {}
        first = turn[0][0]
        self.inferred.append(
            f"line {first}: stop reason {body.stop_reason!r} inferred from the turn's last item"
        )
        self._node(first, body, items)
        for number, _ in turn[1:]:
            self.tally.mapped(number)
        deferred, self.deferred = self.deferred, []
        for number, line in deferred:
            self.at = timestamp(line.get("timestamp"), self.at)
            self._other(number, line, deferred=True)
        self.at = now

    def _compacted(self, number: int, line: dict[str, Any], payload: dict[str, Any]) -> None:
        replacement = _after_compaction([item for item, _ in self.history], payload)
        reset = Reset(reason="codex: compacted", actor="codex")
        self.records.append(NewRecord(id=f"cx-{number}-reset", at=self.at, body=reset))
        marker = f"cx-{number}"
        body = CustomEntry(parent=None, type="codex.compacted", data=line)
        self.records.append(NewRecord(id=marker, at=self.at, body=body))
        self.leaf = marker
        self.history = []
        self.tally.mapped(number)
        for index, item in enumerate(replacement):
            node_id = f"cx-{number}.{index}"
            name = self.calls.get(str(item.get("call_id")))
            self.records.append(
                NewRecord(id=node_id, at=self.at, body=item_body(item, self.leaf, SOURCE, name))
            )
            self.leaf = node_id
            self.history.append((item, node_id))

    def _rollback(self, number: int, line: dict[str, Any]) -> None:
        payload = line["payload"]
        cut = _rollback_cut([item for item, _ in self.history], payload.get("num_turns", 0))
        target = self.history[cut - 1][1] if cut > 0 else None
        if cut < len(self.history):
            reason = f"codex: thread rolled back {payload.get('num_turns')} turn(s)"
            move = LeafMoved(from_leaf=self.leaf, to_leaf=target, reason=reason, actor="codex")
            self.records.append(NewRecord(id=f"cx-{number}-move", at=self.at, body=move))
            self.leaf = target
            del self.history[cut:]
        self._keep(number, line)
        self.tally.mapped(number)  # the line was kept, and the move it caused was mapped


def _count(value: Any) -> int:
    return value if type(value) is int else 0


def _is_rollback(kind: Any, payload: Any) -> bool:
    return kind == "event_msg" and isinstance(payload, dict) and payload.get("type") == "thread_rolled_back"


# --- back: the items Codex would be sent for a waybook context ---------------------------------------


def context_items(messages: Any) -> list[dict[str, Any]]:
    """The Codex response items for waybook context messages of an imported rollout, in order.

    `messages` is what `waybook.projections.context_at` returns. The base instructions (sent by Codex as
    `instructions`, not as an item) are left out.
    """
    return items_of_context(messages, SOURCE)
