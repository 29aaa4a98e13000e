"""Issue 14: the Pi codec keeps Pi's context rules and loses nothing, both ways, on every shared fixture."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.formats import journal_of, pi_journal
from tests.helpers.paths import FIXTURES, SHARED_FIXTURES
from tests.helpers.pi import HEADER_V3, answer, entry, pi_lines, user
from waybook import Session
from waybook.codecs import canonical_json
from waybook.export.trajectories import Selection, TrajectoryExporter
from waybook.formats import _js_json as js_json
from waybook.formats import _json_patch as json_patch
from waybook.formats._json_patch import same
from waybook.formats.pi._codec import PiFormatError, export_pi, import_pi
from waybook.journal import InMemoryJournal
from waybook.model import Compaction, CustomEntry, LeafMoved, NewRecord, Record, TextBlock, ToolResult
from waybook.projections import TreeProjection, context_at, replay

SHARED_PI = SHARED_FIXTURES / "pi"
SHARED = sorted(SHARED_PI.glob("*.jsonl")) if SHARED_PI.is_dir() else []


def pi_migrated(data: bytes) -> list[dict[str, Any]]:
    """What Pi's own session manager holds after loading the file: version 3, v1 entries given ids."""
    entries = [json.loads(line) for line in data.splitlines() if line.strip()]
    header, body = entries[0], entries[1:]
    if header.get("version", 1) < 2:
        previous = None
        for number, item in enumerate(body):
            item["id"], item["parentId"] = f"l{number + 2}", previous
            previous = item["id"]
            if item["type"] == "compaction" and "firstKeptEntryIndex" in item:
                item["firstKeptEntryId"] = f"l{item.pop('firstKeptEntryIndex') + 1}"
    return [{**header, "version": 3}, *body]


def exported(journal: InMemoryJournal) -> list[dict[str, Any]]:
    return [json.loads(line) for line in export_pi(journal.read())]


def appended_as(original: list[Record], records: tuple[NewRecord, ...]) -> InMemoryJournal:
    """`records` appended in the batches `original` was appended in (a record's batch is in its digest)."""
    journal = InMemoryJournal("again")
    at = 0
    while at < len(records):
        size = original[at].batch[1] if original[at].batch else 1
        journal.append(list(records[at : at + size]), expected=journal.head())
        at += size
    return journal


def identical(a: list[Record] | tuple[NewRecord, ...], b: list[Record] | tuple[NewRecord, ...]) -> bool:
    return [(r.id, r.at, canonical_json(r.body)) for r in a] == [
        (r.id, r.at, canonical_json(r.body)) for r in b
    ]


@pytest.mark.skipif(not SHARED, reason="shared/fixtures is not beside this checkout")
@pytest.mark.parametrize("fixture", SHARED, ids=lambda p: p.name)
def test_every_shared_pi_fixture_round_trips_exactly_both_ways(fixture: Path) -> None:
    data = fixture.read_bytes()
    first = pi_journal(import_pi(data))
    back = exported(first)
    expected = pi_migrated(data)
    assert len(back) == len(expected)
    for ours, theirs in zip(back, expected, strict=True):
        assert same(ours, theirs), (ours, theirs)
    again = pi_journal(import_pi(b"\n".join(export_pi(first.read()))))
    assert [r.digest for r in again.read()] == [r.digest for r in first.read()]


def compact(entries: list[dict[str, Any]]) -> bytes:
    """Entries as Pi writes them: JSON.stringify, one per line."""
    return b"".join(
        json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for e in entries
    )


NODE_WRITTEN = FIXTURES / "pi" / "written-by-node.jsonl"
NODE = shutil.which("node")
# Pi's own migration to version 3 (session-manager.ts), run in Node so its JSON.stringify writes the lines
MIGRATE_IN_NODE = """
const lines = require("fs").readFileSync(process.argv[2], "utf8").split("\\n").filter((l) => l.trim());
const [header, ...entries] = lines.map((l) => JSON.parse(l));
if ((header.version ?? 1) < 2) {
  let previous = null;
  entries.forEach((entry, n) => {
    entry.id = `l${n + 2}`; entry.parentId = previous; previous = entry.id;
    if (entry.type === "compaction" && "firstKeptEntryIndex" in entry) {
      entry.firstKeptEntryId = `l${entry.firstKeptEntryIndex + 1}`; delete entry.firstKeptEntryIndex;
    }
  });
}
header.version = 3;
process.stdout.write([header, ...entries].map((e) => JSON.stringify(e) + "\\n").join(""));
"""


def exported_bytes(data: bytes) -> bytes:
    return b"".join(line + b"\n" for line in export_pi(pi_journal(import_pi(data)).read()))


def test_a_branched_session_written_by_node_comes_back_byte_for_byte() -> None:
    data = (NODE_WRITTEN.parent / "branched-by-node.jsonl").read_bytes()
    records = import_pi(data).records
    moves = [r for r in records if isinstance(r.body, LeafMoved)]
    assert [m.body.to_leaf for m in moves] == ["b2", "b2"], "each return to b2 is an explicit leaf move"  # type: ignore[attr-defined]
    assert exported_bytes(data) == data


def test_a_leaf_move_made_in_waybook_still_rides_along_to_pi() -> None:
    journal = InMemoryJournal()
    session = Session.create(journal, journal_id="moves")
    first = session.user("hi")
    session.assistant("hello")
    session.branch_from(first.id, reason="the answer was rude")  # not the move import would infer
    session.assistant("hello there")
    records = list(journal.read())
    back = import_pi(b"\n".join(export_pi(records))).records
    assert identical(records, back)


def test_a_line_with_a_lone_surrogate_is_refused_clearly_and_lenient_skips_it() -> None:
    lines = [HEADER_V3, user("a", None, "half \ud83d of an emoji"), answer("b", None, "ok")]
    data = pi_lines(*lines)
    with pytest.raises(PiFormatError, match="lone surrogate"):
        import_pi(data)
    imported = import_pi(data, lenient=True)
    assert [n for n, _ in imported.skipped] == [2]


def test_a_session_file_written_by_node_comes_back_byte_for_byte() -> None:
    data = NODE_WRITTEN.read_bytes()
    assert b'"input":0.000005' in data
    assert b'"ratio":1e-7' in data, "the number notations Python and JavaScript write differently"
    assert exported_bytes(data) == data


def test_numbers_are_written_as_javascript_writes_them() -> None:
    golden = FIXTURES / "js" / "numbers.jsonl"
    pairs = [json.loads(line) for line in golden.read_text().splitlines()]
    compared = 0
    for python_repr, javascript in pairs:
        value = float(python_repr)
        if value.is_integer() and abs(value) < 1e21:
            continue  # JavaScript reads these back as ints: a float like this never came from it
        assert js_json.number(value) == javascript, python_repr
        compared += 1
    assert compared > 3500
    assert js_json.number(2.0) == "2.0", "a float JavaScript did not write keeps its spelling"


@pytest.mark.skipif(not SHARED, reason="shared/fixtures is not beside this checkout")
@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("fixture", SHARED, ids=lambda p: p.name)
def test_every_shared_pi_fixture_exports_the_bytes_pi_writes_after_migrating_it(
    fixture: Path, tmp_path: Path
) -> None:
    assert NODE is not None
    script = tmp_path / "migrate.js"
    script.write_text(MIGRATE_IN_NODE)
    written = subprocess.run([NODE, script, fixture], capture_output=True, check=True).stdout
    assert exported_bytes(fixture.read_bytes()) == written
    assert exported_bytes(written) == written, "and the migrated file round trips as it is"


THINKING = {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig", "thoughtSignature": "t"}
CALL = {
    "type": "toolCall",
    "id": "c1",
    "name": "bash",
    "arguments": {"cmd": "ls"},
    "partialJson": '{"cmd":"l',
}
TEXT = {"type": "text", "text": "done", "textSignature": "ts", "futureField": {"x": [1, 2.0, True]}}


def test_unknown_fields_signatures_and_partial_json_survive_pi_to_waybook_to_pi() -> None:
    source = [
        {**HEADER_V3, "parentSession": "/p.jsonl", "newHeaderField": 1},
        entry("message", "a", None, message={"role": "user", "content": "hi", "timestamp": 1}),
        entry(
            "message",
            "b",
            "a",
            message={
                "role": "assistant",
                "content": [THINKING, CALL, TEXT],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude",
                "usage": {"input": 1, "output": 2, "cost": {"total": 0.5}},
                "stopReason": "toolUse",
                "timestamp": 2,
            },
            extra="kept",
        ),
        {
            **entry(
                "message",
                "c",
                "b",
                message={
                    "role": "toolResult",
                    "toolCallId": "c1",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": "a.txt"}],
                    "details": {"diff": "x"},
                    "isError": False,
                    "timestamp": 3,
                },
            ),
            "timestamp": "2026-01-01T00:00:02Z",
        },
        entry("compaction", "d", "c", summary="s", firstKeptEntryId="b", tokensBefore=10, fromHook=False),
    ]
    journal = pi_journal(import_pi(pi_lines(*source)))
    assert all(same(a, b) for a, b in zip(exported(journal), source, strict=True))
    written = compact(source)  # every key in Pi's order, objects nested in unmodelled fields included
    assert b"".join(line + b"\n" for line in export_pi(pi_journal(import_pi(written)).read())) == written


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    derived=st.dictionaries(st.text(max_size=4), json_values, max_size=5),
    original=st.dictionaries(st.text(max_size=4), json_values, max_size=5),
)
def test_a_patch_with_its_key_orders_gives_the_original_text_back_even_after_canonical_storage(
    derived: dict[str, Any], original: dict[str, Any]
) -> None:
    patch = json_patch.diff(derived, original)
    stored = json.loads(canonical_json(patch))  # a journal keeps the patch with every object's keys sorted
    produced = json_patch.apply(derived, stored)
    assert same(produced, original)
    orders = json_patch.key_orders(produced, original)
    back = json_patch.apply(derived, json.loads(canonical_json(stored | {"order": orders})))
    assert json.dumps(back) == json.dumps(original)


def test_native_records_survive_waybook_to_pi_to_waybook() -> None:
    journal = InMemoryJournal()
    session = Session.create(
        journal,
        journal_id="native",
        metadata={"cwd": "/w", "tools": [{"name": "bash", "parameters": {}}]},
        actor="auditor",
    )
    session.system("Be brief.")
    question = session.user("hi")
    session.assistant("hello")
    session.branch_from(question.id, reason="the answer was wrong")
    session.assistant("hello again")
    session.reset(reason="new topic")
    records = list(journal.read())
    back = import_pi(b"\n".join(export_pi(records))).records
    assert identical(records, back)
    assert [r.digest for r in appended_as(records, back).read()] == [r.digest for r in records]


def test_tool_result_details_beyond_pi_such_as_memory_receipts_survive_a_pi_round_trip() -> None:
    records = [
        *import_pi(pi_lines(HEADER_V3, user("a", None, "hi"))).records,
        NewRecord(
            id="r",
            at="2026-01-01T00:00:03.000Z",
            body=ToolResult(
                parent="a",
                call_id="c",
                content=(TextBlock(text="saved"),),
                details={"pi": {"set": {"x": 1}}, "memory_receipt": {"seq": 4, "digest": "d"}},
            ),
        ),
    ]
    journal = journal_of(records)
    back = import_pi(b"\n".join(export_pi(journal.read()))).records
    assert identical(list(journal.read()), back)


def bash(entry_id: str, parent: str, command: str, *, excluded: bool) -> dict[str, Any]:
    message = {
        "role": "bashExecution",
        "command": command,
        "output": "AKIAIOSFODNN7EXAMPLE",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 5,
    }
    if excluded:
        message["excludeFromContext"] = True
    return entry("message", entry_id, parent, message=message)


def test_a_bash_execution_excluded_from_context_stays_out_of_context_and_every_export() -> None:
    data = pi_lines(
        HEADER_V3,
        user("a", None, "hi"),
        bash("b", "a", "cat ~/.aws/credentials", excluded=True),
        bash("c", "b", "ls", excluded=False),
        answer("d", "c", "ok"),
    )
    journal = pi_journal(import_pi(data))
    tree = replay(TreeProjection(), journal)
    texts = [str(m.content) for m in context_at(journal, tree)]
    assert not any("credentials" in t for t in texts)
    assert any("Ran `ls`" in t for t in texts)
    for redact in (False, True):
        exporter = TrajectoryExporter(journal, redact=redact)
        for fmt in ("openai", "sharegpt"):
            (row,) = exporter.rows(fmt, Selection())  # type: ignore[arg-type]
            assert "credentials" not in json.dumps(row)
    back = exported(journal)
    assert back[2]["message"]["excludeFromContext"] is True, "Pi gets its own flag back"


def test_custom_messages_reach_the_model_whatever_their_display_flag() -> None:
    data = pi_lines(
        HEADER_V3,
        user("a", None, "hi"),
        entry("custom_message", "b", "a", customType="ext", content="hidden but sent", display=False),
        entry(
            "message",
            "c",
            "b",
            message={
                "role": "custom",
                "customType": "ext",
                "content": "also sent",
                "display": False,
                "timestamp": 1,
            },
        ),
        entry("custom", "d", "c", customType="ext", data={"state": 1}),
    )
    journal = pi_journal(import_pi(data))
    tree = replay(TreeProjection(), journal)
    texts = [m.content[0].text for m in context_at(journal, tree)]  # type: ignore[union-attr]
    assert texts == ["hi", "hidden but sent", "also sent"]


def test_two_entries_on_one_line_are_skipped_as_pi_skips_them_kept_verbatim_and_reported() -> None:
    # Pi's loader parses a line with JSON.parse, which fails on two joined values: it skips the line
    # (issue 44). The entries are not in the session; the line is kept after it, out of the context.
    lines = pi_lines(HEADER_V3, user("a", None, "hi")).splitlines()
    joined = json.dumps(user("b", "a", "second")) + json.dumps(
        entry("compaction", "c", "b", summary="compacted", firstKeptEntryId="b", tokensBefore=3)
    )
    data = "\n".join([*lines, joined, json.dumps(user("d", "c", "after"))]) + "\n"
    for lenient in (False, True):
        imported = import_pi(data, lenient=lenient)
        assert [r.id for r in imported.records] == ["s-3", "a", "move:d", "d", "joined-l3"]  # d: a root
        assert not any(isinstance(r.body, Compaction) for r in imported.records)
        assert imported.records[4].body.data == {"line": 3, "text": joined}  # type: ignore[union-attr]
        assert imported.joined == (3,)
        assert imported.skipped == ()


def test_two_version_1_entries_on_one_line_are_kept_as_one_skipped_line() -> None:
    header = {"type": "session", "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    one = {
        "type": "message",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "x"},
    }
    data = json.dumps(header) + "\n" + json.dumps(one) + json.dumps(one) + "\n"
    assert [r.id for r in import_pi(data).records] == ["s1", "joined-l2"]


def after_header(line: str) -> bytes:
    return (json.dumps(HEADER_V3) + "\n" + line).encode()


HOSTILE = {
    "invalid UTF-8": b'{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z"}\n\xff\xfe\n',
    "binary": bytes(range(256)) * 4,
    "timestamp 1e300": after_header(json.dumps({**user("a", None, "x"), "timestamp": 1e300})),
    "header timestamp 1e300": json.dumps({**HEADER_V3, "timestamp": 1e300}).encode(),
    "no header timestamp": json.dumps({k: v for k, v in HEADER_V3.items() if k != "timestamp"}).encode(),
    "bad header timestamp": json.dumps({**HEADER_V3, "timestamp": "yesterday"}).encode(),
    "5000-digit number": after_header('{"type":"x","id":"a","n":' + "9" * 5000 + "}"),
    "deep nesting": after_header('{"type":"x","v":' + "[" * 100_000 + "]" * 100_000 + "}"),
    "string content blocks": after_header(
        json.dumps(entry("message", "a", None, message={"role": "user", "content": ["a", "b"]}))
    ),
    "object content": after_header(
        json.dumps(entry("message", "a", None, message={"role": "user", "content": {}}))
    ),
    "message not an object": after_header(json.dumps(entry("message", "a", None, message=3))),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_pi_files_are_refused_with_a_typed_error(name: str) -> None:
    with pytest.raises(PiFormatError) as caught:
        import_pi(HOSTILE[name])
    assert "\n" not in str(caught.value)


def test_pi_custom_data_cannot_override_the_exported_id_or_parent() -> None:
    base = import_pi(pi_lines(HEADER_V3, user("a", None, "hi"))).records
    sneaky = NewRecord(
        id="b",
        at="2026-01-01T00:00:02.000Z",
        body=CustomEntry(parent="a", type="pi.label", data={"id": "a", "parentId": None, "targetId": "a"}),
    )
    journal = journal_of([*base, sneaky])
    last = exported(journal)[-1]
    assert (last["id"], last["parentId"]) == ("b", "a")
    assert identical(list(journal.read()), import_pi(b"\n".join(export_pi(journal.read()))).records)
