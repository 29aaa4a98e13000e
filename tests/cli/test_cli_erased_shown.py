"""Issue 46 on the command line: after `waybook erase`, `show` (path, context, JSON), `tree`, `search` and
the exports show each erased record as the placeholder naming the erasure's seq and reason, never its
old text; `export --erased drop|mark` chooses what training rows do with it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli_runner import waybook
from tests.helpers.erased_sessions import (
    ASK,
    CALL,
    ERASURE,
    NEIGHBOURS,
    REASON,
    RESULT,
    SECRET,
    WELCOME,
    erased_session,
    placeholder,
    tool_session,
)
from waybook import JsonlJournal
from waybook.stores import open_store


def erased_file(tmp_path: Path, seqs: str = f"{CALL}..{RESULT}") -> Path:
    path = tmp_path / "vault.jsonl"
    with JsonlJournal(path) as journal:
        tool_session(journal)
    ran = waybook("erase", path, "--seq", seqs, "--reason", REASON)
    assert ran.returncode == 0, ran.stderr
    return path


def test_show_writes_the_placeholder_where_the_erased_records_were(tmp_path: Path) -> None:
    path = erased_file(tmp_path)
    for args in ([], ["--context"]):
        ran = waybook("show", path, "--no-pager", *args)
        assert ran.returncode == 0, ran.stderr
        assert SECRET not in ran.stdout
        assert ran.stdout.count(placeholder()) == 2
        for neighbour in NEIGHBOURS:
            assert neighbour in ran.stdout


def test_show_json_marks_each_erased_record_with_its_erasure(tmp_path: Path) -> None:
    path = erased_file(tmp_path)
    records = json.loads(waybook("show", path, "--json").stdout)["records"]
    by_seq = {r["seq"]: r for r in records}
    assert by_seq[RESULT]["erased"] == ERASURE
    assert by_seq[RESULT]["body"]["content"] == [{"type": "text", "text": placeholder()}]
    assert by_seq[RESULT]["body"]["call_id"] == "c1"
    assert "erased" not in by_seq[WELCOME]
    context = json.loads(waybook("show", path, "--context", "--json").stdout)
    (tool,) = [m for m in context if m["role"] == "tool"]
    assert tool["content"] == [{"type": "text", "text": placeholder()}]


def test_tree_labels_an_erased_run_end_with_the_placeholder(tmp_path: Path) -> None:
    path = erased_file(tmp_path, str(WELCOME))
    ran = waybook("tree", path)
    assert ran.returncode == 0, ran.stderr
    assert f"erased by #{ERASURE}" in ran.stdout
    assert NEIGHBOURS[3] not in ran.stdout


def test_diff_summarises_an_erased_record_as_its_placeholder(tmp_path: Path) -> None:
    path = erased_file(tmp_path)
    with JsonlJournal(path) as journal:
        ids = {record.seq: record.id for record in journal.read()}
    ran = waybook("diff", path, "--leaf", ids[ASK], "--leaf", ids[WELCOME])
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count(f"erased by #{ERASURE}") == 2  # the call and its result, after the fork
    assert SECRET not in ran.stdout


def test_search_never_finds_the_erased_text_again_and_finds_the_hole(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store, store.create("vault") as journal:
        tool_session(journal)
    before = waybook("search", SECRET, "--store", url, "--json")
    assert {hit["seq"] for hit in json.loads(before.stdout)} == {CALL, RESULT}  # indexed before the erasure
    erased = waybook("erase", "--store", url, "vault", "--seq", f"{CALL}..{RESULT}", "--reason", REASON)
    assert erased.returncode == 0, erased.stderr
    after = waybook("search", SECRET, "--store", url, "--json")
    assert after.returncode == 1
    assert json.loads(after.stdout) == []
    holes = json.loads(waybook("search", "erased", "--store", url, "--json").stdout)
    assert {hit["seq"] for hit in holes} == {CALL, RESULT}
    assert all(REASON in hit["snippet"] for hit in holes)
    index = tmp_path / "store.db.search.sqlite"
    for file in tmp_path.iterdir():  # the index's pages and log too: the old text is nowhere
        if file.is_file():
            assert SECRET.encode() not in file.read_bytes(), file
    assert index.exists()
    rebuilt = waybook("search", "erased", "--store", url, "--rebuild", "--json")
    assert json.loads(rebuilt.stdout) == holes  # indexed after the erasure: the same placeholders


def test_export_drops_rows_with_erased_content_by_default_and_marks_them_when_asked(tmp_path: Path) -> None:
    path = erased_file(tmp_path)
    dropped = waybook("export", path, "--format", "openai", "-o", "-")
    assert dropped.returncode == 0, dropped.stderr
    assert dropped.stdout == ""
    assert "rows holding erased content (--erased drop): 1" in dropped.stderr
    marked = waybook("export", path, "--format", "openai", "--erased", "mark", "-o", "-")
    (row,) = [json.loads(line) for line in marked.stdout.splitlines()]
    assert SECRET not in marked.stdout
    assert [m["content"] for m in row["messages"]].count(placeholder()) == 2
    bad = waybook("export", path, "--format", "openai", "--erased", "keep", "-o", "-")
    assert bad.returncode == 2
    assert "--erased" in bad.stderr


def test_a_pi_export_shows_the_placeholders_and_keeps_the_call_paired(tmp_path: Path) -> None:
    path = erased_file(tmp_path)
    ran = waybook("export", path, "--format", "pi", "-o", "-")
    assert ran.returncode == 0, ran.stderr
    assert SECRET not in ran.stdout
    assert ran.stdout.count(placeholder()) == 2
    assert '"c1"' in ran.stdout
    archival = waybook("export", path, "--format", "archival", "-o", "-")
    assert SECRET not in archival.stdout  # the journal as written: its erased lines, which prove the hole
    assert waybook("export", path, "--format", "archival", "--erased", "mark", "-o", "-").returncode == 2


def test_log_summarises_an_erased_record_as_its_placeholder_and_json_names_the_erasure(
    tmp_path: Path,
) -> None:
    path = erased_file(tmp_path)
    ran = waybook("log", path)
    assert ran.returncode == 0, ran.stderr
    assert SECRET not in ran.stdout
    assert f"erased by #{ERASURE}" in ran.stdout
    lines = [json.loads(line) for line in waybook("log", path, "--json").stdout.splitlines()]
    assert [line.get("erased") for line in lines if "erased" in line] == [ERASURE, ERASURE]
    assert SECRET not in json.dumps(lines)


def test_ls_titles_a_journal_whose_first_question_was_erased_by_the_hole_not_the_next_message(
    tmp_path: Path,
) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        erased_session(store.create("vault"), seqs=(ASK,))
    ran = waybook("ls", "--store", url)
    assert ran.returncode == 0, ran.stderr
    (row,) = [line for line in ran.stdout.splitlines() if line.startswith("vault")]
    assert row.endswith(placeholder()), row
    assert NEIGHBOURS[0] not in ran.stdout
    assert NEIGHBOURS[2] not in ran.stdout
