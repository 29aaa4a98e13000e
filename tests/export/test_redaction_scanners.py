"""Redaction's two literal scanners (issue 43's cost): Hyperscan (the `redact` extra) and Python's finds
give the detector the same spans, so an export masks byte for byte the same with either; the detector
uses the best one installed."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.helpers.plain_corpus import texts
from tests.helpers.secret_corpus import SECRETS, shapes
from waybook._redact import SCANNED, SCANNER, SEPARATOR, Detector
from waybook._redact._literals import HyperscanScanner, PythonScanner, best_scanner

if not os.environ.get("CI"):  # CI installs the test extra, which brings hyperscan: there it must run
    pytest.importorskip("hyperscan")

PYTHON = Detector(scanner=PythonScanner(SCANNED))
HYPERSCAN = Detector(scanner=HyperscanScanner(SCANNED))
VARIANTS = [shape for secret in SECRETS for shape in shapes(secret)]
LITERALS = sorted({literal.text.decode("latin-1") for literal in SCANNED})


def plain_chunks(size: int = 400) -> Iterator[str]:
    """The plain corpus (sources, docs, the real sessions' texts) joined as a row's texts are."""
    chunk: list[str] = []
    for _, text in texts():
        chunk.append(text)
        if len(chunk) == size:
            yield SEPARATOR.join(chunk)
            chunk = []
    if chunk:
        yield SEPARATOR.join(chunk)


def test_the_detector_uses_hyperscan_when_it_is_installed() -> None:
    assert SCANNER.name == "hyperscan"


def test_without_hyperscan_the_detector_falls_back_to_python_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # `import hyperscan` raises ImportError
    assert best_scanner(SCANNED).name == "python"


def test_both_scanners_mask_every_corpus_variant_the_same() -> None:
    for variant in VARIANTS:
        assert PYTHON.mask(variant) == HYPERSCAN.mask(variant), variant
    assert PYTHON.mask_many(VARIANTS) == HYPERSCAN.mask_many(VARIANTS)


def test_both_scanners_find_the_same_spans_in_real_code_prose_and_sessions() -> None:
    chunks = 0
    for chunk in plain_chunks():
        assert PYTHON.spans(chunk) == HYPERSCAN.spans(chunk)
        chunks += 1
    assert chunks > 100


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(VARIANTS) | st.sampled_from(LITERALS) | st.text(max_size=30), max_size=8),
    st.sampled_from(["", " ", "\n", "_", "-", "=", '"', SEPARATOR]),
)
@example(["task-", "sk-", "runner"], "")  # a token rule's literal in a short word: outside every run
@example(["AKIA", "x" * 30], " ")
@example(["--pass", "word", "=", "hunter2"], "")
def test_both_scanners_find_the_same_spans_in_any_mix(pieces: list[str], glue: str) -> None:
    text = glue.join(pieces)
    assert PYTHON.spans(text) == HYPERSCAN.spans(text)


def test_threads_scanning_at_once_each_get_their_own_answer() -> None:
    """A Hyperscan scan needs scratch space of its own: each thread keeps one (a shared one fails with
    ScratchInUseError when two scans overlap)."""
    chunks = list(plain_chunks(size=2000))[:8]
    expected = [HYPERSCAN.spans(chunk) for chunk in chunks]
    results: dict[int, list[object]] = {}
    start = threading.Barrier(len(chunks))

    def scan(index: int) -> None:
        start.wait()
        results[index] = [HYPERSCAN.spans(chunks[index]) for _ in range(5)]

    threads = [threading.Thread(target=scan, args=(i,)) for i in range(len(chunks))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[i] for i in range(len(chunks))] == [[spans] * 5 for spans in expected]
