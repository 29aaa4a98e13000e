"""Random SessionStore programs from two processes on one directory store match a plain model."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

import anyio
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from waybook.integrations.claude_agent_sdk import WaybookSessionStore
from waybook.stores import open_store

PROJECTS = st.sampled_from(["p", "q"])
SESSIONS = st.sampled_from(["s1", "s2"])
SUBPATHS = st.sampled_from(["", "subagents/agent-1", "subagents/agent-2"])
UUIDS = st.one_of(st.none(), st.sampled_from(["u1", "u2", "u3"]))
Key = tuple[str, str, str]


def as_key(key: Key) -> dict[str, str]:
    return {"project_key": key[0], "session_id": key[1], **({"subpath": key[2]} if key[2] else {})}


class SameAsTheModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="waybook-claude-"))
        self.stores = [WaybookSessionStore(open_store(f"file:{self.folder}")) for _ in range(2)]
        self.model: dict[Key, list[dict[str, Any]]] = {}
        self.n = 0

    def teardown(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    @rule(
        project=PROJECTS,
        session=SESSIONS,
        subpath=SUBPATHS,
        uuids=st.lists(UUIDS, max_size=3),
        writer=st.integers(0, 1),
    )
    def append(self, project: str, session: str, subpath: str, uuids: list[str | None], writer: int) -> None:
        key = (project, session, subpath)
        batch = []
        for uuid in uuids:
            self.n += 1
            batch.append({"type": "x", "n": self.n, **({"uuid": uuid} if uuid else {})})
        anyio.run(self.stores[writer].append, as_key(key), batch)
        stored = self.model.setdefault(key, [])
        for item in batch:
            if "uuid" not in item or item["uuid"] not in {e.get("uuid") for e in stored}:
                stored.append(item)
        if not stored:
            del self.model[key]

    @rule(project=PROJECTS, session=SESSIONS, subpath=SUBPATHS, writer=st.integers(0, 1))
    def delete(self, project: str, session: str, subpath: str, writer: int) -> None:
        anyio.run(self.stores[writer].delete, as_key((project, session, subpath)))
        for key in list(self.model):
            if key[:2] == (project, session) and (not subpath or key[2] == subpath):
                del self.model[key]

    @rule(project=PROJECTS, session=SESSIONS, subpath=SUBPATHS, reader=st.integers(0, 1))
    def load(self, project: str, session: str, subpath: str, reader: int) -> None:
        key = (project, session, subpath)
        assert anyio.run(self.stores[reader].load, as_key(key)) == self.model.get(key)

    @invariant()
    def listings_agree(self) -> None:
        for store in self.stores:
            for project in ("p", "q"):
                listed = anyio.run(store.list_sessions, project)
                expected = sorted({k[1] for k in self.model if k[0] == project and not k[2]})
                assert sorted(s["session_id"] for s in listed) == expected
                summaries = anyio.run(store.list_session_summaries, project)
                assert sorted(s["session_id"] for s in summaries) == expected
                for session in ("s1", "s2"):
                    subkeys = anyio.run(store.list_subkeys, {"project_key": project, "session_id": session})
                    assert subkeys == sorted(k[2] for k in self.model if k[:2] == (project, session) and k[2])


SameAsTheModel.TestCase.settings = settings(max_examples=15, stateful_step_count=15, deadline=None)
test_random_programs_from_two_processes_match_the_model = SameAsTheModel.TestCase
