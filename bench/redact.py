"""Redaction's numbers (issue 43): recall on the secret corpus, false positives per 10,000 lines of real
code and prose, idempotence, and the cost of `--redact` per export shape.

- recall: every example of tests/helpers/secret_corpus.py, in each of its shapes (as pasted, glued after
  `_`, in a URL, in JSON), placed in every field of a record (tests/helpers/secret_sessions.py), exported
  in every shape: the share of (example, shape) pairs whose secret appears in no row;
- false positives: masks found in tests/helpers/plain_corpus.py (this checkout's sources and docs, every
  string of the real sessions in shared fixtures) outside its documented examples, per 10,000 lines;
- idempotence: the share of masked corpus texts that masking again leaves as they are;
- cost: the export with `--redact` over the same export without it, per shape, on the real sessions of
  shared fixtures and on a made-up coding session with forks labelled chosen (for the preference
  shapes), paired: the two run alternately (the order flipped each round), and the ratio is the median
  of the per-round ratios (bench/README.md). The goal is <= 2.0 for every shape.

With detect-secrets installed (`pip install 'waybook[bench]'`), the same three numbers for it, scanning
the same texts as files (its filters on): whether a library would beat our detector (docs/security.md).

    python -m bench.redact [--runs 5] [--quick]   (from the checkout, so it measures its code)

Prints a table and writes bench/redact.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.helpers.formats import SHARED_FIXTURES, journal_of
from tests.helpers.plain_corpus import documented_example, line_count, texts
from tests.helpers.secret_corpus import SECRETS, shapes
from tests.helpers.secret_sessions import leaks, session_holding
from waybook._redact import Redactor, find_secrets
from waybook.export.trajectories import Selection, TrainingOptions, TrajectoryExporter, encode_row
from waybook.formats import import_claude_code, import_codex, import_pi
from waybook.journal import InMemoryJournal, NewRecord, TextBlock, ToolCallBlock
from waybook.journal._protocol import SessionJournal
from waybook.model._records import (
    Annotation,
    AssistantMessage,
    Header,
    LeafMoved,
    ThinkingBlock,
    ToolResult,
    UserMessage,
)

TOOLS = [{"name": "bash", "description": "Run a shell command", "parameters": {"type": "object"}}]
AT = "2026-01-01T00:00:00.000Z"


# --- workloads ------------------------------------------------------------------------------------


def real_sessions() -> list[SessionJournal]:
    """The real sessions of shared fixtures (Claude Code, Codex, Pi), imported in memory."""
    journals: list[SessionJournal] = []
    for path in sorted(SHARED_FIXTURES.rglob("*.jsonl")):
        data = path.read_bytes()
        if "codex" in path.parts:
            records = import_codex(data).records
        elif "pi" in path.parts:
            records = import_pi(data).records
        else:
            records = import_claude_code(data, lenient=True).records
        journals.append(journal_of(records))
    return journals


def coding_session(records: int) -> InMemoryJournal:
    """A made-up coding session: questions, tool calls and their outputs, thinking, one message in 50
    quoting a connection string, and every 100 records a retried answer, the retry labelled chosen."""
    journal = InMemoryJournal("bench")
    header = Header(journal="b", creator="bench", metadata={"tools": TOOLS})
    batch: list[NewRecord] = [NewRecord(id="h", at=AT, body=header)]
    parent: str | None = None
    for n in range(1, records):
        secret = " (db at postgres://app:hunter2@db.internal/x)" if n % 50 == 0 else ""
        kind = n % 3
        body: Any
        if kind == 1:
            text = f"question {n}: why does test_{n} fail after the refactor of the parser module?{secret}"
            body = UserMessage(parent=parent, content=(TextBlock(text=text),))
        elif kind == 2:
            call = ToolCallBlock(call_id=f"c{n}", name="bash", arguments={"cmd": f"pytest -k test_{n} -x -q"})
            thinking = ThinkingBlock(thinking=f"The key question is what token {n} the lexer sees.")
            body = AssistantMessage(
                parent=parent,
                content=(thinking, TextBlock(text="Let me run it and read the output."), call),
                stop_reason="tool_use",
            )
        else:
            out = f"FAILED tests/test_parser.py::test_{n} - AssertionError: expected 3, got 4\n" * 4
            body = ToolResult(parent=parent, call_id=f"c{n - 1}", content=(TextBlock(text=out + secret),))
        batch.append(NewRecord(id=f"r{n}", at=AT, body=body))
        parent = f"r{n}"
        if kind == 0 and n % 99 == 0:  # after a tool output: two answers, the second chosen
            first = AssistantMessage(
                parent=parent, content=(TextBlock(text=f"First try {n}."),), stop_reason="end_turn"
            )
            again = AssistantMessage(
                parent=parent, content=(TextBlock(text=f"Better {n}."),), stop_reason="end_turn"
            )
            batch += [
                NewRecord(id=f"x{n}", at=AT, body=first),
                NewRecord(
                    id=f"m{n}", at=AT, body=LeafMoved(from_leaf=f"x{n}", to_leaf=parent, reason="retry")
                ),
                NewRecord(id=f"y{n}", at=AT, body=again),
                NewRecord(
                    id=f"l{n}",
                    at=AT,
                    body=Annotation(target=f"y{n}", type="waybook.preference", data={"label": "chosen"}),
                ),
            ]
            parent = f"y{n}"
    end = AssistantMessage(parent=parent, content=(TextBlock(text="Done."),), stop_reason="end_turn")
    batch.append(NewRecord(id="end", at=AT, body=end))
    journal.append(batch, expected=journal.head())
    return journal


# --- the three numbers ----------------------------------------------------------------------------


def recall() -> dict[str, Any]:
    """The share of corpus examples (in each of their shapes, in every field) no export shape leaks."""
    per_shape: dict[str, list[int]] = {}
    for secret in SECRETS:
        for shape in shapes(secret):
            leaked = leaks(session_holding(shape), secret.core)
            for name in (
                "openai",
                "sharegpt",
                "trl-sft",
                "openai --turns",
                "trl-sft --turns",
                "openai --pairs",
                "openai-dpo --pairs",
                "trl-dpo --pairs",
                "trl-kto --pairs",
            ):
                counts = per_shape.setdefault(name, [0, 0])
                counts[0] += name not in leaked
                counts[1] += 1
    return {
        "kinds": len({s.kind for s in SECRETS}),
        "examples": sum(len(shapes(s)) for s in SECRETS),
        "per_shape": {name: caught / total for name, (caught, total) in per_shape.items()},
    }


def false_positives(scan: Callable[[str], int] | None = None) -> dict[str, Any]:
    """Masks in the plain corpus outside its documented examples, per 10,000 lines."""
    lines = found = 0
    seen: set[str] = set()
    for _, text in texts():
        if text in seen:
            continue
        seen.add(text)
        lines += line_count(text)
        if not documented_example(text):
            found += scan(text) if scan is not None else len(find_secrets(text))
    return {"lines": lines, "false_positives": found, "per_10k_lines": found * 10_000 / lines}


def idempotence() -> float:
    variants = [shape for secret in SECRETS for shape in shapes(secret)]
    stable = 0
    for variant in variants:
        once = Redactor().text(variant)
        stable += Redactor().text(once) == once
    return stable / len(variants)


# --- cost -----------------------------------------------------------------------------------------

SHAPES: dict[str, Callable[[TrajectoryExporter], Iterator[dict[str, Any]]]] = {
    "openai": lambda e: e.rows("openai", Selection("all")),
    "sharegpt": lambda e: e.rows("sharegpt", Selection("all")),
    "trl-sft": lambda e: e.rows("trl-sft", Selection("all")),
    "openai --turns": lambda e: e.turns(Selection("all")),
    "trl-sft --turns": lambda e: e.turns(Selection("all"), "trl-sft"),
    "openai --pairs": lambda e: e.pairs("openai"),
    "openai-dpo": lambda e: e.pairs("openai-dpo"),
    "trl-dpo": lambda e: e.pairs("trl-dpo"),
    "trl-kto": lambda e: e.pairs("trl-kto"),
}


def export(journals: list[SessionJournal], shape: str, *, redact: bool) -> float:
    start = time.perf_counter()
    options = TrainingOptions(thinking="field")
    for journal in journals:
        exporter = TrajectoryExporter(journal, redact=redact, options=options)
        sum(len(encode_row(row)) for row in SHAPES[shape](exporter))
    return time.perf_counter() - start


def cost(workloads: dict[str, list[SessionJournal]], runs: int) -> list[dict[str, Any]]:
    rows = []
    for workload, journals in workloads.items():
        for shape in SHAPES:
            if workload == "sessions" and shape in ("openai --pairs", "openai-dpo", "trl-dpo", "trl-kto"):
                continue  # the real sessions have no fork labelled chosen
            plain: list[float] = []
            redacted: list[float] = []
            for round_ in range(runs):
                order = (False, True) if round_ % 2 == 0 else (True, False)
                for redact in order:
                    (redacted if redact else plain).append(export(journals, shape, redact=redact))
            ratios = [r / p for r, p in zip(redacted, plain, strict=True)]
            rows.append(
                {
                    "workload": workload,
                    "shape": shape,
                    "plain_s": statistics.median(plain),
                    "redact_s": statistics.median(redacted),
                    "ratio": statistics.median(ratios),
                    "ratios": ratios,
                }
            )
    return rows


# --- detect-secrets, for comparison -----------------------------------------------------------------


def detect_secrets_numbers(sessions: list[SessionJournal]) -> dict[str, Any] | None:
    """detect-secrets (its default plugins and filters) on the same corpora, the texts scanned as files."""
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    scratch = Path(tempfile.mkdtemp(prefix="waybook-bench-"))

    def found(text: str) -> int:
        path = scratch / "text.txt"
        path.write_text(text)
        with default_settings():
            collection = SecretsCollection()
            collection.scan_file(str(path))
            return sum(len(s) for s in collection.data.values())

    caught = total = 0
    for secret in SECRETS:
        for shape in shapes(secret):
            total += 1
            caught += found(shape) > 0
    fp = false_positives(found)
    session_texts = [t for j in sessions for t in _texts_of(j)]
    start = time.perf_counter()
    found("\n".join(session_texts))
    scan_s = time.perf_counter() - start
    plain = export(sessions, "openai", redact=False)
    return {
        "recall": caught / total,
        "false_positives": fp,
        "scan_s": scan_s,
        "openai_plain_s": plain,
        "ratio": (plain + scan_s) / plain,
    }


def _texts_of(journal: SessionJournal) -> Iterator[str]:
    for record in journal.read():
        for block in getattr(record.body, "content", ()) or ():
            text = getattr(block, "text", None) or getattr(block, "thinking", None)
            if isinstance(text, str):
                yield text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--records", type=int, default=600, help="records of the made-up coding session")
    parser.add_argument("--quick", action="store_true", help="3 runs, no detect-secrets comparison")
    options = parser.parse_args()
    runs = 3 if options.quick else options.runs
    sessions = real_sessions()
    workloads = {"sessions": sessions, "coding": [coding_session(options.records)]}
    result: dict[str, Any] = {
        "recall": recall(),
        "false_positives": false_positives(),
        "idempotence": idempotence(),
        "cost": cost(workloads, runs),
    }
    print(
        f"recall: {result['recall']['kinds']} kinds, {result['recall']['examples']} examples in every field"
    )
    for shape, share in result["recall"]["per_shape"].items():
        print(f"  {shape:20} {share:8.2%}")
    fp = result["false_positives"]
    per_10k = fp["per_10k_lines"]
    print(f"false positives: {fp['false_positives']} in {fp['lines']} lines = {per_10k:.2f} per 10k lines")
    print(f"idempotent: {result['idempotence']:.2%} of masked examples unchanged by a second pass")
    print(f"{'workload':10} {'shape':18} {'plain s':>8} {'redact s':>9} {'ratio':>6}")
    for row in result["cost"]:
        cells = (row["workload"], row["shape"], row["plain_s"], row["redact_s"], row["ratio"])
        print("{:10} {:18} {:8.3f} {:9.3f} {:6.2f}".format(*cells))
    if not options.quick and (other := detect_secrets_numbers(sessions)) is not None:
        result["detect_secrets"] = other
        dfp = other["false_positives"]
        print(
            f"detect-secrets: recall {other['recall']:.2%}, {dfp['per_10k_lines']:.2f} false positives "
            f"per 10k lines, openai export + scan {other['ratio']:.2f}x the export"
        )
    (Path(__file__).parent / "redact.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
