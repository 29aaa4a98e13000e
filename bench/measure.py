"""What every bench row is: a value beside its baseline from the same run, and the timers that pair them."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import attrs


@attrs.frozen
class Row:
    name: str
    value: float
    unit: str
    baseline: float | None = None
    target: str = ""
    passed: bool | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.value / self.baseline if self.baseline else None


def rate(count: int, fn: Callable[[], object], *, repeat: int = 3) -> float:
    """Best-of-`repeat` throughput of `fn`, which does `count` operations."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return count / best


def paired_rates(
    count: int, baseline: Callable[[], object], value: Callable[[], object], *, repeat: int = 5
) -> tuple[float, float]:
    """Best-of-`repeat` throughputs of `baseline` and `value`, run alternately.

    On a shared machine the speed of the whole machine drifts over seconds; alternating the two runs
    exposes both to the same drift, so their ratio holds up far better than two separate measurements.
    """
    best_baseline = best_value = float("inf")
    for _ in range(repeat):
        for fn, is_baseline in ((baseline, True), (value, False)):
            start = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - start
            if is_baseline:
                best_baseline = min(best_baseline, elapsed)
            else:
                best_value = min(best_value, elapsed)
    return count / best_baseline, count / best_value


def median_seconds(fn: Callable[[], object], *, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)
