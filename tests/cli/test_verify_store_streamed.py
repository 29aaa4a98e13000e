"""`waybook verify --store URL` on a big store (issue 50): the journals are listed a page at a time, each
report written as it is made, a progress bar with --progress even off a terminal, and sub-agent links
checked with a bounded memory of the journals read before."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.shapes import calls_made
from waybook import Session, cli
from waybook.journal import JsonlJournal
from waybook.model import Record, ToolCallBlock
from waybook.projections import SubagentParent
from waybook.stores import CATALOG_ID, open_store


def store_of(tmp_path: Path, journals: int) -> str:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        for n in range(journals):
            Session(store.create(f"j{n:03d}")).user(f"question {n}")
        store.hide("j001", reason="kept out of the listing, not out of verify")
    return url


def test_verify_store_with_progress_draws_its_bar_on_a_stderr_that_is_not_a_terminal(tmp_path: Path) -> None:
    url = store_of(tmp_path, 3)
    shown = waybook("verify", "--store", url, "--progress")
    assert shown.returncode == 0
    assert "verifying" in shown.stderr
    quiet = waybook("verify", "--store", url)
    assert quiet.returncode == 0
    assert "verifying" not in quiet.stderr  # no terminal, no --progress: no bar


def test_verify_store_json_is_one_array_with_emit_jsons_bytes_every_journal_then_the_catalog(
    tmp_path: Path,
) -> None:
    url = store_of(tmp_path, 5)
    ran = waybook("verify", "--store", url, "--json")
    assert ran.returncode == 0
    reports = json.loads(ran.stdout)
    assert [r["path"] for r in reports] == [f"j{n:03d}" for n in range(5)] + [CATALOG_ID]
    assert ran.stdout == json.dumps(reports, sort_keys=True, ensure_ascii=False) + "\n"


def test_a_sub_agent_verified_long_after_its_parent_still_has_its_link_checked_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("waybook.commands.verify_links.KEPT_FACTS", 1)  # every fact read again
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        parent = Session(store.create("parent"))
        parent.user("research this")
        call = parent.assistant(
            [ToolCallBlock(call_id="task-1", name="task", arguments={"prompt": "look it up"})],
            stop_reason="tool_use",
        )
        for n in range(3):  # journals between the parent and its sub-agent
            Session(store.create(f"between-{n}")).user("unrelated")
        meta = SubagentParent("parent", call.id, "task-1").metadata()
        Session(store.create("child", metadata=meta)).user("look it up")
        parent.link_subagent("child", at=call.id, call_id="task-1")
        Session(store.create("late", metadata=SubagentParent("gone", call.id, "t").metadata())).user("x")
    ran = waybook("verify", "--store", url, "--json")
    reports = {r["path"]: r for r in json.loads(ran.stdout)}
    assert reports["parent"]["links"] == {"links": 1, "parent": None, "problems": [], "notes": []}
    assert reports["child"]["links"]["problems"] == []
    assert [p["kind"] for p in reports["late"]["links"]["problems"]] == ["missing"]
    assert ran.returncode == 1  # the one sub-agent whose parent is missing


def _store_with_sub_agents(tmp_path: Path, parents: int) -> str:
    """`parents` sessions, each with a sub-agent created before its link (the imported order) and one
    created after, every link two-way."""
    url = f"file:{tmp_path}/store-{parents}"
    with open_store(url) as store:
        for n in range(parents):
            parent = Session(store.create(f"p{n:04d}"))
            parent.user(f"question {n}")
            for k in range(2):
                call = parent.assistant(
                    [ToolCallBlock(call_id=f"task-{k}", name="task", arguments={"prompt": "go"})],
                    stop_reason="tool_use",
                )
                meta = SubagentParent(f"p{n:04d}", call.id, f"task-{k}").metadata()
                Session(store.create(f"p{n:04d}-a{k}", metadata=meta)).user("go")
                parent.link_subagent(f"p{n:04d}-a{k}", at=call.id, call_id=f"task-{k}")
    return url


def _verify_in_process(url: str) -> Callable[[], object]:
    def run() -> None:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert cli.main(["verify", "--store", url, "--json"]) == 0
        assert len(json.loads(out.getvalue())) > 1

    return run


def test_verify_store_does_the_same_work_per_journal_at_any_store_size(tmp_path: Path) -> None:
    """4x the journals makes at most about 4x the calls: nothing is redone per journal of the store
    (a listing, a catalog fold, a feed read, a re-read of every journal seen before)."""
    small, large = _store_with_sub_agents(tmp_path, 20), _store_with_sub_agents(tmp_path, 80)
    _verify_in_process(small)()  # imports and caches warm, so only verify's own work is counted
    assert calls_made(_verify_in_process(large)) / calls_made(_verify_in_process(small)) < 4.4


def test_verify_store_opens_and_reads_each_journal_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _store_with_sub_agents(tmp_path, 10)
    opened: Counter[str] = Counter()
    reads: Counter[str] = Counter()
    records_read: Counter[str] = Counter()
    real_init, real_read = JsonlJournal.__init__, JsonlJournal.read

    def counting_init(self: JsonlJournal, path: Path, *args: object, **kwargs: object) -> None:
        opened[Path(path).name] += 1
        real_init(self, path, *args, **kwargs)  # type: ignore[arg-type]

    def counting_read(self: JsonlJournal, *args: object, **kwargs: object) -> Iterator[Record]:
        reads[self.path.name] += 1
        for record in real_read(self, *args, **kwargs):  # type: ignore[arg-type]
            records_read[self.path.name] += 1
            yield record

    monkeypatch.setattr(JsonlJournal, "__init__", counting_init)
    monkeypatch.setattr(JsonlJournal, "read", counting_read)
    _verify_in_process(url)()
    journals = {name: n for name, n in opened.items() if name.startswith("p")}
    assert len(journals) == 30
    assert max(journals.values()) <= 2, journals  # its proof; a sub-agent also its parent's link check
    # its proof, one read its receipt and link checks share; a sub-agent also its parent's link check
    assert max(reads[name] for name in journals) <= 3, reads
    # the catalog is read on from where the store last read it: never folded again per journal
    with open_store(url) as store, store.open_catalog() as catalog:
        assert records_read["catalog.jsonl"] <= 2 * catalog.head().seq, records_read
