"""Records as a reader is shown them: erased content replaced by the placeholder naming its erasure.

The placeholder's text and the pairing of rebuilt tool calls are the model's pure functions
(`waybook.model._placeholders`); this reads, from the journal, the erasure records whose reasons they
name when the records at hand do not include them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from waybook.journal._protocol import SessionJournal
from waybook.journal._reading import read_seqs
from waybook.model import (
    AssistantMessage,
    Record,
    ToolResult,
    erasure_reasons,
    placeholder_record,
    placeholder_records,
)


def shown_records(
    journal: SessionJournal, records: Sequence[Record], *, pair_calls: bool = True
) -> list[Record]:
    """`records` (read from `journal`) with every erased record shown as the placeholder naming its
    erasure's seq and reason. `pair_calls`: `records` are a path or a context, in order, so an erased
    assistant message gets back the calls its results answer (`waybook.model.placeholder_records`);
    False for records taken one by one (labels, search hits)."""
    wanted = {r.erased.by for r in records if r.erased is not None}
    if not wanted:
        return list(records)
    reasons = erasure_reasons(records)
    head = journal.head().seq
    missing = sorted(seq for seq in wanted if seq not in reasons and seq <= head)
    reasons.update(erasure_reasons(read_seqs(journal, missing)))
    if pair_calls:
        return placeholder_records(records, reasons)
    return [placeholder_record(record, reasons) for record in records]


def iter_shown(journal: SessionJournal, records: Iterable[Record]) -> Iterator[Record]:
    """`records` (read in seq order from `journal`, as a whole-journal export streams them) shown as
    `shown_records` shows a path: a run of assistant messages (one turn, perhaps one message per call)
    is held until the results after it are seen, so an erased one gets back their calls. Each erasure's
    reason is read once, when first needed."""
    reasons: dict[int, str] = {}
    head = journal.head().seq
    held: list[Record] = []  # a run of assistant messages and the tool results right after it
    answered = False  # whether `held` has reached its results
    for record in records:
        erased = record.erased
        if erased is not None and erased.by not in reasons and erased.by <= head:
            reasons.update(erasure_reasons(read_seqs(journal, [erased.by])))
        body = record.body
        if isinstance(body, AssistantMessage) and not answered:
            held.append(record)
            continue
        if held and isinstance(body, ToolResult):
            held.append(record)
            answered = True
            continue
        if held:
            yield from placeholder_records(held, reasons)
            held, answered = [], False
        if isinstance(body, AssistantMessage):
            held.append(record)
        else:
            yield placeholder_record(record, reasons)
    if held:
        yield from placeholder_records(held, reasons)
