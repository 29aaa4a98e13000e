"""Issue 33, point 1: a Pi file Pi's own loader reads imports, with Pi's id and parent rules.

Pi (badlogic/pi-mono, packages/coding-agent/src/core/session-manager.ts) keeps the later of two entries
with one id, treats an entry whose parentId is its own id or names no entry as a root, finds a parent
wherever it is in the file, and resumes at the file's last entry. An id import derives never collides
with one in the file, and --lenient turns any per-entry problem into a reported skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.formats.test_pi_fidelity import exported, journal_of
from tests.helpers.cli_runner import waybook
from tests.helpers.formats import pi_journal
from tests.helpers.paths import FIXTURES
from tests.helpers.pi import HEADER_V3, answer, entry, user
from waybook.export._openai_format import problems
from waybook.formats.pi._codec import PiFormatError, import_pi
from waybook.journal import InMemoryJournal
from waybook.model import CustomEntry, TextBlock
from waybook.projections import TreeProjection, context_at, replay


def lines(*rows: str) -> str:
    return "\n".join(rows) + "\n"


def texts(journal: InMemoryJournal) -> list[str]:
    tree = replay(TreeProjection(), journal)
    out = []
    for message in context_at(journal, tree):
        block = message.content[0]  # type: ignore[union-attr]
        out.append(block.text if isinstance(block, TextBlock) else "")
    return out


# The real failure, reproduced: concurrent writers joined two entries on one line, and the second one
# names itself as its parent. The import used to derive a leaf move to it before it existed ("... goes to
# 'b', which is not a node of this journal"), then (issue 33) imported both entries. Pi's loader parses
# each line with JSON.parse, which fails on a joined line, and skips it (issue 44; checked with Pi
# 0.73.1's own parseSessionEntries, migrateSessionEntries and buildSessionContext): `c` names a parent
# Pi never loaded, so it is a root, and the context is `c` alone.
JOINED_SELF_PARENT = lines(
    json.dumps(HEADER_V3),
    json.dumps(user("a", None, "first question")),
    json.dumps(answer("x", "a", "first answer")) + json.dumps(user("b", "b", "a line of its own")),
    json.dumps(answer("c", "b", "answer after it")),
)


@pytest.mark.parametrize("lenient", [False, True])
def test_a_joined_line_whose_entry_names_itself_as_parent_imports_as_pi_reads_it(lenient: bool) -> None:
    imported = import_pi(JOINED_SELF_PARENT, lenient=lenient)
    journal = journal_of(imported.records)
    assert imported.joined == (3,)
    assert any("names no entry" in why for _, why in imported.inferred)
    assert texts(journal) == ["answer after it"]  # Pi: the joined line skipped, c a root
    kept = [
        r.body
        for r in imported.records
        if isinstance(r.body, CustomEntry) and r.body.type == "pi.joined_line"
    ]
    assert [entry.data["line"] for entry in kept] == [3]  # nothing lost: the line, verbatim
    assert kept[0].data["text"] == JOINED_SELF_PARENT.splitlines()[2]


def test_an_entry_whose_parent_names_no_entry_is_a_root() -> None:
    data = lines(json.dumps(HEADER_V3), json.dumps(user("a", None, "x")), json.dumps(user("b", "gone", "y")))
    imported = import_pi(data)
    assert texts(journal_of(imported.records)) == ["y"]
    assert any("names no entry" in why for _, why in imported.inferred)


def test_a_parent_on_a_later_line_is_placed_first_and_pi_resumes_at_the_last_line() -> None:
    data = lines(
        json.dumps(HEADER_V3),
        json.dumps(user("a", None, "q")),
        json.dumps(answer("c", "b", "late child")),
        json.dumps(answer("b", "a", "parent written after")),
    )
    imported = import_pi(data)
    journal = journal_of(imported.records)
    assert [r.id for r in imported.records][1:4] == ["a", "b", "c"]
    assert texts(journal) == ["q", "parent written after"]  # Pi's leaf: the last entry of the file


def test_the_later_of_two_entries_with_one_id_keeps_it_and_the_earlier_gets_a_fresh_one() -> None:
    data = lines(
        json.dumps(HEADER_V3),
        json.dumps(user("a", None, "old")),
        json.dumps(user("a", None, "new")),
        json.dumps(answer("b", "a", "reply")),
    )
    imported = import_pi(data)
    ids = [r.id for r in imported.records]
    assert len(ids) == len(set(ids))
    assert "a.2" in ids
    assert texts(journal_of(imported.records)) == ["new", "reply"]


def test_derived_ids_never_collide_with_ids_in_the_file() -> None:
    data = lines(
        json.dumps(HEADER_V3),
        json.dumps(user("a", None, "x")),
        json.dumps(user("move:c", "a", "a real entry named like a derived move")),
        json.dumps(user("c", "a", "z")),
        json.dumps({**user("ignored", "c", "no id"), "id": None}),
        json.dumps(user("l6.2", "c", "named like a derived line id")),
    )
    imported = import_pi(data)
    ids = [r.id for r in imported.records]
    assert len(ids) == len(set(ids))
    journal_of(imported.records)


def test_version_1_line_ids_avoid_the_session_id() -> None:
    header = {"type": "session", "id": "l2", "timestamp": "2026-01-01T00:00:00.000Z"}
    one = {
        "type": "message",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "x"},
    }
    imported = import_pi(json.dumps(header) + "\n" + json.dumps(one) + "\n")
    assert [r.id for r in imported.records] == ["l2", "l2.2"]


def test_a_cycle_of_parent_links_imports_as_a_root() -> None:
    data = lines(json.dumps(HEADER_V3), json.dumps(user("a", "b", "x")), json.dumps(user("b", "a", "y")))
    imported = import_pi(data)
    journal_of(imported.records)
    assert any("cycle" in why for _, why in imported.inferred)


def test_lenient_turns_an_entry_that_cannot_map_into_a_reported_skip_and_keeps_its_children() -> None:
    bad = entry("message", "b", "a", message={"role": "assistant", "content": [], "stopReason": "??"})
    data = lines(
        json.dumps(HEADER_V3),
        json.dumps(user("a", None, "q")),
        json.dumps(bad),
        json.dumps(answer("c", "b", "r")),
    )
    with pytest.raises(PiFormatError, match="line 3"):
        import_pi(data)
    imported = import_pi(data, lenient=True)
    assert [n for n, _ in imported.skipped] == [3]
    assert texts(journal_of(imported.records)) == ["q", "r"]  # c hangs where b hung


def test_a_repaired_file_exports_its_own_ids_and_parents_back() -> None:
    journal = pi_journal(import_pi(JOINED_SELF_PARENT))
    back = exported(journal)
    assert [(e.get("id"), e.get("parentId")) for e in back[1:]] == [
        ("a", None),
        ("c", "b"),  # Pi's own parentId, though Pi (and the journal) read c as a root
        ("joined-l3", "c"),  # the skipped line, kept: an entry type Pi ignores, after Pi's leaf
    ]
    assert back[3]["text"] == JOINED_SELF_PARENT.splitlines()[2]


FIXTURE = FIXTURES / "pi" / "joined-self-parent.jsonl"


@pytest.mark.parametrize("lenient", [[], ["--lenient"]])
def test_the_reproducing_fixture_imports_verifies_and_exports_from_the_cli(
    tmp_path: Path, lenient: list[str]
) -> None:
    assert FIXTURE.read_text() == JOINED_SELF_PARENT
    out = tmp_path / "s.jsonl"
    run = waybook("import", "pi", FIXTURE, "-o", out, *lenient)
    assert run.returncode == 0, run.stderr
    assert "held two entries" in run.stderr
    assert waybook("verify", out).returncode == 0
    rows = tmp_path / "rows.jsonl"
    assert waybook("export", out, "--format", "openai", "--branches", "all", "-o", rows).returncode == 0
    assert all(problems(json.loads(line)) == [] for line in rows.read_text().splitlines())


# --- issue 44: the last Pi file ------------------------------------------------------------------------
# A version-1 session whose compaction keeps nothing (its firstKeptEntryIndex is its own index), and whose
# last line holds an entry and a compaction joined by concurrent writers, the compaction again counting
# itself as kept. The import failed even with --lenient ("record 'l6' refers to 'l6'", an internal id).
# Pi 0.73.1's own loader reads the file as: the summary, then the two entries after it; the joined line is
# skipped. (fixtures/pi/v1-joined-compaction.jsonl)

V1_JOINED = FIXTURES / "pi" / "v1-joined-compaction.jsonl"


@pytest.mark.parametrize("lenient", [False, True])
def test_a_version_1_file_with_a_self_kept_compaction_and_a_joined_last_line_reads_as_pi_reads_it(
    lenient: bool,
) -> None:
    imported = import_pi(V1_JOINED.read_bytes(), lenient=lenient)
    journal = journal_of(imported.records)
    summary, *rest = texts(journal)
    assert summary.endswith("The user asked two questions.")
    assert rest == ["third question", "third answer"]  # the summary, then only what follows it
    compaction = next(r.body for r in imported.records if r.id == "l6")
    assert compaction.first_kept is None  # type: ignore[union-attr]
    assert compaction.summary == "The user asked two questions."  # type: ignore[union-attr]
    assert imported.joined == (9,)
    notes = dict(imported.inferred)
    assert "keeps nothing" in notes[6]
    assert "Pi's loader skips it" in notes[9]


@pytest.mark.parametrize("lenient", [[], ["--lenient"]])
def test_the_version_1_fixture_imports_verifies_and_exports_a_training_row(
    tmp_path: Path, lenient: list[str]
) -> None:
    out, rows = tmp_path / "s.jsonl", tmp_path / "rows.jsonl"
    run = waybook("import", "pi", V1_JOINED, "-o", out, *lenient)
    assert run.returncode == 0, run.stderr
    assert waybook("verify", out).returncode == 0
    assert waybook("export", out, "--format", "openai", "-o", rows).returncode == 0
    (row,) = [json.loads(line) for line in rows.read_text().splitlines()]
    assert row["messages"][-1] == {"role": "assistant", "content": "third answer"}


def test_a_compaction_that_names_itself_keeps_nothing_and_exports_its_own_id_back() -> None:
    data = lines(
        json.dumps(HEADER_V3),
        json.dumps(user("a", None, "q")),
        json.dumps(answer("b", "a", "r")),
        json.dumps(
            {
                "type": "compaction",
                "id": "k",
                "parentId": "b",
                "timestamp": "2026-01-01T00:00:02.000Z",
                "summary": "s",
                "firstKeptEntryId": "k",
                "tokensBefore": 9,
            }
        ),
        json.dumps(user("d", "k", "after")),
    )
    journal = journal_of(import_pi(data).records)
    summary, *rest = texts(journal)
    assert summary.endswith("\n\ns")
    assert rest == ["after"]
    back = exported(journal)
    assert back[3]["firstKeptEntryId"] == "k"  # what Pi wrote comes back


def carrying(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    """A user entry carrying, as a waybook export would, a leaf move to a node the file does not hold."""
    move = {"kind": "waybook.leaf_moved/1", "from": parent, "to": "nowhere", "reason": "x"}
    return {
        **user(entry_id, parent, text),
        "waybook": {"before": [{"id": "m1", "at": "2026-01-01T00:00:01.000Z", "body": move}]},
    }


def test_an_entry_the_journal_cannot_take_is_named_by_its_line_and_lenient_skips_it() -> None:
    data = lines(json.dumps(HEADER_V3), json.dumps(user("a", None, "q")), json.dumps(carrying("b", "a", "x")))
    with pytest.raises(PiFormatError, match=r"line 3: .*nowhere"):
        import_pi(data)
    imported = import_pi(data, lenient=True)
    assert [number for number, _ in imported.skipped] == [3]
    assert texts(journal_of(imported.records)) == ["q"]
