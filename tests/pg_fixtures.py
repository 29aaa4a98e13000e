"""pytest fixtures for PostgreSQL tests: a server for the session, a fresh schema per test.

Imported into tests/conftest.py. See tests/pg_server.py for where the server comes from.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.pg_server import Cluster, NoServer, Server, in_ci, owned_cluster, server, with_schema


def _unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"PostgreSQL tests cannot run under CI=true: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL: {reason}")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    """The PostgreSQL server of this test session."""
    try:
        context = server()
        found = context.__enter__()
    except NoServer as exc:
        _unavailable(str(exc))
        raise  # unreachable: _unavailable skips or fails
    try:
        yield found
    finally:
        context.__exit__(None, None, None)


@pytest.fixture(scope="session")
def pg_cluster(pg_server: Server) -> Iterator[Cluster]:
    """A cluster these tests own and may crash and restart: the session's own, or a second one."""
    if pg_server.cluster is not None:
        yield pg_server.cluster
        return
    try:
        context = owned_cluster()
        cluster = context.__enter__()
    except NoServer as exc:
        _unavailable(str(exc))
        raise
    try:
        yield cluster
    finally:
        context.__exit__(None, None, None)


def fresh_schema(url: str) -> str:
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return schema


def drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def pg_url(pg_server: Server) -> Iterator[str]:
    """A `postgresql://` URL whose connections work in a fresh, empty schema, dropped after the test."""
    schema = fresh_schema(pg_server.url)
    try:
        yield with_schema(pg_server.url, schema)
    finally:
        drop_schema(pg_server.url, schema)
