"""Issue 33, point 1: a Pi file Pi's own loader reads imports, with Pi's id and parent rules.

Pi (badlogic/pi-mono, packages/coding-agent/src/core/session-manager.ts) keeps the later of two entries
with one id, treats an entry whose parentId is its own id or names no entry as a root, finds a parent
wherever it is in the file, and resumes at the file's last entry. An id import derives never collides
with one in the file, and --lenient turns any per-entry problem into a reported skip.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.formats.test_pi_fidelity import exported, journal_of
from tests.helpers.cli_runner import waybook
from tests.helpers.formats import pi_journal
from tests.helpers.paths import FIXTURES
from tests.helpers.pi import HEADER_V3, answer, entry, user
from waybook.export._openai_format import problems
from waybook.formats.pi._codec import PiFormatError, import_pi
from waybook.journal import InMemoryJournal, TextBlock
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
# names itself as its parent. Pi's tree makes it a root; the import used to derive a leaf move to it
# before it existed ("... goes to 'b', which is not a node of this journal").
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
    assert any("names the entry itself" in why for _, why in imported.inferred)
    assert texts(journal) == ["a line of its own", "answer after it"]  # Pi: the root b, then c


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
        ("x", "a"),
        ("b", "b"),
        ("c", "b"),
    ]


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
