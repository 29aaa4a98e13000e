"""Training exports of session trajectories: OpenAI chat fine-tuning rows, ShareGPT, TRL preference
pairs, and one sample per assistant turn.

A trajectory is one root-to-leaf path. What each exported row holds, in order: the messages on the path
(system, user, assistant with its tool calls, tool results, and custom entries written for the
context), minus compaction bookkeeping and minus every entry a context exclusion on the path removed,
made valid for training by `TrainingOptions` (see waybook.export._cleaning). Nothing from another branch
appears. Every row carries provenance in `metadata` (journal id, leaf id, head seq and digest), which
trainers ignore. A per-turn sample holds instead the exact context the model saw before that turn
(after compaction and exclusions) and the turn itself.

What the journal keeps as blobs (images, large tool outputs) is read from the store's blobs given as
`blobs` and put in the rows (see waybook.export._messages).

Output is deterministic: the same journal (and the blobs it references) always gives the same bytes.
"""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from collections.abc import Container, Iterator, Sequence
from typing import Any, Final, Literal

import attrs
import msgspec

from waybook._redact import Redactor, compile_patterns
from waybook.export._cleaning import ImagePart, Message, TrainingOptions, clean
from waybook.export._forks import ForkEnds
from waybook.export._formats import openai_dpo_row, sharegpt_row, tools_for, trl_messages
from waybook.export._messages import BlobReader, to_message
from waybook.export._rows import encode_row, openai_messages, openai_row
from waybook.journal import SessionJournal, read_seqs, shown_records
from waybook.model import (
    Annotation,
    AssistantMessage,
    Compaction,
    CustomEntry,
    Head,
    Header,
    Record,
    ToolCallBlock,
)
from waybook.projections import COMPACTION_PREAMBLE, TreeProjection, TreeState, context_at, replay

__all__ = ["Message", "Selection", "TrainingOptions", "TrajectoryExporter", "encode_row", "to_message"]

Format = Literal["openai", "sharegpt", "trl-sft"]
PairFormat = Literal["openai", "openai-dpo", "trl-dpo", "trl-kto"]
LABEL_TYPES: Final = frozenset({"waybook.label", "pi.label"})
PREFERENCE: Final = "waybook.preference"
"""The type of the Annotation `waybook label` records (data: label, reason)."""


@attrs.frozen
class Selection:
    """Which branches to export: "active", "all", or one leaf id."""

    branches: str = "active"

    def leaves(self, tree: TreeState) -> list[str]:
        if self.branches == "active":
            return [tree.leaf_id] if tree.leaf_id is not None else []
        if self.branches == "all":
            return list(tree.leaves())
        tree.position(self.branches)  # KeyError names an unknown leaf
        return [self.branches]


def _split_lead(tail: list[Message]) -> tuple[list[Message], list[Message]]:
    """`tail` split before its first assistant message: what the branch's answer responds to, and the
    answer on."""
    first = next(i for i, m in enumerate(tail) if m.role == "assistant")
    return tail[:first], tail[first:]


def _path_exclusions(tree: TreeState, records: list[Record]) -> set[str]:
    """The ids the exclusions among a path's `records` take out of it."""
    positions = [tree.position(r.id) for r in records]
    return {tree.ids[tree.exclusions[p]] for p in positions if p in tree.exclusions}


def holds_erased(records: Sequence[Record], excluded: Container[str] = ()) -> bool:
    """Whether any of `records` (but those `excluded`) had its content erased."""
    return any(r.erased is not None and r.id not in excluded for r in records)


def path_messages(
    tree: TreeState, records: list[Record], options: TrainingOptions, dropped: Counter[str], blobs: Any = None
) -> list[Message]:
    """The messages of a root-to-leaf path's records, honouring the exclusions on the path."""
    excluded = _path_exclusions(tree, records)
    messages: list[Message] = []
    for record in records:
        if record.id in excluded:
            continue
        message = to_message(record, options, dropped, blobs)
        if message is not None:
            messages.append(message)
    return messages


_UNSET: Final = object()
ERASED_ROWS: Final = "rows holding erased content (--erased drop)"
"""The reason `dropped` counts a row left out by `TrainingOptions(erased="drop")` under."""


class TrajectoryExporter:
    """Exports one journal's chosen branches as JSONL rows; `dropped` counts what cleaning left out."""

    def __init__(
        self,
        journal: SessionJournal,
        *,
        at: int | None = None,
        redact: bool = False,
        redact_patterns: Sequence[str] = (),
        tree: TreeState | None = None,
        options: TrainingOptions | None = None,
        blobs: Any = None,
        provenance: bool = False,
    ) -> None:
        """`provenance`: each row also carries `metadata` (journal, leaf, head), a key the trainers'
        formats do not define (off by default: rows hold only what their format documents)."""
        self.journal = journal
        self.provenance_rows = provenance
        self.blobs = BlobReader(blobs) if blobs is not None else None
        self.tree = tree if tree is not None else replay(TreeProjection(), journal, at=at)
        self.head = Head(self.tree.seq, self.tree.digest)
        first = next(journal.read(limit=1), None)
        self.header = first.body if first is not None and isinstance(first.body, Header) else None
        extra = compile_patterns(redact_patterns)  # ValueError (RedactPatternError) for a bad one
        self.redactor = Redactor(extra=extra) if redact or extra else None
        self.options = options or TrainingOptions()
        self.dropped: Counter[str] = Counter()
        self._excluded = {self.tree.ids[p] for p in self.tree.exclusions.values()}
        self._tools: Any = _UNSET
        self._labels: dict[str, str] | None = None
        self._masked_ids: dict[str, str] = {}
        """Every record an exclusion anywhere in the journal took back (per-turn samples leave them out)."""

    @property
    def journal_id(self) -> str:
        return self.header.journal if self.header is not None else self.journal.name

    def provenance(self, leaf: str) -> dict[str, Any]:
        return {
            "journal": self._id(self.journal_id),
            "leaf": self._id(leaf),
            "head": {"seq": self.head.seq, "digest": self.head.digest},
        }

    def _id(self, value: str) -> str:
        """A journal or node id as a redacted export writes it (an id can spell a secret too)."""
        return value if self.redactor is None else self.redactor.text(value)

    def messages(self, leaf: str, options: TrainingOptions | None = None) -> list[Message] | None:
        """The clean messages of the path to `leaf`, or None when it holds erased content and
        `options.erased` is "drop" (counted)."""
        options = options or self.options
        seqs = [self.tree.seqs[p] for p in self.tree.path_positions(self.tree.position(leaf))]
        records = self._read(seqs)
        if options.erased == "drop" and holds_erased(records, _path_exclusions(self.tree, records)):
            self.dropped[ERASED_ROWS] += 1
            return None
        raw = path_messages(self.tree, records, options, self.dropped, self.blobs)
        return self._redacted(clean(raw, options, self.dropped))

    def _read(self, seqs: list[int]) -> list[Record]:
        """The records at `seqs` (a path, in order), each erased one as the placeholder naming its
        erasure (an erased assistant message keeps the calls its results answer)."""
        return shown_records(self.journal, read_seqs(self.journal, seqs))

    def rows(self, fmt: Format, selection: Selection) -> Iterator[dict[str, Any]]:
        options = self.options
        if fmt != "openai" and options.images == "inline":  # ShareGPT and TRL rows have no image form
            options = attrs.evolve(options, images="placeholder")
        for leaf in selection.leaves(self.tree):
            messages = self.messages(leaf, options)
            if messages is None:
                continue
            if not any(m.role == "assistant" for m in messages):
                self.dropped["rows without an assistant turn"] += 1
                continue
            if messages[-1].role == "user" and leaf != self.tree.leaf_id:
                # an abandoned branch whose last turn was never answered (a run that crashed after its
                # input was saved, then rewound): the session went on elsewhere, so it teaches nothing
                self.dropped["abandoned branches that end on a user message (never answered)"] += 1
                continue
            tools = tools_for(messages, self.tools())
            row: dict[str, Any] | None
            if fmt == "openai":
                row = openai_row(messages, tools, self.dropped)
            elif fmt == "trl-sft":
                row = {"messages": trl_messages(messages), "tools": tools, "outcome": self.outcome(leaf)}
            else:
                row = sharegpt_row(messages, tools, self.dropped)
            if row is None:
                continue
            if self.provenance_rows:
                row["metadata"] = self.provenance(leaf)
            yield row

    def outcome(self, leaf: str) -> str | None:
        """The label in force nearest the leaf on its path (`chosen`, `rejected`, or any other label
        `waybook label` recorded), or None: the row's outcome column."""
        labels = self.labels()
        for position in reversed(self.tree.path_positions(self.tree.position(leaf))):
            label = labels.get(self.tree.ids[position])
            if label is not None:
                return label
        return None

    def turns(self, selection: Selection, fmt: Format = "openai") -> Iterator[dict[str, Any]]:
        """One row per assistant turn: the exact context the model saw, then the turn.

        `fmt` "openai": a chat row whose earlier assistant messages carry `weight: 0` (OpenAI's fine-tuning
        honours it, so only the last is learned). "trl-sft": TRL's prompt/completion row, `{"prompt":
        context, "completion": [turn], "tools"}`, which TRL trains with completion-only loss (TRL ignores
        `weight`). Provenance
        names the turn's record (seq, id, digest), the records its context came from, and a digest over
        them. Each assistant record is exported once, even when several selected branches share it.
        """
        options = self.options
        if fmt != "openai" and options.images == "inline":  # TRL rows have no image form
            options = attrs.evolve(options, images="placeholder")
        done: set[int] = set()
        for leaf in selection.leaves(self.tree):
            positions = self.tree.path_positions(self.tree.position(leaf))
            wanted = [
                p for p in positions if p not in done and self.tree.kinds[p].startswith("waybook.assistant/")
            ]
            done.update(wanted)
            for record in self._read([self.tree.seqs[p] for p in wanted]):
                row = self._turn(record, fmt, options)
                if row is not None:
                    yield row

    def _turn(self, record: Record, fmt: Format, options: TrainingOptions) -> dict[str, Any] | None:
        body = record.body
        assert isinstance(body, AssistantMessage)
        # Content excluded anywhere in the journal never leaves it, even from turns written before the
        # exclusion (an exclusion is how a leaked secret is taken back).
        excluded = self._excluded
        if record.id in excluded:
            self.dropped["assistant turns excluded from the context"] += 1
            return None
        context = context_at(self.journal, self.tree, body.parent) if body.parent is not None else ()
        if options.erased == "drop" and (
            record.erased is not None or holds_erased([shown.record for shown in context], excluded)
        ):
            self.dropped[ERASED_ROWS] += 1
            return None
        seen: list[Message] = []
        scratch: Counter[str] = Counter()  # what each context loses was counted where it was a turn
        for shown in context:
            if shown.record.id in excluded:
                continue
            if isinstance(shown.record.body, Compaction):
                summary = shown.record.body.summary
                seen.append(
                    Message("user", COMPACTION_PREAMBLE + summary if shown.record.body.preamble else summary)
                )
            elif (message := to_message(shown.record, options, scratch, self.blobs)) is not None:
                seen.append(message)
        target = to_message(record, options, self.dropped, self.blobs)
        assert target is not None
        messages = clean([*seen, target], options, scratch, open_end=True)
        if not messages or messages[-1].role != "assistant" or messages[-1].stopped != target.stopped:
            self.dropped["assistant turns with nothing to learn (aborted or empty)"] += 1
            return None
        if target.thinking and options.thinking == "drop":
            self.dropped["thinking blocks"] += 1
        messages = self._redacted(messages)
        tools = tools_for(messages, self.tools())
        row: dict[str, Any]
        if fmt == "trl-sft":
            row = {
                "prompt": trl_messages(messages[:-1]),
                "completion": trl_messages(messages[-1:]),
                "tools": tools,
            }
        else:
            row = openai_row(messages, tools, self.dropped)
            for earlier in row["messages"][:-1]:
                if earlier["role"] == "assistant":
                    earlier["weight"] = 0
        if not self.provenance_rows:
            return row
        digests = [shown.record.digest for shown in context]
        row["metadata"] = {
            "journal": self._id(self.journal_id),
            "turn": {"seq": record.seq, "id": self._id(record.id), "digest": record.digest},
            "context": {
                "seqs": [shown.record.seq for shown in context],
                "digest": hashlib.sha256("\n".join(digests).encode()).hexdigest(),
            },
            "head": {"seq": self.head.seq, "digest": self.head.digest},
        }
        return row

    def pairs(self, fmt: PairFormat = "openai") -> Iterator[dict[str, Any]]:
        """Preference rows at every fork where one branch is chosen (see docs/export.md).

        A branch end's verdict at a fork comes from the labels in force on the nodes strictly after the
        fork on its path: "rejected" wins over "chosen"; with neither, the end is unlabelled. Only an
        explicit "chosen" makes a pair (the active leaf alone never does). A label on the fork or above it
        covers every branch alike and decides nothing there. Each chosen end is paired with every end of
        the fork's other children that is not chosen (unlabelled siblings count as rejected). Labels are
        `waybook label` annotations (type `waybook.preference`) and `waybook.label` / Pi `label` entries.

        Chosen and rejected share one prompt: the path up to the fork, with every exclusion on any
        branch of the fork applied (an exclusion takes a leaked secret back), and what both branches
        hold before their answer when that is the same (a question asked again word for word). Each
        completion starts at its branch's first assistant turn: a branch with none (a crash right after a
        user message) is never a completion, and two branches that answer different messages (a fork on
        an assistant turn, then two different user replies or tool results) make no pair (counted); as
        KTO rows, each keeps its own prompt. `fmt`: "trl-dpo" (`prompt`/`chosen`/`rejected`, TRL
        messages), "openai" (the same in OpenAI message form), "openai-dpo" (`input`/`preferred_output`/
        `non_preferred_output`, one assistant message each: pairs whose branches do not start with an
        assistant turn are left out, counted), "trl-kto" (one `prompt`/`completion`/`label` row per
        branch end of a pair, each once).
        """
        labels = self.labels()
        if "chosen" not in labels.values():
            return  # no end is chosen anywhere: no fork makes a pair
        tree = self.tree
        found = ForkEnds(tree, labels)
        kto_done: set[tuple[int, int]] = set()
        for fork in range(tree.node_count):
            children = list(tree.children_positions(fork))
            if len(children) < 2 or not any(found.holds_chosen(child) for child in children):
                continue
            prompt = self._prompt(fork, found)
            if prompt is None:
                continue
            tails: dict[int, list[Message] | None] = {}
            others: dict[int, list[int]] = {}  # each child's ends not chosen, found when first paired
            for chosen_child in children:
                for chosen_end in found.chosen_ends(chosen_child):
                    chosen = self._completion(chosen_end, fork, tails, prompt)
                    if chosen is None:
                        continue
                    for child in children:
                        if child == chosen_child:
                            continue
                        if child not in others:
                            others[child] = found.other_ends(child)
                        for end in others[child]:
                            rejected = self._completion(end, fork, tails, prompt)
                            if rejected is None:
                                continue
                            chosen_lead, chosen_rest = _split_lead(chosen)
                            rejected_lead, rejected_rest = _split_lead(rejected)
                            if fmt == "trl-kto":
                                sides = (
                                    (chosen_end, True, chosen_lead, chosen_rest),
                                    (end, False, rejected_lead, rejected_rest),
                                )
                                for side, label, lead, rest in sides:
                                    if (fork, side) not in kto_done:
                                        kto_done.add((fork, side))
                                        yield self._kto([*prompt, *lead], rest, label, fork, side)
                                continue
                            if chosen_lead != rejected_lead:
                                self.dropped[
                                    "pairs whose branches answer different messages (no shared prompt)"
                                ] += 1
                                continue
                            row = self._pair(fmt, [*prompt, *chosen_lead], chosen_rest, rejected_rest)
                            if row is None:
                                continue
                            if self.provenance_rows:
                                row["metadata"] = {
                                    **self.provenance(tree.ids[chosen_end]),
                                    "rejected_leaf": self._id(tree.ids[end]),
                                    "fork": self._id(tree.ids[fork]),
                                }
                            yield row

    def _pair(
        self, fmt: PairFormat, prompt: list[Message], chosen: list[Message], rejected: list[Message]
    ) -> dict[str, Any] | None:
        tools = tools_for([*prompt, *chosen, *rejected], self.tools())
        if fmt == "openai-dpo":
            if chosen[0].role != "assistant" or rejected[0].role != "assistant":
                self.dropped["pairs whose branches do not start with an assistant turn (OpenAI DPO)"] += 1
                return None
            return openai_dpo_row(openai_messages(prompt, self.dropped), chosen[0], rejected[0], tools)
        if fmt == "openai":
            row = {
                "prompt": openai_messages(prompt, self.dropped),
                "chosen": openai_messages(chosen, self.dropped),
                "rejected": openai_messages(rejected, self.dropped),
            }
            if tools:
                row["tools"] = tools
            return row
        return {
            "prompt": trl_messages(prompt),
            "chosen": trl_messages(chosen),
            "rejected": trl_messages(rejected),
            "tools": tools,
        }

    def _kto(
        self, prompt: list[Message], completion: list[Message], label: bool, fork: int, end: int
    ) -> dict[str, Any]:
        row: dict[str, Any] = {
            "prompt": trl_messages(prompt),
            "completion": trl_messages(completion),
            "label": label,
            "tools": tools_for([*prompt, *completion], self.tools()),
        }
        if self.provenance_rows:
            row["metadata"] = {**self.provenance(self.tree.ids[end]), "fork": self._id(self.tree.ids[fork])}
        return row

    def no_pairs_reason(self) -> str:
        """Why `pairs` gave nothing, in the CLI's terms."""
        labels = self.labels()
        forks = [f for f in range(self.tree.node_count) if len(list(self.tree.children_positions(f))) > 1]
        if not forks:
            return "no preference pairs: the session has no fork (a pair needs two branches from one node)"
        if "chosen" not in labels.values():
            return (
                "no preference pairs: no branch is labelled chosen (the active leaf alone never makes a "
                "pair); label one: waybook label PATH NODE chosen"
            )
        return "no preference pairs: each chosen branch's siblings are chosen too, or none is below a fork"

    def labels(self) -> dict[str, str]:
        """The label in force on each node at the export's head: the latest label entry for it wins,
        and an empty or missing label clears it (Pi's rule). Read once."""
        if self._labels is None:
            self._labels = self._read_labels()
        return dict(self._labels)

    def _read_labels(self) -> dict[str, str]:
        labels: dict[str, str] = {}
        for record in self.journal.read(limit=self.head.seq):
            body = record.body
            if isinstance(body, Annotation) and body.type == PREFERENCE and isinstance(body.data, dict):
                label = body.data.get("label")
                if isinstance(label, str) and label.strip():
                    labels[body.target] = label.strip()
                else:
                    labels.pop(body.target, None)
            elif isinstance(body, CustomEntry) and body.type in LABEL_TYPES and isinstance(body.data, dict):
                target = body.data.get("targetId", body.data.get("target"))
                label = body.data.get("label")
                if not isinstance(target, str):
                    continue
                if isinstance(label, str) and label.strip():
                    labels[target] = label.strip()
                else:
                    labels.pop(target, None)
        return labels

    def _prompt(self, fork: int, found: ForkEnds) -> list[Message] | None:
        """The history up to `fork`, shared by every pair at it: the exclusions on any branch through
        the fork that take back an entry of it are applied. None when it holds erased content and
        `erased` is "drop" (counted): no pair at the fork."""
        positions = self.tree.path_positions(fork)
        excluded = found.prompt_exclusions(fork, positions)
        records = self._read([self.tree.seqs[p] for p in positions if p not in excluded])
        if self.options.erased == "drop" and holds_erased(records):
            self.dropped[ERASED_ROWS] += 1
            return None
        return self._messages_of(records, open_end=True)

    def _completion(
        self, end: int, fork: int, done: dict[int, list[Message] | None], prompt: list[Message]
    ) -> list[Message] | None:
        """What the branch to `end` holds after `fork` (its exclusions applied), or None when that holds
        no assistant turn (counted once): such a branch is never a completion. When the fork is an
        assistant turn with tool calls (the prompt ends with them), the completion starts with the
        results this branch recorded for them."""
        if end in done:
            return done[end]
        positions = self.tree.path_positions(end)
        after = positions[positions.index(fork) + 1 :]
        excluded = {self.tree.exclusions[p] for p in positions if p in self.tree.exclusions}
        records = self._read([self.tree.seqs[p] for p in after if p not in excluded])
        if self.options.erased == "drop" and holds_erased(records):
            self.dropped[ERASED_ROWS] += 1
            done[end] = None
            return None
        calls = prompt[-1:] if prompt and prompt[-1].tool_calls else []
        tail: list[Message] | None = self._messages_of(records, before=calls)
        if not any(m.role == "assistant" for m in tail or ()):
            self.dropped["branches with no assistant turn after the fork (never a completion)"] += 1
            tail = None
        done[end] = tail
        return tail

    def _messages_of(
        self, records: list[Record], *, open_end: bool = False, before: list[Message] | None = None
    ) -> list[Message]:
        """`records` as clean messages; `before` (an assistant turn whose calls they answer) is cleaned
        with them and left out of what is returned."""
        options, dropped = self.options, self.dropped
        found = [m for r in records if (m := to_message(r, options, dropped, self.blobs)) is not None]
        lead = before or []
        cleaned = clean([*lead, *found], options, dropped, open_end=open_end)
        return self._redacted(
            cleaned[len(lead) :] if lead and cleaned[:1] and cleaned[0].role == "assistant" else cleaned
        )

    def tools(self) -> list[dict[str, Any]] | None:
        """Tool schemas the session recorded in its header metadata (`tools`), as OpenAI function tools;
        redacted like message text (a description can hold a connection string). Computed once."""
        if self._tools is _UNSET:
            self._tools = self._header_tools()
        tools: list[dict[str, Any]] | None = copy.deepcopy(self._tools)
        return tools

    def _header_tools(self) -> list[dict[str, Any]] | None:
        if self.header is None or not isinstance(self.header.metadata.get("tools"), list):
            return None
        tools = []
        for tool in self.header.metadata["tools"]:
            if isinstance(tool, dict) and "function" in tool:
                tools.append(tool)
            elif isinstance(tool, dict):
                function = {k: tool[k] for k in ("name", "description", "parameters") if k in tool}
                tools.append({"type": "function", "function": function})
        redacted: list[dict[str, Any]] = tools if self.redactor is None else self.redactor.value(tools)
        return redacted

    def _redacted(self, messages: list[Message]) -> list[Message]:
        """Secrets masked in every text, thinking, tool argument (keys and values), tool name, tool call
        id, tool result and image URL on the web (never inside a `data:` image's bytes)."""
        redactor = self.redactor
        if redactor is None:
            return messages
        held = [list(_strings(m)) for m in messages]
        redactor.prepare(text for texts in held for text in texts)

        def part(piece: str | ImagePart) -> str | ImagePart:
            if isinstance(piece, str):
                return redactor.text(piece)
            if piece.url.startswith("data:"):
                return piece
            return attrs.evolve(piece, url=redactor.text(piece.url))

        def call(c: ToolCallBlock) -> ToolCallBlock:
            arguments = redactor.value(c.arguments)
            call_id, name = self._masked_id(c.call_id), redactor.text(c.name)
            if arguments is c.arguments and call_id is c.call_id and name is c.name:
                return c
            return msgspec.structs.replace(c, arguments=arguments, call_id=call_id, name=name)

        def message(m: Message) -> Message:
            text, thinking = redactor.text(m.text), redactor.text(m.thinking)
            calls = tuple(call(c) for c in m.tool_calls)
            answered = self._masked_id(m.tool_call_id) if m.tool_call_id is not None else None
            parts = tuple(part(piece) for piece in m.parts)
            same = text is m.text and thinking is m.thinking and answered is m.tool_call_id
            same = same and all(a is b for a, b in zip(calls, m.tool_calls, strict=True))
            if same and all(a is b for a, b in zip(parts, m.parts, strict=True)):
                return m
            return attrs.evolve(
                m, text=text, thinking=thinking, tool_calls=calls, tool_call_id=answered, parts=parts
            )

        # a message none of whose strings masking changes is itself (most are): no copy, no walk
        return [
            m if redactor.unchanged(texts) else message(m) for m, texts in zip(messages, held, strict=True)
        ]

    def _masked_id(self, call_id: str) -> str:
        """A tool call id with its secrets masked, made unique again with a number (two ids holding
        secrets would otherwise both be `call_[REDACTED:...]`, and a row needs its call ids unique);
        the same id is masked the same way throughout the export, so calls still pair with results."""
        assert self.redactor is not None
        masked = self.redactor.text(call_id)
        if masked is call_id or masked == call_id:
            return call_id
        known = self._masked_ids.get(call_id)
        if known is None:
            known = self._masked_ids[call_id] = f"{masked}#{len(self._masked_ids) + 1}"
        return known


def _strings(m: Message) -> Iterator[str]:
    """Every string of a message redaction reads (so one detection pass can mask a row's together)."""
    yield m.text
    if m.thinking:
        yield m.thinking
    if m.tool_call_id is not None:
        yield m.tool_call_id
    for piece in m.parts:
        yield piece if isinstance(piece, str) else piece.url
    for call in m.tool_calls:
        yield call.call_id
        yield call.name
        yield from _nested_strings(call.arguments)


def _nested_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield key
            yield from _nested_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _nested_strings(item)
