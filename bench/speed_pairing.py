"""How a speed row (bench/speed.py) is measured: its work and its baseline run alternately, the order
flipped each round, and the ratio reported is the median of the per-round ratios.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import attrs  # noqa: E402

from bench.measure import Row  # noqa: E402


@attrs.frozen
class PairedRow(Row):
    """A row whose ratio is the median of per-round ratios (not the ratio of two separate bests)."""

    paired_ratio: float | None = None

    @property
    def ratio(self) -> float | None:
        return self.paired_ratio


def paired(
    count: int, baseline: Callable[[], object], value: Callable[[], object], *, rounds: int = 7
) -> tuple[float, float, float]:
    """Run `baseline` and `value` (each doing `count` operations) alternately for `rounds` rounds,
    flipping which goes first each round. Returns (median baseline rate, median value rate, median of
    the per-round ratios value rate / baseline rate)."""
    base_times: list[float] = []
    value_times: list[float] = []
    for round_ in range(rounds):
        order = ((baseline, base_times), (value, value_times))
        for fn, times in order if round_ % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    ratios = [b / v for b, v in zip(base_times, value_times, strict=True)]
    return (
        count / statistics.median(base_times),
        count / statistics.median(value_times),
        statistics.median(ratios),
    )


def row(
    name: str,
    count: int,
    baseline: Callable[[], object],
    value: Callable[[], object],
    *,
    unit: str,
    goal: float | None,
    note: str,
    rounds: int = 7,
) -> PairedRow:
    base, rate, ratio = paired(count, baseline, value, rounds=rounds)
    target = f">= {goal:.2f} of baseline" if goal is not None else ""
    passed = None if goal is None else ratio >= goal
    return PairedRow(name, rate, unit, base, target, passed, note, paired_ratio=ratio)
