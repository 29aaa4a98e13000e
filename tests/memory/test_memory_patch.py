"""Issue 22: `apply_patch` (the Codex patch format) and `update_description`, with the port's semantics."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest, front_matter, with_description
from waybook.memory import Limits, Memory
from waybook.memory.working._patch import PatchError, apply_hunks, parse_patch
from waybook.model._errors import MemoryRuleError
from waybook.model._records import Header, MemoryWrite, NewRecord

AT = "2026-12-01T09:00:00.000Z"


def port(**kwargs: Any) -> Memory:
    return Memory(InMemoryJournal("m"), scope="agent", **kwargs)


def files(memory: Memory) -> dict[str, str]:
    return {path: f.text for path, f in memory.state().files.items()}


def patch(*lines: str) -> dict[str, str]:
    return {"command": "apply_patch", "patch": "\n".join(["*** Begin Patch", *lines, "*** End Patch"])}


def seeded() -> Memory:
    memory = port()
    for path, text in {
        "/memories/a.md": "one\ntwo\nthree\n",
        "/memories/b.md": "alpha\nbeta\n",
        "/memories/fixed.md": "---\nread_only: true\n---\nkeep\n",
    }.items():
        assert memory.execute(
            {"command": "create", "path": path, "text": text.replace("read_only: true\n", "")}
        ).ok
    assert memory.set_read_only("/memories/fixed.md", True).ok  # the host's call
    return memory


def test_one_patch_adds_updates_moves_and_deletes_in_one_batch() -> None:
    memory = seeded()
    head = memory.state().seq
    result = memory.execute(
        patch(
            "*** Add File: /memories/new/c.md",
            "+first",
            "+second",
            "*** Update File: /memories/a.md",
            "*** Move to: /memories/moved.md",
            "@@",
            " one",
            "-two",
            "+TWO",
            "*** Delete File: /memories/b.md",
        ),
        call_id="toolu_p",
    )
    assert result.ok, result.error
    assert files(memory) == {
        "/memories/new/c.md": "first\nsecond\n",
        "/memories/moved.md": "one\nTWO\nthree\n",
        "/memories/fixed.md": "---\nread_only: true\n---\nkeep\n",
    }
    assert result.as_dict()["value"] == {
        "added": ["/memories/new/c.md"],
        "updated": ["/memories/a.md"],
        "deleted": ["/memories/b.md"],
        "moved": [("/memories/a.md", "/memories/moved.md")],
        "evicted": [],
    }
    assert result.receipt is not None
    assert result.receipt.call_id == "toolu_p"
    assert memory.state().requests["toolu_p"] == (head + 1, result.receipt.seq)  # one contiguous batch
    moved = memory.history("/memories/moved.md")
    assert [r.event for r in moved][-1] == "superseded"


def test_a_patch_is_all_or_nothing() -> None:
    memory = seeded()
    before, head = files(memory), memory.state().seq
    result = memory.execute(
        patch(
            "*** Add File: /memories/ok.md",
            "+fine",
            "*** Update File: /memories/b.md",
            "@@",
            "-gamma",
            "+delta",
        )
    )
    assert not result.ok
    assert result.error is not None
    assert result.error.code == "MATCH_NOT_FOUND"
    assert result.error.path == "/memories/b.md"
    assert (files(memory), memory.state().seq) == (before, head)


@pytest.mark.parametrize(
    ("lines", "code"),
    [
        (("*** Add File: /memories/../etc/passwd.md", "+x"), "INVALID_PATH"),
        (("*** Add File: notes.md", "+x"), "INVALID_PATH"),
        (("*** Add File: /memories/a.exe", "+x"), "INVALID_EXTENSION"),
        (("*** Add File: /memories/a.md", "+x"), "ALREADY_EXISTS"),
        (("*** Delete File: /memories/nope.md",), "NOT_FOUND"),
        (
            ("*** Update File: /memories/a.md", "*** Move to: /memories/b.md", "@@", "-one", "+1"),
            "ALREADY_EXISTS",
        ),
        (("*** Delete File: /memories/a.md", "*** Delete File: /memories/a.md"), "INVALID_ARGUMENT"),
        (("*** Frobnicate File: /memories/a.md",), "INVALID_ARGUMENT"),
        (("*** Update File: /memories/a.md",), "INVALID_ARGUMENT"),
        (("*** Add File: /memories/a.md/x.md", "+x"), "PATH_CONFLICT"),
    ],
)
def test_a_bad_patch_is_refused_with_the_ports_codes(lines: tuple[str, ...], code: str) -> None:
    memory = seeded()
    before = files(memory)
    result = memory.execute(patch(*lines))
    assert result.error is not None
    assert result.error.code == code, result.error
    assert files(memory) == before


def test_a_patch_without_its_envelope_is_invalid_argument() -> None:
    result = seeded().execute({"command": "apply_patch", "patch": "*** Add File: /memories/x.md\n+x\n"})
    assert result.error is not None
    assert result.error.code == "INVALID_ARGUMENT"
    assert "*** Begin Patch" in result.error.message


@pytest.mark.parametrize(
    "lines",
    [
        ("*** Update File: /memories/fixed.md", "@@", "-keep", "+changed"),
        ("*** Delete File: /memories/fixed.md",),
        ("*** Update File: /memories/fixed.md", "*** Move to: /memories/elsewhere.md"),
    ],
)
def test_a_read_only_note_refuses_every_patch_operation(lines: tuple[str, ...]) -> None:
    memory = seeded()
    before = files(memory)
    result = memory.execute(patch(*lines))
    assert result.error is not None
    assert result.error.code == "INVALID_ARGUMENT"
    assert result.error.details == {"read_only": True}
    assert files(memory) == before


def test_hunks_follow_codex_context_end_of_file_and_whitespace_rules() -> None:
    lines = ["def a():", "    return 1", "", "def b():", "    return 1", "end  "]
    ops = parse_patch(
        "*** Begin Patch\n*** Update File: /memories/x.py\n"
        "@@ def b():\n-    return 1\n+    return 2\n"
        "@@\n-end\n+END\n*** End of File\n*** End Patch\n"
    )
    (update,) = ops
    assert apply_hunks(lines, update.hunks, "x") == [  # type: ignore[union-attr]
        "def a():",
        "    return 1",
        "",
        "def b():",
        "    return 2",
        "END",
    ]
    # the first hunk may omit its @@ line; an empty line in a hunk is an empty context line
    (first,) = parse_patch("*** Begin Patch\n*** Update File: f.md\n a\n\n-b\n+c\n*** End Patch")
    assert apply_hunks(["a", "", "b"], first.hunks, "f") == ["a", "", "c"]  # type: ignore[union-attr]
    with pytest.raises(PatchError) as caught:
        parse_patch("*** Begin Patch\n*** Update File: f.md\n@@\n?bad\n*** End Patch")
    assert caught.value.code == "INVALID_ARGUMENT"


def test_a_patch_evicts_the_earliest_written_untouched_files_to_fit() -> None:
    memory = port(limits=Limits(max_file_bytes=100, max_total_bytes=30, max_files=10))
    for name in ("old", "mid"):
        assert memory.execute({"command": "create", "path": f"/memories/{name}.md", "text": "x" * 10}).ok
    result = memory.execute(patch("*** Add File: /memories/big.md", "+" + "y" * 14))
    assert result.ok
    assert result.value is not None
    assert result.value.evicted == ("/memories/old.md",)  # type: ignore[union-attr]
    assert sorted(files(memory)) == ["/memories/big.md", "/memories/mid.md"]


def test_a_patch_that_grows_one_file_and_shrinks_another_fits_when_its_result_fits() -> None:
    # Found by the memory state machine (c39ca2f): the journal checks the limits after every record of a
    # batch, so writing the growing file first failed a patch whose result fits. Shrinking goes first.
    memory = port(limits=Limits(max_file_bytes=100, max_total_bytes=30, max_files=10))
    assert memory.execute({"command": "create", "path": "/memories/a.md", "text": "x" * 9}).ok
    assert memory.execute({"command": "create", "path": "/memories/b.md", "text": "y" * 14}).ok
    result = memory.execute(
        patch(
            "*** Update File: /memories/a.md",
            "-" + "x" * 9,
            "+" + "x" * 19,
            "*** Update File: /memories/b.md",
            "-" + "y" * 14,
            "+y",
        )
    )
    assert result.ok, result
    assert files(memory) == {"/memories/a.md": "x" * 19 + "\n", "/memories/b.md": "y\n"}


def test_update_description_changes_front_matter_only() -> None:
    memory = seeded()
    result = memory.execute(
        {"command": "update_description", "path": "/memories/b.md", "description": "greek letters"}
    )
    assert result.ok
    text = files(memory)["/memories/b.md"]
    assert text == "---\ndescription: greek letters\n---\nalpha\nbeta\n"
    assert memory.execute(
        {"command": "update_description", "path": "/memories/b.md", "description": "'quoted' too"}
    ).ok
    text = files(memory)["/memories/b.md"]
    assert text.endswith("---\nalpha\nbeta\n")
    assert front_matter(text).description == "'quoted' too"
    for bad in ("", "two\nlines"):
        failure = memory.execute(
            {"command": "update_description", "path": "/memories/b.md", "description": bad}
        )
        assert failure.error is not None
        assert failure.error.code == "INVALID_ARGUMENT"
    missing = memory.execute({"command": "update_description", "path": "/memories/no.md", "description": "x"})
    assert missing.error is not None
    assert missing.error.code == "NOT_FOUND"
    fixed = memory.execute(
        {"command": "update_description", "path": "/memories/fixed.md", "description": "x"}
    )
    assert fixed.error is not None
    assert fixed.error.details == {"read_only": True}


@given(
    st.text(alphabet="ab:\n-", max_size=30),
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=20),
)
def test_update_description_keeps_the_body_and_reads_back(body: str, description: str) -> None:
    if not description.strip():
        return
    text = with_description(body, description.strip())
    assert front_matter(text).description == description.strip()
    if not body.startswith("---"):
        assert text.endswith(body)


def test_a_profile_that_requires_descriptions_binds_every_writer() -> None:
    memory = port(require_description=True)
    bare = memory.execute({"command": "create", "path": "/memories/a.md", "text": "x"})
    assert bare.error is not None
    assert bare.error.details == {"description_required": True}
    via_patch = memory.execute(patch("*** Add File: /memories/b.md", "+x"))
    assert via_patch.error is not None
    assert via_patch.error.code == "INVALID_ARGUMENT"
    described = "---\ndescription: why\n---\nx\n"
    assert memory.execute({"command": "create", "path": "/memories/a.md", "text": described}).ok
    # a raw append obeys the same rule: it lives in the journal
    journal = InMemoryJournal("raw")
    header = Header(journal="m-1", creator="t", role="working_memory", metadata={"require_description": True})
    journal.append([NewRecord(id="h", at=AT, body=header)], expected=journal.head())
    raw = MemoryWrite(path="/memories/z.md", text="x", digest=content_digest("x"))
    with pytest.raises(MemoryRuleError) as caught:
        journal.append([NewRecord(id="r", at=AT, body=raw)], expected=journal.head())
    assert caught.value.code == "INVALID_ARGUMENT"
    assert journal.head().seq == 1


def test_with_descriptions_required_an_edit_that_removes_or_empties_the_description_is_refused() -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent", require_description=True)
    described = "---\ndescription: why\n---\nbody\n"
    assert memory.execute({"command": "create", "path": "/memories/a.md", "text": described}).ok
    before = journal.head()
    for command in (
        {
            "command": "str_replace",
            "path": "/memories/a.md",
            "old_text": "description: why\n",
            "new_text": "",
        },
        {
            "command": "str_replace",
            "path": "/memories/a.md",
            "old_text": "description: why",
            "new_text": "description:",
        },
        {"command": "str_replace", "path": "/memories/a.md", "old_text": "why", "new_text": "  "},
        {"command": "create", "path": "/memories/a.md", "text": "no front matter now\n"},
        patch("*** Update File: /memories/a.md", "@@", "----", "-description: why", "----", " body"),
    ):
        result = memory.execute(command)
        assert result.error is not None, command
        assert (result.error.code, result.error.details) == (
            "INVALID_ARGUMENT",
            {"description_required": True},
        )
    assert journal.head() == before, "nothing was written"
    assert memory.execute(
        {"command": "str_replace", "path": "/memories/a.md", "old_text": "why", "new_text": "a better why"}
    ).ok, "an edit that keeps a description is fine"
