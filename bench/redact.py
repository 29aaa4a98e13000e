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
  shapes), paired: the sides run alternately (the order turned each round), each timed in CPU seconds
  of this process (on a shared machine wall time mostly measures the other processes), and a ratio is
  the median of the per-round ratios (bench/README.md). The goal is <= 2.0 for every shape. The sides:
  `redact` (the detector as installed: its literal scanner, Hyperscan or Python's finds, is printed),
  `python` (the same detector on Python's finds, the path without the `redact` extra) and, with
  `--against REV`, `before` (REV's waybook/_redact, loaded beside this one, walking every message as
  REV's export did).

The literal scanners a detector can start from (waybook._redact._literals) are compared too: Hyperscan
(adopted), Python's finds (the fallback), pyahocorasick (Aho-Corasick automata) and google-re2 (a set of
the literals tells which occur; finds locate them), each installed: their three numbers with the same
detector behind them, and the pass over the real sessions' texts alone.

With detect-secrets installed (`pip install 'waybook[bench]'`), the same three numbers for it, scanning
the same texts as files (its filters on): whether a library would beat our detector (docs/security.md).

    python -m bench.redact [--runs 5] [--quick] [--against REV]   (from the checkout: it measures its code)

Prints a table and writes bench/redact.json.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tests.helpers.formats import SHARED_FIXTURES, journal_of
from tests.helpers.plain_corpus import documented_example, line_count, texts
from tests.helpers.secret_corpus import SECRETS, shapes
from tests.helpers.secret_sessions import leaks, session_holding
from waybook._redact import SCANNED, SCANNER, SEPARATOR, Detector, Redactor, find_secrets
from waybook._redact._literals import HyperscanScanner, Literal, PythonScanner, Scanner
from waybook.export.trajectories import Selection, TrainingOptions, TrajectoryExporter, encode_row
from waybook.formats import import_claude_code, import_codex, import_pi
from waybook.journal import InMemoryJournal
from waybook.journal._protocol import SessionJournal
from waybook.model import NewRecord, TextBlock, ToolCallBlock
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


# --- cost ---------------------------------------------------------------------------------------

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
PAIRS_ONLY = ("openai --pairs", "openai-dpo", "trl-dpo", "trl-kto")
"""The shapes the real sessions cannot show: they have no fork labelled chosen."""

Side = Callable[[], Any] | None
"""What masks an export: a Redactor's maker (one a journal, as `--redact` makes), or None: no redaction."""


SAMPLE_S = 0.3
"""The least CPU time one sample takes: a shorter export is repeated (a 50 ms sample on a shared machine
varies by half)."""


def export(journals: list[SessionJournal], shape: str, *, redactor: Side, times: int = 1) -> float:
    """CPU seconds of exporting `journals` in `shape` (rows encoded as the CLI writes them), `times` over;
    each export makes its own redactor, as each `--redact` run does."""
    start = time.process_time()
    options = TrainingOptions(thinking="field")
    for _ in range(times):
        for journal in journals:
            exporter = TrajectoryExporter(journal, options=options)
            if redactor is not None:
                exporter.redactor = redactor()  # what `redact=True` sets, with the side's detector
            sum(len(encode_row(row)) for row in SHAPES[shape](exporter))
    return time.process_time() - start


def cost(
    workloads: dict[str, list[SessionJournal]],
    runs: int,
    sides: dict[str, Side],
    shapes: Sequence[str] = tuple(SHAPES),
) -> list[dict[str, Any]]:
    """Each side's export time over the plain export's, per workload and shape, paired round by round."""
    rows = []
    names = ["plain", *sides]
    makers: dict[str, Side] = {"plain": None, **sides}
    for workload, journals in workloads.items():
        for shape in shapes:
            if workload == "sessions" and shape in PAIRS_ONLY:
                continue
            once = export(journals, shape, redactor=None)  # also warms what the first export loads
            repeat = max(1, math.ceil(SAMPLE_S / max(once, 1e-6)))
            times: dict[str, list[float]] = {name: [] for name in names}
            for round_ in range(runs):
                turn = round_ % len(names)
                order = names[turn:] + names[:turn]
                for name in order if round_ % 2 == 0 else reversed(order):
                    spent = export(journals, shape, redactor=makers[name], times=repeat)
                    times[name].append(spent / repeat)
            row: dict[str, Any] = {
                "workload": workload,
                "shape": shape,
                "repeat": repeat,
                "plain_s": statistics.median(times["plain"]),
            }
            for name in sides:
                ratios = [t / p for t, p in zip(times[name], times["plain"], strict=True)]
                row[name] = {
                    "s": statistics.median(times[name]),
                    "ratio": statistics.median(ratios),
                    "ratios": ratios,
                }
            rows.append(row)
    return rows


def redactor_at(rev: str) -> Callable[[], Any]:
    """REV's Redactor: its waybook/_redact `git show`n into a scratch package beside this checkout's, so
    both run in one process. Its `unchanged` answers False, so the export walks and copies every message
    as REV's did (REV's Redactor has no such method)."""
    root = Path(__file__).resolve().parent.parent
    scratch = Path(tempfile.mkdtemp(prefix="waybook-redact-rev-"))
    package = scratch / "redact_at_rev"
    package.mkdir()
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", rev, "waybook/_redact/"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for name in names:
        text = subprocess.run(
            ["git", "show", f"{rev}:{name}"], cwd=root, check=True, capture_output=True, text=True
        ).stdout
        (package / Path(name).name).write_text(text.replace("waybook._redact", "redact_at_rev"))
    sys.path.insert(0, str(scratch))
    module = importlib.import_module("redact_at_rev")

    class Before(module.Redactor):  # type: ignore[misc, name-defined]
        def unchanged(self, values: Any) -> bool:
            return False

    return Before


# --- the literal scanners a detector can start from ---------------------------------------------------


class AhoCorasickScanner:
    """pyahocorasick's automata (one for the case-sensitive literals on the text, one for the caseless
    ones on its lower-cased copy), every occurrence reported."""

    name = "pyahocorasick"

    def __init__(self, literals: Sequence[Literal]) -> None:
        import ahocorasick

        self.literals = tuple(literals)
        self._automata = []
        for caseless in (False, True):
            automaton = ahocorasick.Automaton()
            for index, literal in enumerate(self.literals):
                if literal.caseless == caseless:
                    key = literal.text.decode("latin-1")
                    automaton.add_word(key, [*automaton.get(key, []), (index, len(key))])
            automaton.make_automaton()
            self._automata.append(automaton)

    def where(self, raw: bytes, lowered: bytes) -> list[list[int]]:
        found: list[list[int]] = [[] for _ in self.literals]
        for automaton, text in zip(self._automata, (raw, lowered), strict=True):
            if len(automaton):
                for end, hits in automaton.iter(text.decode("latin-1")):
                    for index, width in hits:
                        found[index].append(end - width + 1)
        return found


class Re2SetScanner:
    """google-re2's set matching: one pass tells which literals occur (on the text, and caseless on its
    lower-cased copy); `bytes.find` then locates the ones that do."""

    name = "google-re2"

    def __init__(self, literals: Sequence[Literal]) -> None:
        import re2

        self.literals = tuple(literals)
        self._sets = []
        for caseless in (False, True):
            indexes = [i for i, literal in enumerate(self.literals) if literal.caseless == caseless]
            found_set = re2.Set.SearchSet(re2.Options())
            for index in indexes:
                found_set.Add(re2.escape(self.literals[index].text))
            found_set.Compile()
            self._sets.append((found_set, indexes))

    def where(self, raw: bytes, lowered: bytes) -> list[list[int]]:
        found: list[list[int]] = [[] for _ in self.literals]
        for (found_set, indexes), text in zip(self._sets, (raw, lowered), strict=True):
            for hit in found_set.Match(text) or ():  # None when nothing matched
                index = indexes[hit]
                needle = self.literals[index].text
                at = text.find(needle)
                while at >= 0:
                    found[index].append(at)
                    at = text.find(needle, at + 1)
        return found


def candidate_scanners() -> dict[str, Scanner]:
    """Every literal scanner installed: Python's finds always, the libraries where they are."""
    makers: dict[str, Callable[[Sequence[Literal]], Any]] = {
        "hyperscan": HyperscanScanner,
        "pyahocorasick": AhoCorasickScanner,
        "google-re2": Re2SetScanner,
    }
    found: dict[str, Scanner] = {"python": PythonScanner(SCANNED)}
    for name, make in makers.items():
        try:
            found[name] = make(SCANNED)
        except ImportError:
            continue
    return found


def row_texts(journals: list[SessionJournal]) -> list[str]:
    """The texts a whole-trajectory export hands the detector: each row's new strings, joined."""
    joined: list[str] = []

    class Recording(Redactor):
        def prepare(self, values: Any) -> None:
            fresh = [v for v in dict.fromkeys(values) if v not in self._memo]
            if fresh:
                joined.append(SEPARATOR.join(fresh))
            super().prepare(fresh)

    export(journals, "openai", redactor=Recording)
    return joined


def scanner_numbers(sessions: list[SessionJournal], runs: int) -> dict[str, Any]:
    """Each candidate scanner's three numbers (the same detector behind it), the pass over the real
    sessions' row texts alone (CPU seconds, the median of `runs`), and whether it found what Python's
    finds find (the spans of every row text)."""
    texts_ = row_texts(sessions)
    views = [(t.encode("latin-1", "replace"), t.encode("latin-1", "replace").lower()) for t in texts_]
    chars = sum(len(t) for t in texts_)
    reference = Detector(scanner=PythonScanner(SCANNED))
    expected = [reference.spans(t) for t in texts_]
    variants = [(shape, secret.core) for secret in SECRETS for shape in shapes(secret)]
    numbers: dict[str, Any] = {"chars": chars}
    for name, scanner in candidate_scanners().items():
        detector = Detector(scanner=scanner)
        passes = []
        for _ in range(runs):
            start = time.process_time()
            for raw, lowered in views:
                scanner.where(raw, lowered)
            passes.append(time.process_time() - start)
        caught = sum(secret not in detector.mask(shape)[0] for shape, secret in variants)
        numbers[name] = {
            "pass_s": statistics.median(passes),
            "same_spans": [detector.spans(t) for t in texts_] == expected,
            "recall": caught / len(variants),
            "false_positives": false_positives(lambda text, d=detector: len(d.spans(text))),
        }
    return numbers


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
    start = time.process_time()
    found("\n".join(session_texts))
    scan_s = time.process_time() - start
    plain = export(sessions, "openai", redactor=None)
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
    parser.add_argument("--against", metavar="REV", help="also time REV's redaction (the `before` side)")
    options = parser.parse_args()
    runs = 3 if options.quick else options.runs
    sessions = real_sessions()
    workloads = {"sessions": sessions, "coding": [coding_session(options.records)]}
    sides: dict[str, Side] = {"redact": Redactor}
    if SCANNER.name != "python":
        sides["python"] = lambda: Redactor(scanner=PythonScanner(SCANNED))
    if options.against:
        sides["before"] = redactor_at(options.against)
    result: dict[str, Any] = {
        "scanner": SCANNER.name,
        "against": options.against,
        "recall": recall(),
        "false_positives": false_positives(),
        "idempotence": idempotence(),
        "cost": cost(workloads, runs, sides),
        "scanners": scanner_numbers(sessions, runs),
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
    print(f"cost (CPU seconds; redact = this detector on {SCANNER.name}'s scanner; ratios over plain):")
    header = f"{'workload':10} {'shape':18} {'plain s':>8} {'redact s':>9} {'redact':>7}"
    header += "".join(f" {name:>7}" for name in sides if name != "redact")
    print(header)
    for row in result["cost"]:
        cells = f"{row['workload']:10} {row['shape']:18} {row['plain_s']:8.3f} {row['redact']['s']:9.3f}"
        cells += "".join(f" {row[name]['ratio']:7.2f}" for name in sides)
        print(cells)
    scanners = result["scanners"]
    print(f"literal scanners, on the real sessions' row texts ({scanners['chars']:,} characters):")
    print(f"{'scanner':14} {'pass s':>7} {'same':>5} {'recall':>7} {'fp/10k':>7}")
    for name, numbers in scanners.items():
        if name == "chars":
            continue
        print(
            f"{name:14} {numbers['pass_s']:7.4f} {'yes' if numbers['same_spans'] else 'NO':>5} "
            f"{numbers['recall']:7.2%} {numbers['false_positives']['per_10k_lines']:7.2f}"
        )
    output = Path(__file__).parent / "redact.json"
    output.write_text(json.dumps(result, indent=2) + "\n")  # before the slow comparison below
    if not options.quick and (other := detect_secrets_numbers(sessions)) is not None:
        result["detect_secrets"] = other
        dfp = other["false_positives"]
        print(
            f"detect-secrets: recall {other['recall']:.2%}, {dfp['per_10k_lines']:.2f} false positives "
            f"per 10k lines, openai export + scan {other['ratio']:.2f}x the export"
        )
        output.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
