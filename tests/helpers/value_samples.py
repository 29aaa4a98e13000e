"""The golden journal of application values, and its generator.

`fixtures/values/plan-v1.jsonl` was written by the first version of an application's `Plan` class, whose
attribute was `value`. Regenerating it (`python -m tests.helpers.value_samples --write`) breaks the
promise the tests keep (an application renames attributes without migrating stored bytes): never do it
for a rename.
"""

from __future__ import annotations

import sys

import attrs

from tests.helpers.paths import FIXTURES
from waybook import InMemoryJournal, Session
from waybook.codecs import ValueRegistry
from waybook.model import CustomEntry

VALUES_DIR = FIXTURES / "values"
PLAN_V1 = VALUES_DIR / "plan-v1.jsonl"
AT = "2026-12-01T09:00:00.000Z"


@attrs.frozen
class PlanAsFirstWritten:
    """The application's class when the golden journal was written: the wire names are its attributes."""

    goal: str
    value: int
    steps: tuple[str, ...] = ()


def plan_v1_lines() -> list[bytes]:
    registry = ValueRegistry()
    registry.register(PlanAsFirstWritten, "myapp.plan/1")
    ids = iter(["h1", "p1", "p2"])
    journal = InMemoryJournal("plan-v1")
    session = Session.create(journal, journal_id="plan-v1", clock=lambda: AT, ids=lambda: next(ids))
    for value in (PlanAsFirstWritten("ship it", 3, ("build", "test")), PlanAsFirstWritten("rest", 0)):
        session.append(CustomEntry(parent=session.leaf, type="myapp.plan", data=registry.encode(value)))
    return list(journal.read_lines())


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.helpers.value_samples --write   (changes the golden value journal)")
    VALUES_DIR.mkdir(parents=True, exist_ok=True)
    PLAN_V1.write_bytes(b"".join(line + b"\n" for line in plan_v1_lines()))
