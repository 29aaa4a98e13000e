"""pytest fixtures for PostgreSQL tests: the session's server, a fresh store URL per test, and a
cluster the tests own (to crash and restart). Imported into tests/conftest.py; see tests/helpers/pg_server.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.pg_server import (
    Bouncer,
    Cluster,
    NoServerError,
    Server,
    in_ci,
    owned_cluster,
    shared,
    store_url,
)


def unavailable(reason: str) -> None:
    """Skip with a one-line reason; under CI=true, fail instead (CI must install PostgreSQL)."""
    if in_ci():
        pytest.fail(f"PostgreSQL tests cannot run under CI=true: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL: {reason}")


def pg_store_url() -> str:
    """A fresh store URL, or skip/fail the calling test when there is no server."""
    try:
        return store_url()
    except NoServerError as exc:
        unavailable(str(exc))
        raise


@pytest.fixture(scope="session")
def pg_server() -> Server:
    """The PostgreSQL server of this test session."""
    try:
        return shared()
    except NoServerError as exc:
        unavailable(str(exc))
        raise


@pytest.fixture
def pg_url(pg_server: Server) -> str:
    """A `postgresql://` URL of an empty store: connections work in a fresh schema."""
    return pg_store_url()


@pytest.fixture(scope="session")
def pg_cluster(pg_server: Server) -> Iterator[Cluster]:
    """A cluster these tests own and may crash and restart: the session's own, or a second one."""
    if pg_server.cluster is not None:
        yield pg_server.cluster
        return
    try:
        context = owned_cluster()
        cluster = context.__enter__()
    except NoServerError as exc:
        unavailable(str(exc))
        raise
    try:
        yield cluster
    finally:
        context.__exit__(None, None, None)


def mark_postgres_machines_slow(items: list[pytest.Item]) -> None:
    """The journal and store state machines are hundreds of round trips per example on PostgreSQL:
    mark their PostgreSQL runs slow (CI runs them; `-m "not slow"` leaves them out locally)."""
    for item in items:
        if "state_machine" in item.nodeid and "[postgresql" in item.nodeid:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def pg_bouncer(pg_server: Server) -> Iterator[Bouncer]:
    """A real PgBouncer in transaction mode in front of the session's server (tests/helpers/pg_server.py)."""
    try:
        bouncer = Bouncer.start(pg_server.url)
    except NoServerError as exc:
        unavailable(str(exc))
        raise
    try:
        yield bouncer
    finally:
        bouncer.stop()
