"""Damage keeps its place (issue 27, finding 4): an import appends one record at a time (issue 47: so its
bytes never depend on where the source was cut), and one changed byte late in an imported journal costs
that record alone, not every record before it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from waybook.cli import main

T0 = "2026-01-01T00:00:00.000Z"


def transcript(lines: int) -> str:
    out, parent = [], None
    for n in range(lines):
        uuid = f"u{n}"
        if n % 2 == 0:
            message = {"role": "user", "content": f"question number {n}"}
            kind = "user"
        else:
            message = {
                "id": f"m{n}",
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {n}"}],
            }
            message["stop_reason"] = "end_turn"
            kind = "assistant"
        line = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "timestamp": T0}
        out.append(json.dumps({**line, "message": message}))
        parent = uuid
    return "\n".join(out) + "\n"


def flip_inside(path: Path, seq: int) -> None:
    """Change one byte of record `seq`'s text, keeping the file's length."""
    lines = path.read_bytes().split(b"\n")
    line = lines[seq - 1]
    at = line.index(b"answer") if b"answer" in line else line.index(b"question")
    lines[seq - 1] = line[:at] + bytes([line[at] ^ 0x20]) + line[at + 1 :]
    path.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize("store", [False, True])
def test_a_changed_byte_in_record_2101_of_an_import_keeps_every_record_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store: bool
) -> None:
    source = tmp_path / "s1.jsonl"
    source.write_text(transcript(2195))
    if store:
        assert (
            main(["import", "claude-code", str(source), "--store", f"file:{tmp_path / 'S'}", "-o", "j"]) == 0
        )
        out = tmp_path / "S" / "journals" / "j.jsonl"
    else:
        out = tmp_path / "out.jsonl"
        assert main(["import", "claude-code", str(source), "-o", str(out)]) == 0
    places = [json.loads(line).get("batch") for line in out.read_bytes().splitlines()]
    assert len(places) == 2196
    assert not any(places)  # one record an append: no record carries a batch place
    flip_inside(out, 2101)
    capsys.readouterr()
    assert main(["verify", str(out), "--json"]) == 1
    (report,) = json.loads(capsys.readouterr().out)
    assert report["bad_seq"] == 2101  # verify names the damaged record itself (issue 27, point 4)
    assert report["records"] == 2100  # and only it is lost: every record before it is proven
