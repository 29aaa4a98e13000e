"""Where the PostgreSQL tests get a server: a missing PostgreSQL skips locally and fails under CI."""

from __future__ import annotations

import pytest

from tests.helpers import pg_server
from tests.helpers.pg_fixtures import unavailable
from tests.helpers.pg_server import Cluster, NoServerError, with_schema


def test_without_an_installed_postgresql_there_is_a_one_line_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_server, "find_bindir", lambda: None)
    with pytest.raises(NoServerError, match="apt-get install -y postgresql") as caught:
        Cluster.create()
    assert "\n" not in str(caught.value)


def test_no_server_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL: not installed"):
        unavailable("not installed")


def test_no_server_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="cannot run under CI=true: not installed"):
        unavailable("not installed")


def test_a_schema_is_chosen_with_the_libpq_options_parameter() -> None:
    url = with_schema("postgresql://u@h:5/db?sslmode=disable", "s1")
    assert url == "postgresql://u@h:5/db?sslmode=disable&options=-c%20search_path%3Ds1"
