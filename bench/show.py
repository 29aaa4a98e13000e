"""`waybook show` in text against `--json` on one long session, paired run by run (issue 14: text <= 2x).

Builds (once, in a temp dir or the given one) a single-branch session of N records: user messages,
assistant messages with a tool call, tool results, a compaction every 10,000 records. Then runs the
installed console script `waybook show J` and `waybook show J --json` into /dev/null, alternating, and
prints the medians and the ratio; writes bench/show.json.

    python bench/show.py [--records 300000] [--runs 3] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from waybook.journal import InMemoryJournal
from waybook.model import NewRecord, TextBlock, ToolCallBlock
from waybook.model._records import AssistantMessage, Compaction, Header, ToolResult, UserMessage


def build(path: Path, records: int) -> None:
    journal = InMemoryJournal("bench")
    batch: list[NewRecord] = [
        NewRecord(id="h", at="2026-01-01T00:00:00.000Z", body=Header(journal="b", creator="bench"))
    ]
    parent: str | None = None
    for n in range(1, records):
        at = "2026-01-01T00:00:00.000Z"
        rid = f"r{n}"
        kind = n % 4
        if n % 10_000 == 0:
            body = Compaction(parent=parent, summary=f"summary up to {n}", first_kept=parent)
        elif kind == 1:
            body = UserMessage(
                parent=parent, content=(TextBlock(text=f"question {n}: why does the test fail?"),)
            )
        elif kind == 2:
            call = ToolCallBlock(call_id=f"c{n}", name="bash", arguments={"cmd": f"pytest -k t{n}"})
            body = AssistantMessage(
                parent=parent, content=(TextBlock(text="Let me run it."), call), stop_reason="tool_use"
            )
        elif kind == 3:
            body = ToolResult(
                parent=parent, call_id=f"c{n - 1}", content=(TextBlock(text="1 failed, 20 passed\n" * 3),)
            )
        else:
            body = AssistantMessage(
                parent=parent, content=(TextBlock(text=f"Fixed it ({n})."),), stop_reason="end_turn"
            )
        batch.append(NewRecord(id=rid, at=at, body=body))
        parent = rid
        if len(batch) >= 10_000:
            journal.append(batch, expected=journal.head())
            batch = []
    if batch:
        journal.append(batch, expected=journal.head())
    path.write_bytes(b"".join(line + b"\n" for line in journal.read_lines()))
    path.chmod(0o600)


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    with open("/dev/null", "wb") as sink:
        subprocess.run(args, stdout=sink, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path)
    options = parser.parse_args()
    directory = options.dir or Path(tempfile.mkdtemp(prefix="waybook-bench-show-"))
    path = directory / f"show-{options.records}.jsonl"
    if not path.exists():
        build(path, options.records)
    waybook = shutil.which("waybook")
    assert waybook is not None, "install waybook (pip install -e .) so the console script is on PATH"
    text, as_json = [], []
    for _ in range(options.runs):
        text.append(timed([waybook, "show", str(path)]))
        as_json.append(timed([waybook, "show", str(path), "--json"]))
    ratios = [t / j for t, j in zip(text, as_json, strict=True)]
    result = {
        "records": options.records,
        "text_s": statistics.median(text),
        "json_s": statistics.median(as_json),
        "ratio_median": statistics.median(ratios),
        "ratios": ratios,
    }
    print(f"{'records':>8} {'text s':>8} {'json s':>8} {'text/json':>10}")
    row = (options.records, result["text_s"], result["json_s"], result["ratio_median"])
    print("{:>8} {:>8.2f} {:>8.2f} {:>10.2f}".format(*row))
    (Path(__file__).parent / "show.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
