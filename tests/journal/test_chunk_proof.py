"""A chunk of lines is proved in a few C passes (prove_chunk) with exactly the verdict of the line-by-line
proof (prove_lines): the same records for the good prefix and the same error at the first bad line,
whatever one line's bytes are changed to."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.sessions import branching_session
from waybook import JsonlJournal
from waybook.journal._jsonl._chunk_proof import prove_chunk
from waybook.journal._ledger import prove_lines
from waybook.model._head import GENESIS, Head

Verdict = tuple[list[object], tuple[str, str] | None]


def _golden_lines(tmp_path: Path) -> list[bytes]:
    path = tmp_path / "golden.jsonl"
    with JsonlJournal(path) as journal:
        branching_session(journal)
    return io.BytesIO(path.read_bytes()).readlines()


def _chunk_verdict(lines: list[bytes], start: Head = GENESIS) -> Verdict:
    records, error = prove_chunk(lines, b"".join(lines), start, "j")
    return list(records), None if error is None else (type(error).__name__, str(error))


def _line_verdict(lines: list[bytes], start: Head = GENESIS) -> Verdict:
    records, error = prove_lines([line[:-1] for line in lines], start, "j")
    return list(records), None if error is None else (type(error).__name__, str(error))


def _uppercase_digest(line: bytes) -> bytes:
    return line[:-67] + line[-67:-3].upper() + line[-3:]


def _spaced_digest(line: bytes) -> bytes:
    return line.replace(b',"digest":"', b', "digest":"')


def _flip_byte(at: int) -> Callable[[bytes], bytes]:
    def flip(line: bytes) -> bytes:
        i = at % (len(line) - 1)
        return line[:i] + bytes([line[i] ^ 0x01]) + line[i + 1 :]

    return flip


def _digest_moved_first(line: bytes) -> bytes:
    cut = len(line) - 78
    return b'{"digest":"' + line[cut + 11 : -3] + b'",' + line[1:cut] + b"}\n"


MUTATIONS: dict[str, Callable[[bytes], bytes]] = {
    "uppercase digest": _uppercase_digest,
    "space before the digest member": _spaced_digest,
    "digest member moved first": _digest_moved_first,
    "blank line": lambda line: b"\n",
    "two records on one line": lambda line: line[:-1] + b" " + line,
    "not json": lambda line: b"{not json\n",
    "leading space": lambda line: b" " + line,
}


def test_a_whole_chunk_proves_as_the_line_by_line_proof_does(tmp_path: Path) -> None:
    lines = _golden_lines(tmp_path)
    verdict = _chunk_verdict(lines)
    assert verdict == _line_verdict(lines)
    assert verdict[1] is None
    assert len(verdict[0]) == len(lines)


def test_a_chunk_after_a_head_proves_from_that_head(tmp_path: Path) -> None:
    lines = _golden_lines(tmp_path)
    records, _ = prove_chunk(lines[:3], b"".join(lines[:3]), GENESIS)
    after = Head.of(records[-1])
    assert _chunk_verdict(lines[3:], after) == _line_verdict(lines[3:], after)
    assert _chunk_verdict(lines[3:], after)[1] is None
    wrong = Head(after.seq, "0" * 64)
    assert _chunk_verdict(lines[3:], wrong) == _line_verdict(lines[3:], wrong)
    assert _chunk_verdict(lines[3:], wrong)[1] is not None


@settings(max_examples=60, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=10_000),
    mutation=st.sampled_from(sorted(MUTATIONS)) | st.integers(min_value=0, max_value=10_000),
)
def test_one_changed_line_gets_the_line_by_line_verdict(
    tmp_path_factory: object, index: int, mutation: str | int
) -> None:
    tmp = tmp_path_factory.mktemp("chunk")  # type: ignore[attr-defined]
    lines = _golden_lines(tmp)
    at = index % len(lines)
    change = MUTATIONS[mutation] if isinstance(mutation, str) else _flip_byte(mutation)
    changed = [*lines[:at], change(lines[at]), *lines[at + 1 :]]
    verdict = _chunk_verdict(changed)
    assert verdict == _line_verdict(changed)
    if changed != lines:
        assert len(verdict[0]) <= at
        assert verdict[1] is not None or len(verdict[0]) < len(changed)


def test_lines_out_of_order_stop_at_the_first_that_does_not_follow(tmp_path: Path) -> None:
    lines = _golden_lines(tmp_path)
    swapped = [lines[0], lines[2], lines[1], *lines[3:]]
    verdict = _chunk_verdict(swapped)
    assert verdict == _line_verdict(swapped)
    assert len(verdict[0]) == 1
    assert verdict[1] is not None
