"""Test-wide settings. Machines here are shared and noisy: no test may depend on wall-clock speed.

Hypothesis draws afresh on every local run (and keeps what fails in .hypothesis/). Under CI=true it
loads the `ci` profile instead: derandomized, so a CI run draws the same examples every time and never
passes or fails by the luck of the draw, and with no example database. (Hypothesis 6.1xx loads a `ci`
profile of its own on CI machines; this one holds for every version the test extra admits and only
under CI=true.) A failure found by a draw is pinned as an explicit `@example` or a named test.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.ids import without_addresses

settings.register_profile(
    "waybook",
    deadline=None,  # timing belongs in bench/, not in tests
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
    derandomize=False,  # not inherited from hypothesis's own CI detection (GITHUB_ACTIONS and others)
)
settings.register_profile("ci", settings.get_profile("waybook"), derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "waybook")

# PostgreSQL: a server for the session (found or started), a fresh schema per test.
from tests.helpers.pg_fixtures import (  # noqa: E402, F401
    mark_postgres_machines_slow,
    pg_cluster,
    pg_server,
    pg_url,
)

# In a runtime suite (scripts/runtime_suites/, WAYBOOK_SUITE=NAME), a skip for the suite's own runtime fails.
from tests.helpers.runtimes import (  # noqa: E402, F401
    pytest_collectreport,
    pytest_runtest_logreport,
    pytest_sessionfinish,
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test id is the same in every process: pytest-xdist's workers must collect the same tests,
    and an id holding an object's address (`ids=repr` of `object()`) differs per process, which stopped
    a whole run once. Such an id fails collection here, in any run, naming the test. (And the PostgreSQL
    runs of the state machines are marked slow: tests/helpers/pg_fixtures.py.)"""
    mark_postgres_machines_slow(items)
    moving = [item.nodeid for item in items if without_addresses(item.nodeid) != item.nodeid]
    if moving:
        msg = "test ids must not hold object addresses (give the parametrize a stable id):\n"
        raise pytest.UsageError(msg + "\n".join(moving))
