"""An OpenCode import is linear in its sessions (issue 50): a parent with many sub-agent sessions, each
started by a task call, costs about 4x the calls at 4x the sessions (each child scanned every session
and every message before: 2,000 sessions took 2.9 s, 8,000 took 23.7 s)."""

from __future__ import annotations

from typing import Any

from tests.helpers.shapes import calls_made
from waybook.formats.opencode import import_opencode
from waybook.formats.opencode._storage import _Skips, _tree


def _sessions(children: int) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    sessions = {"ses_p": {"id": "ses_p", "title": "parent"}}
    sessions |= {f"ses_{i:05d}": {"id": f"ses_{i:05d}", "parentID": "ses_p"} for i in range(children)}
    calls = [
        {
            "id": f"prt_{i}",
            "type": "tool",
            "callID": f"call_{i}",
            "tool": "task",
            "state": {
                "status": "completed",
                "input": {"subagent_type": "general"},
                "metadata": {"sessionId": f"ses_{i:05d}"},
                "output": "done",
            },
        }
        for i in range(children)
    ]
    info = {
        "id": "msg_1",
        "sessionID": "ses_p",
        "role": "assistant",
        "time": {"created": 1},
        "parentID": "msg_0",
        "modelID": "m",
        "providerID": "p",
        "finish": "stop",
    }
    user = {"id": "msg_0", "sessionID": "ses_p", "role": "user", "time": {"created": 0}}
    messages = {"ses_p": ((user, ({"id": "prt_u", "type": "text", "text": "go"},)), (info, tuple(calls)))}
    return sessions, messages


def _import(children: int) -> object:
    sessions, messages = _sessions(children)

    def run() -> None:
        stored = _tree("ses_p", sessions, lambda sid: messages.get(sid, ()), _Skips(lenient=False))
        imported = import_opencode(stored, name="main")
        assert len(imported.subagents) == children

    return run


def test_an_import_of_many_sub_agent_sessions_grows_linearly_in_them() -> None:
    small, large = calls_made(_import(200)), calls_made(_import(800))
    assert large / small < 5.5
