"""Issue 44, OpenAI Agents: what a crash mid-turn leaves, how the next run goes on, and rewinds.

The SDK saves a run's input to the session before it calls the model, so a run that dies there leaves
the user item behind (docs/openai-agents.md, "A crash mid-turn"). Popping it and running again makes the
crashed turn an abandoned branch that ends on that user message: never a training row. A rewind popping
item by item writes one leaf move per item; `tree` and the viewer show the run of them as one.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import ROOT
from waybook.integrations.openai_agents import WaybookSession
from waybook.journal import verify
from waybook.stores import open_store
from waybook.view._data import page_data

set_tracing_disabled(True)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def agent(*replies: str) -> Agent[Any]:
    return Agent(name="geo", model=ScriptedModel([[assistant_message(text)] for text in replies]))


def test_a_crash_mid_turn_leaves_the_user_item_and_the_retry_leaves_no_row_ending_on_it(
    tmp_path: Path,
) -> None:
    url = f"file:{tmp_path / 'store'}"
    session = WaybookSession("trip", open_store(url))
    run(Runner.run(agent("Paris."), "Capital of France?", session=session))
    with pytest.raises(Exception):  # noqa: B017, PT011 - the model dies mid-turn, whatever it raises
        run(Runner.run(agent(), "Population?", session=session))  # a model with no reply left: it fails
    items = run(session.get_items())
    assert [i.get("role") for i in items] == ["user", "assistant", "user"]  # the input was saved first
    assert items[-1]["content"] == "Population?"
    # the next run: take the unanswered input back, then ask again (docs/openai-agents.md)
    assert run(session.pop_item())["content"] == "Population?"
    run(Runner.run(agent("About 2 million."), "Population?", session=session))
    rows_file = tmp_path / "rows.jsonl"
    ran = waybook(
        "export",
        "--format",
        "openai",
        "--branches",
        "all",
        "--store",
        url,
        session.journal_id,
        "-o",
        str(rows_file),
    )
    assert ran.returncode == 0, ran.stderr
    assert "abandoned branches that end on a user message" in ran.stderr
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert [[m["content"] for m in row["messages"]] for row in rows] == [
        ["Capital of France?", "Paris.", "Population?", "About 2 million."]
    ]
    session.close()


def said_text(content: Any) -> str:
    """An item's text: a user item's string, or an assistant message's output_text parts."""
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


DIES_MID_TURN = """
import asyncio, sys
from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel
from waybook.integrations.openai_agents import WaybookSession
from waybook.stores import open_store


class Calling(ScriptedModel):
    async def get_response(self, *args, **kwargs):
        print("calling the model", flush=True)  # the input is saved: the parent kills us here
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        raise SystemExit("never killed")


set_tracing_disabled(True)
session = WaybookSession("trip", open_store(sys.argv[1]))
asyncio.run(Runner.run(Agent(name="geo", model=Calling()), "Population?", session=session))
"""


def test_a_process_killed_while_the_model_answers_leaves_the_user_item_and_the_next_run_goes_on(
    tmp_path: Path,
) -> None:
    url = f"file:{tmp_path / 'store'}"
    session = WaybookSession("trip", open_store(url))
    run(Runner.run(agent("Paris."), "Capital of France?", session=session))
    session.close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen(
        [sys.executable, "-c", DIES_MID_TURN, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "calling the model\n"
    finally:
        child.kill()  # SIGKILL: no handler, no cleanup
        child.communicate()
    assert child.returncode == -9
    session = WaybookSession("trip", open_store(url))
    said = [(i["role"], said_text(i["content"])) for i in run(session.get_items())]
    assert said == [("user", "Capital of France?"), ("assistant", "Paris."), ("user", "Population?")]
    with open_store(url).open(session.journal_id) as journal:  # the SDK saved the input, no answer
        assert verify(journal).ok
    popped = run(session.pop_item())  # docs/openai-agents.md: take it back, then ask again
    run(Runner.run(agent("About 2 million."), popped["content"], session=session))
    said = [(i["role"], said_text(i["content"])) for i in run(session.get_items())]
    assert said[2:] == [("user", "Population?"), ("assistant", "About 2 million.")]
    session.close()


def test_a_six_turn_rewind_of_24_pops_shows_as_one_leaf_move_in_tree_and_the_viewer(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    session = WaybookSession("long", open_store(url))
    for turn in range(6):
        run(
            session.add_items(
                [
                    {"role": "user", "content": f"question {turn}"},
                    {"type": "function_call", "call_id": f"c{turn}", "name": "look", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": f"c{turn}", "output": "found"},
                    {"role": "assistant", "content": f"answer {turn}"},
                ]
            )
        )
    run(session.add_items([{"role": "user", "content": "one more"}, {"role": "assistant", "content": "ok"}]))
    for _ in range(26):  # back past six turns, to before the first question
        run(session.pop_item())
    run(session.add_items([{"role": "user", "content": "start again"}]))
    tree = waybook("tree", "--store", url, session.journal_id)
    assert tree.returncode == 0, tree.stderr
    assert tree.stdout.count("openai-agents: pop_item") == 1
    assert "(26 moves, one after another)" in tree.stdout
    with open_store(url).open(session.journal_id) as journal:
        records = list(journal.read())
        report = verify(journal)
    moves = page_data(records, report, journal_id=session.journal_id)["moves"]
    assert len(moves) == 1
    assert moves[0]["count"] == 26
    session.close()
