"""Test-wide settings. Machines here are shared and noisy: no test may depend on wall-clock speed."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "waybook",
    deadline=None,  # timing belongs in bench/, not in tests
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("waybook")

# PostgreSQL: a server for the session (found or started), a fresh schema per test.
from tests.helpers.pg_fixtures import (  # noqa: E402, F401
    pg_cluster,
    pg_server,
    pg_url,
    pytest_collection_modifyitems,
)
