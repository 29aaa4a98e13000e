"""Issue 22: the compiled memory block (golden files) and the prompt layers recorded with the turn."""

from __future__ import annotations

from itertools import count
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from waybook import JsonlJournal, Session
from waybook.commands.provenance import describe, memory_used
from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import front_matter
from waybook.memory import Memory, RequestError, compile_block, prompt_layers, record_prompt

GOLDEN = Path(__file__).parent / "golden"


def fixed_memory(path: Path) -> JsonlJournal:
    journal = JsonlJournal(path)
    ids = (f"{n:04d}" for n in count(1))
    memory = Memory(journal, scope="agent", clock=lambda: "2026-12-01T09:00:00.000Z", ids=lambda: next(ids))
    notes = {
        "/memories/zeta.md": "plain note without front matter",
        "/memories/people/ana.md": (
            "---\ndescription:  Ana,   the   designer \nlinks: [/memories/zeta.md]\n---\nprefers mornings\n"
        ),
        "/memories/keys.md": (
            "---\ndescription: key sk-ant-abcdefghijklmnop1234\nread_only: true\n---\n"
            "token sk-ant-abcdefghijklmnop1234\r\nline two\r\n"
        ),
        "/memories/tricky.md": '---\ndescription: a <b> & "c"\n---\nclose early </note>\n</memory> too\n',
    }
    for note, text in notes.items():
        if front_matter(text).read_only:  # read-only notes are the host's to write
            done = memory.write_changes(
                writes={note: text}, call_id=f"host-{note}", command="create", host=True
            )
            assert done.ok
            continue
        assert memory.execute({"command": "create", "path": note, "text": text}).ok
    return journal


def test_the_block_matches_its_golden_file_byte_for_byte(tmp_path: Path) -> None:
    journal = fixed_memory(tmp_path / "m.jsonl")
    block = compile_block(journal)
    assert block.text == (GOLDEN / "block-head.txt").read_text(encoding="utf-8")
    assert block.seq == 5
    assert block.paths == (
        "/memories/keys.md",
        "/memories/people/ana.md",
        "/memories/tricky.md",
        "/memories/zeta.md",
    )
    assert block.redacted == 2
    assert "sk-ant-" not in block.text


def test_an_earlier_revision_compiles_to_its_own_golden_bytes(tmp_path: Path) -> None:
    journal = fixed_memory(tmp_path / "m.jsonl")
    assert compile_block(journal, at=3).text == (GOLDEN / "block-seq3.txt").read_text(encoding="utf-8")
    with pytest.raises(RequestError, match="no seq 99"):
        compile_block(journal, at=99)


def test_the_same_revision_compiles_to_the_same_bytes_after_a_reopen(tmp_path: Path) -> None:
    first = compile_block(fixed_memory(tmp_path / "m.jsonl"), at=4)
    again = compile_block(JsonlJournal(tmp_path / "m.jsonl"), at=4)
    assert (first.text, first.sha256, first.digest) == (again.text, again.sha256, again.digest)


def test_an_empty_memory_compiles_to_an_empty_block() -> None:
    journal = InMemoryJournal("m")
    Memory(journal, scope="agent", ids=lambda: "x")
    block = compile_block(journal)
    assert block.text == '<memory journal="memory-x" seq="1" notes="0">\n</memory>\n'


def test_prompt_layers_keep_their_order_and_authority_and_are_recorded_with_the_turn(tmp_path: Path) -> None:
    block = compile_block(fixed_memory(tmp_path / "m.jsonl"))
    prompt = prompt_layers("You are helpful.\n", "Tools: memory.\n", block)
    assert [(x.name, x.authority) for x in prompt.layers] == [
        ("base", "operator"),
        ("orientation", "extension"),
        ("memory", "memory"),
    ]
    assert prompt.text == "You are helpful.\nTools: memory.\n" + block.text
    assert prompt.stable_prefix == "You are helpful.\nTools: memory.\n"
    assert prompt.layers[2].sha256 == block.sha256
    session = Session.create(InMemoryJournal("s"))
    record_prompt(session, prompt)
    ((_, entry),) = memory_used(session.journal.read())
    assert entry["block_sha256"] == block.sha256
    assert entry["seq"] == block.seq
    assert [x["sha256"] for x in entry["layers"]] == [x.sha256 for x in prompt.layers]
    # a different memory revision changes only the memory layer's digest: the prefix stays cacheable
    other = prompt_layers(
        "You are helpful.\n", "Tools: memory.\n", compile_block(fixed_memory(tmp_path / "n.jsonl"), at=2)
    )
    assert [x.sha256 for x in other.layers[:2]] == [x.sha256 for x in prompt.layers[:2]]
    assert other.layers[2].sha256 != prompt.layers[2].sha256


def test_a_secret_spelled_by_a_path_is_masked_in_the_block() -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent")
    assert memory.execute(
        {"command": "create", "path": "/memories/sk-ant-abcdefghijklmnop1234.md", "text": "x"}
    ).ok
    assert "sk-ant-" not in compile_block(journal).text


def test_waybook_show_describes_the_block_and_layers(tmp_path: Path) -> None:
    block = compile_block(fixed_memory(tmp_path / "m.jsonl"))
    session = Session.create(InMemoryJournal("s"))
    record_prompt(session, prompt_layers("base\n", "orientation\n", block))
    ((_, entry),) = memory_used(session.journal.read())
    line = describe(entry)
    assert f"block sha256 {block.sha256[:12]}" in line
    assert "base (operator)" in line
    assert "memory (memory)" in line


FRAGMENTS = st.sampled_from(["</note>", "</memory>", "<note", "a", "\n", "\r\n", "---"])


@given(st.lists(st.lists(FRAGMENTS, max_size=12).map("".join), min_size=1, max_size=4))
def test_no_note_can_close_its_block_or_open_another(texts: list[str]) -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent")
    for n, text in enumerate(texts):
        assert memory.execute({"command": "create", "path": f"/memories/n{n}.md", "text": text}).ok
    lines = compile_block(journal).text.split("\n")
    structural = [line for line in lines if line.startswith(("<note ", "</note>", "<memory ", "</memory>"))]
    expected = [lines[0]]
    for n in range(len(texts)):
        expected += [f'<note path="/memories/n{n}.md">', "</note>"]
    assert [s.split(" ")[0] if s.startswith("<memory ") else s for s in structural] == [
        "<memory",
        *expected[1:],
        "</memory>",
    ]


# --- templates and the compile cache (issue 32) ---------------------------------------------------


def test_the_default_template_given_explicitly_is_the_golden_block_byte_for_byte(tmp_path: Path) -> None:
    from waybook.memory import BlockTemplate

    journal = fixed_memory(tmp_path / "m.jsonl")
    block = compile_block(journal, template=BlockTemplate())
    assert block.text == (GOLDEN / "block-head.txt").read_text(encoding="utf-8")


def test_a_template_changes_the_markup_and_keeps_the_guards(tmp_path: Path) -> None:
    from waybook.memory import BlockTemplate

    markdown = BlockTemplate(
        open="# Memory ({notes} notes, seq {seq})\n",
        note_open="## {path}{read_only}",
        read_only=" (read-only)",
        description="_{description}_",
        note_close="",
        close="",
        closers=("## /memories/",),
        escape=False,
    )
    journal = fixed_memory(tmp_path / "m.jsonl")
    text = compile_block(journal, template=markdown).text
    assert text.startswith("# Memory (4 notes, seq 5)\n## /memories/keys.md (read-only)\n_key [REDACTED:")
    assert '_a <b> & "c"_' in text
    assert "sk-ant-" not in text
    assert "{journal}" not in text
    assert markdown.sha256 != BlockTemplate().sha256


def test_compiled_blocks_are_cached_by_template_digest_and_memory_revision(tmp_path: Path) -> None:
    from waybook.memory import BlockCache, BlockTemplate

    journal = fixed_memory(tmp_path / "m.jsonl")
    cache = BlockCache()
    first = compile_block(journal, cache=cache)
    assert (cache.hits, cache.misses) == (0, 1)
    assert compile_block(journal, cache=cache) is first  # a hit: the same block, not folded again
    assert (cache.hits, cache.misses) == (1, 1)
    other = BlockTemplate(description="<about>{description}</about>")
    assert compile_block(journal, template=other, cache=cache) is not first  # the template changed: a miss
    assert (cache.hits, cache.misses) == (1, 2)
    Memory(journal, scope="agent").execute({"command": "create", "path": "/memories/new.md", "text": "n"})
    after = compile_block(journal, cache=cache)  # the memory changed: a miss
    assert (cache.hits, cache.misses) == (1, 3)
    assert after.seq == first.seq + 1
    assert compile_block(journal, at=first.seq, cache=cache) is first  # the earlier revision: still a hit
    assert compile_block(journal, at=first.seq, cache=cache).text == compile_block(journal, at=first.seq).text


def test_the_cache_keeps_at_most_its_entries_and_tells_journals_apart(tmp_path: Path) -> None:
    from waybook.memory import BlockCache

    cache = BlockCache(max_entries=1)
    block_a = compile_block(fixed_memory(tmp_path / "a.jsonl"), cache=cache)
    other = InMemoryJournal("b")
    Memory(other, scope="agent").execute({"command": "create", "path": "/memories/b.md", "text": "b"})
    block_b = compile_block(other, cache=cache)
    assert (cache.hits, cache.misses, len(cache)) == (0, 2, 1)
    assert block_a.journal != block_b.journal
    with pytest.raises(RequestError, match="max_entries"):
        BlockCache(max_entries=0)


def test_a_key_glued_after_an_underscore_never_reaches_the_compiled_block() -> None:
    """Issue 43: `id_AKIA...` passed the old patterns (a word boundary was required before the key)."""
    journal = InMemoryJournal()
    memory = Memory(journal, scope="agent")
    for path, text in {
        "/memories/aws.md": "user id_AKIAIOSFODNN7EXAMPLE rotates weekly\n",
        "/memories/ci.md": (
            "---\ndescription: the ci_ghp_Zk3pQ9vX2mL8rT4wN6yBZk3pQ9vX2mL8rT4w token\n---\n"
            "GITLAB_TOKEN=glpat-Zk3pQ9vX2mL8rT4wN6yB\n"
        ),
    }.items():
        assert memory.execute({"command": "create", "path": path, "text": text}).ok
    block = compile_block(journal)
    for secret in ("AKIAIOSFODNN7EXAMPLE", "ghp_Zk3pQ9vX", "glpat-Zk3p"):
        assert secret not in block.text
    assert "id_[REDACTED:aws-access-key]" in block.text
    assert block.redacted == 3
