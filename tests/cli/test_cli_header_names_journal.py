"""`waybook import ... --store URL JOURNAL_ID` writes a journal whose header names JOURNAL_ID (a store's
journal names its own id: docs/journal-contract.md, "The header names the journal"); on today's main a
Pi, Codex, OpenAI Agents or LangGraph import kept the source's id in the header. A header the import
cannot rename (a waybook journal its Pi export carried whole) is a usage error naming the arguments,
before anything is written. `waybook verify --store` warns of a stored journal whose header names another.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import FIXTURES, SHARED_FIXTURES
from tests.helpers.sessions import branching_session
from waybook.journal import JsonlJournal
from waybook.model import Header
from waybook.stores import copy_records, open_store

PI = SHARED_FIXTURES / "pi" / "before-compaction.jsonl"
CODEX = sorted((SHARED_FIXTURES / "codex").glob("rollout-*.jsonl"))
OPENAI_AGENTS = FIXTURES / "openai-agents" / "advanced-session.db"
LANGGRAPH = FIXTURES / "langgraph" / "checkpoints.db"


def header_of(url: str, journal_id: str) -> Header:
    with open_store(url) as store, store.open(journal_id) as journal:
        body = next(iter(journal.read())).body
    assert isinstance(body, Header)
    return body


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return f"file:{tmp_path}/store" if request.param == "file" else f"sqlite:{tmp_path}/store.db"


@pytest.mark.skipif(not PI.is_file(), reason="the Pi fixture is not on this machine")
def test_a_pi_import_under_an_id_of_its_own_names_it_and_exports_the_session_id_back(
    url: str, tmp_path: Path
) -> None:
    alone = tmp_path / "alone.jsonl"
    assert waybook("import", "pi", PI, "-o", alone).returncode == 0  # a file: the header names the session
    run = waybook("import", "pi", PI, "--store", url, "my-session")
    assert run.returncode == 0, run.stderr
    assert header_of(url, "my-session").journal == "my-session"
    with open_store(url) as store, store.open("my-session") as journal, JsonlJournal(alone) as file:
        named, kept = list(journal.read()), list(file.read())
    assert [(r.id, r.at, r.body) for r in named[1:]] == [(r.id, r.at, r.body) for r in kept[1:]]
    from_store = tmp_path / "from-store.pi.jsonl"
    from_file = tmp_path / "from-file.pi.jsonl"
    assert waybook("export", "--store", url, "my-session", "--format", "pi", "-o", from_store).returncode == 0
    assert waybook("export", alone, "--format", "pi", "-o", from_file).returncode == 0
    assert from_store.read_bytes() == from_file.read_bytes()  # Pi's session id comes back
    again = waybook("import", "pi", PI, "--store", url, "my-session")
    assert again.returncode == 0, again.stderr
    assert "is up to date" in again.stderr


@pytest.mark.skipif(not CODEX, reason="the Codex fixture is not on this machine")
def test_a_codex_import_under_an_id_of_its_own_names_it_and_keeps_the_session_in_metadata(url: str) -> None:
    assert waybook("import", "codex", CODEX[0], "--store", url, "rollout").returncode == 0
    header = header_of(url, "rollout")
    assert header.journal == "rollout"
    assert isinstance(header.metadata["codex"]["id"], str)


def test_openai_agents_and_langgraph_imports_name_the_id_given(url: str) -> None:
    agents = ("import", "openai-agents", OPENAI_AGENTS, "--session", "research-1")
    ran = waybook(*agents, "--store", url, "agents")
    assert ran.returncode == 0, ran.stderr
    assert header_of(url, "agents").journal == "agents"
    ran = waybook("import", "langgraph", LANGGRAPH, "--thread", "thread-1", "--store", url, "graph")
    assert ran.returncode == 0, ran.stderr
    assert header_of(url, "graph").journal == "graph"


def test_a_header_carried_whole_under_another_id_is_a_usage_error_before_anything_is_written(
    url: str, tmp_path: Path
) -> None:
    source = tmp_path / "source.jsonl"
    with JsonlJournal(source) as journal:
        copy_records(branching_session().read(), journal)  # its header names "golden"
    exported = tmp_path / "golden.pi.jsonl"
    assert waybook("export", source, "--format", "pi", "-o", exported).returncode == 0
    run = waybook("import", "pi", exported, "--store", url, "other")
    assert run.returncode == 2
    assert f"--store {url} other: the journal's header names journal 'golden'" in run.stderr
    assert f"import it as `--store {url} golden`" in run.stderr
    assert "nothing was written" in run.stderr
    assert not any(tmp_path.glob("store*"))  # not even the store was made
    ok = waybook("import", "pi", exported, "--store", url, "golden")  # under its own id: every byte kept
    assert ok.returncode == 0, ok.stderr
    with open_store(url) as store, store.open("golden") as journal:
        assert list(journal.read_lines()) == source.read_bytes().splitlines()


def test_verify_warns_of_a_journal_whose_header_names_another_and_passes_it(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store, store.create("golden", header=False) as journal:
        copy_records(branching_session().read(), journal)
    journals = tmp_path / "store" / "journals"
    shutil.copyfile(journals / "golden.jsonl", journals / "renamed.jsonl")  # a file renamed by hand
    run = waybook("verify", "--store", url, "renamed")
    assert run.returncode == 0, run.stderr
    assert "renamed.jsonl: ok" in run.stdout
    assert "warning: its header names journal 'golden', not 'renamed'" in run.stdout
    report = json.loads(waybook("verify", "--store", url, "golden", "renamed", "--json").stdout)
    by_path = {entry["path"]: entry for entry in report}
    assert by_path["renamed"]["ok"] is True
    assert by_path["renamed"]["warnings"] == [
        "its header names journal 'golden', not 'renamed' (stored before stores refused that, or its file "
        "renamed); the chain is sound. A copy whose header names its own id: `waybook migrate --store URL "
        "renamed --to NEW_ID`"
    ]
    assert "warnings" not in by_path["golden"]
