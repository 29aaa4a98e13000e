"""`--redact` against the same export without it, paired run by run (issue 27: redaction <= 2x).

Builds (in memory) a single-branch session of N records in the shape of a coding session: user
questions, assistant messages with a tool call whose arguments hold a command, tool results of a few
lines, one message in 50 quoting a connection string or a key. Then exports its OpenAI row (every
message, tool call and result, encoded) without and with redaction, alternating, and prints the medians
and the ratio; writes bench/redact.json. A third column runs every pattern on every string (the old
redactor, without the prefilter that skips texts no pattern could match), for comparison.

    python -m bench.redact [--records 20000] [--runs 5]   (from the checkout, so it measures its code)
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from waybook._redact import PATTERNS, Redactor
from waybook.export.trajectories import Selection, TrajectoryExporter, encode_row
from waybook.journal import InMemoryJournal, NewRecord, TextBlock, ToolCallBlock
from waybook.model._records import AssistantMessage, Header, ToolResult, UserMessage

TOOLS = [{"name": "bash", "description": "Run a shell command", "parameters": {"type": "object"}}]


def build(records: int) -> InMemoryJournal:
    journal = InMemoryJournal("bench")
    header = Header(journal="b", creator="bench", metadata={"tools": TOOLS})
    batch: list[NewRecord] = [NewRecord(id="h", at="2026-01-01T00:00:00.000Z", body=header)]
    parent: str | None = None
    for n in range(1, records):
        secret = " (db at postgres://app:hunter2@db.internal/x)" if n % 50 == 0 else ""
        kind = n % 3
        if kind == 1:
            text = f"question {n}: why does test_{n} fail after the refactor of the parser module?{secret}"
            body: Any = UserMessage(parent=parent, content=(TextBlock(text=text),))
        elif kind == 2:
            call = ToolCallBlock(call_id=f"c{n}", name="bash", arguments={"cmd": f"pytest -k test_{n} -x -q"})
            body = AssistantMessage(
                parent=parent,
                content=(TextBlock(text="Let me run it and read the output."), call),
                stop_reason="tool_use",
            )
        else:
            out = f"FAILED tests/test_parser.py::test_{n} - AssertionError: expected 3, got 4\n" * 4
            body = ToolResult(parent=parent, call_id=f"c{n - 1}", content=(TextBlock(text=out + secret),))
        batch.append(NewRecord(id=f"r{n}", at="2026-01-01T00:00:00.000Z", body=body))
        parent = f"r{n}"
    if not isinstance(batch[-1].body, AssistantMessage):
        end = AssistantMessage(parent=parent, content=(TextBlock(text="Done."),), stop_reason="end_turn")
        batch.append(NewRecord(id="end", at="2026-01-01T00:00:00.000Z", body=end))
    journal.append(batch, expected=journal.head())
    return journal


class _EveryPattern(Redactor):
    def text(self, value: str) -> str:
        return self._apply(PATTERNS, value)


def export(journal: InMemoryJournal, mode: str) -> float:
    start = time.perf_counter()
    exporter = TrajectoryExporter(journal, redact=mode != "plain")
    if mode == "every-pattern":
        exporter.redactor = _EveryPattern()
    size = sum(len(encode_row(row)) for row in exporter.rows("openai", Selection("active")))
    assert size > 0
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    journal = build(options.records)
    times: dict[str, list[float]] = {"plain": [], "redact": [], "every-pattern": []}
    for _ in range(options.runs):
        for mode in times:
            times[mode].append(export(journal, mode))
    ratios = [r / p for r, p in zip(times["redact"], times["plain"], strict=True)]
    old = [r / p for r, p in zip(times["every-pattern"], times["plain"], strict=True)]
    result = {
        "records": options.records,
        "plain_s": statistics.median(times["plain"]),
        "redact_s": statistics.median(times["redact"]),
        "every_pattern_s": statistics.median(times["every-pattern"]),
        "ratio_median": statistics.median(ratios),
        "every_pattern_ratio_median": statistics.median(old),
        "ratios": ratios,
    }
    print(f"{'records':>8} {'plain s':>8} {'redact s':>9} {'ratio':>6} {'every-pattern ratio':>20}")
    row = (
        options.records,
        result["plain_s"],
        result["redact_s"],
        result["ratio_median"],
        result["every_pattern_ratio_median"],
    )
    print("{:>8} {:>8.3f} {:>9.3f} {:>6.2f} {:>20.2f}".format(*row))
    (Path(__file__).parent / "redact.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
