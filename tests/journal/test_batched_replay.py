"""Replay proves whole batches at once (one C decode, set and list checks); it must agree exactly with
proving one line at a time, on intact lines and under every kind of damage."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.builders import AT, assistant, header, move, reset, user
from tests.helpers.wire_samples import _seal_legacy
from waybook.codecs._legacy import UserMessageV1
from waybook.codecs._wire import seal
from waybook.journal import InMemoryJournal
from waybook.journal._ledger import check_line, prove_lines
from waybook.journal._roles.session import SessionRules
from waybook.model import GENESIS, Head, JournalError, NewRecord, Record


def proved_one_by_one(lines: list[bytes], start: Head) -> tuple[list[Record], JournalError | None]:
    """The reference: every line through `check_line`, in order."""
    records: list[Record] = []
    seq, prev = start.seq, start.digest
    for line in lines:
        seq += 1
        try:
            record = check_line(line, seq, prev)
        except JournalError as exc:
            return records, exc
        records.append(record)
        prev = record.digest
    return records, None


def committed_lines(n: int) -> list[bytes]:
    journal = InMemoryJournal()
    journal.append([header()], expected=GENESIS)
    parent = None
    for i in range(n):
        rid = f"m{i}"
        new = user(rid, parent, f"q {i}") if i % 2 == 0 else assistant(rid, parent, f"a {i}")
        journal.append([new], expected=journal.head())
        parent = rid
    return list(journal.read_lines())


LINES = committed_lines(12)


def damaged(lines: list[bytes], how: str, at: int) -> list[bytes]:
    lines = list(lines)
    at = at % len(lines)
    if how == "drop":
        del lines[at]
    elif how == "duplicate":
        lines.insert(at, lines[at])
    elif how == "swap" and at + 1 < len(lines):
        lines[at], lines[at + 1] = lines[at + 1], lines[at]
    elif how == "two_on_one_line" and at + 1 < len(lines):
        lines[at : at + 2] = [lines[at] + b" " + lines[at + 1], b" "]  # same line count, misaligned values
    elif how == "blank":
        lines.insert(at, b"")
    elif how == "flip":
        line = bytearray(lines[at])
        line[len(line) // 2] ^= 0x01
        lines[at] = bytes(line)
    elif how == "trailing_space":
        lines[at] += b" "
    elif how == "cut":
        lines[at] = lines[at][: len(lines[at]) // 2]
    elif how == "fork":  # a well-sealed line with the right seq from another history: only prev is wrong
        record = msgspec.json.decode(lines[at], type=Record)
        lines[at] = seal(record.seq, NewRecord(id=record.id, at=record.at, body=record.body), "f" * 64)[1]
    return lines


@settings(max_examples=300, deadline=None)
@given(
    how=st.sampled_from(
        [
            "none",
            "drop",
            "duplicate",
            "swap",
            "two_on_one_line",
            "blank",
            "flip",
            "trailing_space",
            "cut",
            "fork",
        ]
    ),
    at=st.integers(0, 100),
    skip=st.integers(0, 5),
)
def test_batched_proof_agrees_with_proving_line_by_line(how: str, at: int, skip: int) -> None:
    start = GENESIS
    lines = LINES
    if skip:  # start part-way, as a chunk of a longer file does
        first = msgspec.json.decode(lines[skip - 1], type=Record)
        start, lines = Head(first.seq, first.digest), lines[skip:]
    lines = damaged(lines, how, at)
    records, error = prove_lines(lines, start)
    expected_records, expected_error = proved_one_by_one(lines, start)
    assert records == expected_records
    assert type(error) is type(expected_error)
    assert str(error) == str(expected_error)


def test_a_batch_holding_an_old_record_version_is_upcast_like_a_single_line() -> None:
    legacy = _seal_legacy(
        2, UserMessageV1(parent=None, text="old"), msgspec.json.decode(LINES[0], type=Record).digest
    )
    lines = [LINES[0], legacy]
    records, error = prove_lines(lines, GENESIS)
    assert error is None
    assert (records, error) == proved_one_by_one(lines, GENESIS)


# --- rules: a replayed run of messages is checked in C, with the same verdicts as the loop -------------


def rule_cases() -> list[list[NewRecord]]:
    m = [user("u1", None), assistant("a1", "u1"), user("u2", "a1")]
    return [
        [header(), *m],
        [header(), user("u1", None), user("u1", "u1")],  # duplicate id
        [header(), user("u1", None), assistant("a1", "nope")],  # wrong parent
        [header(), user("u1", None), assistant("a1", "u1", stop=None)],  # streaming partial
        [header(), user("u1", None), header("h2")],  # second header
        [user("u1", None)],  # no header first
        [header(), user("u1", None), move("mv", "u1", None), user("u2", None)],
        [header(), user("u1", None), reset("r"), user("u2", None), assistant("a2", "u2")],
        [header(), *m, NewRecord(id="x", at=AT, body=m[0].body)],  # parent None after u2
    ]


@pytest.mark.parametrize("split", [1, 2, 3])
@pytest.mark.parametrize("case", range(len(rule_cases())))
def test_replayed_rule_checks_agree_with_the_append_checks(case: int, split: int) -> None:
    records = rule_cases()[case]

    def run(formats: bool) -> tuple[object, ...]:
        rules = SessionRules(journal="t")
        verdicts: list[object] = []
        for start in range(0, len(records), split):
            try:
                rules.commit(rules.check(records[start : start + split], formats=formats))
                verdicts.append((rules.leaf, rules.count, dict(rules.ids)))
            except JournalError as exc:
                verdicts.append((type(exc), str(exc)))
                break
        return tuple(verdicts)

    assert run(formats=False) == run(formats=True)
