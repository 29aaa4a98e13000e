"""Memory tests never write to the user's own waybook home: each test gets an empty `WAYBOOK_HOME`
(a sync records its remote there, `home()` keeps its default store there). A test that checks the
environment rules sets or removes it itself."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_waybook_home(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("waybook-home")
    monkeypatch.setenv("WAYBOOK_HOME", str(home))
    return home
