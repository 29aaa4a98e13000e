"""An OpenCode import is linear in its sessions (issue 50): a parent with many sub-agent sessions, each
started by a task call, costs about 4x the calls at 4x the sessions (each child scanned every session
and every message before: 2,000 sessions took 2.9 s, 8,000 took 23.7 s)."""

from __future__ import annotations

from tests.helpers.shapes import calls_made, opencode_parent_of
from waybook.formats.opencode import import_opencode
from waybook.formats.opencode._storage import _Skips, _tree


def _import(children: int) -> object:
    sessions, messages = opencode_parent_of(children)

    def run() -> None:
        stored = _tree("ses_p", sessions, lambda sid: messages.get(sid, ()), _Skips(lenient=False))
        imported = import_opencode(stored, name="main")
        assert len(imported.subagents) == children

    return run


def test_an_import_of_many_sub_agent_sessions_grows_linearly_in_them() -> None:
    small, large = calls_made(_import(200)), calls_made(_import(800))
    assert large / small < 5.5
