"""One sample body of every registered wire tag, and the generator of fixtures/wire/.

The golden files freeze the wire format. Regenerating them (`python -m tests.helpers.wire_samples --write`)
is a breaking change: do it only together with a new tag version and an upcaster for the old one.
"""

from __future__ import annotations

import sys
from pathlib import Path

from waybook.codecs._canonical import ENCODER
from waybook.codecs._legacy import UserMessageV1
from waybook.codecs._wire import seal
from waybook.model import (
    Annotation,
    AnyBody,
    AssistantMessage,
    Compaction,
    ContextExclusion,
    CustomEntry,
    ErasedRecord,
    Erasure,
    Header,
    ImageBlock,
    LeafMoved,
    MemoryAdoption,
    MemoryDelete,
    MemoryPinMoved,
    MemoryRename,
    MemorySynced,
    MemoryUsed,
    MemoryWrite,
    NewRecord,
    ReflectionFinished,
    ReflectionReserved,
    ReflectionStarted,
    Reset,
    SubagentLink,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)
from waybook.model._head import GENESIS_DIGEST

WIRE_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "wire"
AT = "2026-12-01T09:00:00.000Z"

SAMPLES: dict[str, list[AnyBody]] = {
    "waybook.header/1": [
        Header(journal="j-demo", creator="waybook-tests", metadata={"cwd": "/work", "model": "m-1"}),
        Header(journal="j-min", creator="x"),
    ],
    "waybook.user/2": [
        UserMessage(parent=None, content=(TextBlock(text="What is in data.csv? ünïcødé ✓"),)),
        UserMessage(parent="c9", content=(TextBlock(text="with details"),), details={"timestamp": 1765}),
        UserMessage(
            parent="a1",
            content=(
                TextBlock(text="and this one"),
                ImageBlock(source="sha256:ab12", media_type="image/png"),
            ),
        ),
    ],
    "waybook.assistant/1": [
        AssistantMessage(
            parent="u1",
            content=(
                ThinkingBlock(thinking="Read the file first.", signature="sig=="),
                TextBlock(text="Let me look."),
                ToolCallBlock(call_id="call_1", name="read", arguments={"path": "data.csv", "limit": 10}),
            ),
            stop_reason="tool_use",
            model="claude-x",
            usage={"input": 120, "output": 40},
            details={"provider": "anthropic", "cost": {"total": 0.0123}},
        ),
        AssistantMessage(parent="t1", content=(TextBlock(text="Done."),), stop_reason="end_turn"),
    ],
    "waybook.system/1": [SystemMessage(parent=None, content=(TextBlock(text="You are terse."),))],
    "waybook.tool_result/1": [
        ToolResult(parent="a1", call_id="call_1", content=(TextBlock(text="a,b\n1,2"),), tool_name="read"),
        ToolResult(
            parent="a2",
            call_id="call_2",
            content=(TextBlock(text="no such file"),),
            is_error=True,
            details={"receipt": {"seq": 4}},
        ),
    ],
    "waybook.compaction/1": [
        Compaction(
            parent="t9", summary="The user asked about data.csv.", first_kept="u5", tokens_before=51200
        ),
        Compaction(
            parent="c8", summary="This session continues an earlier one.", first_kept=None, preamble=False
        ),
    ],
    "waybook.exclusion/1": [ContextExclusion(parent="c1", target="t3", reason="leaked secret")],
    "waybook.custom/1": [
        CustomEntry(parent="c2", type="pi.model_change", data={"provider": "x", "modelId": "m-2"}),
        CustomEntry(
            parent="c3", type="ext.note", data=None, in_context=True, content=(TextBlock(text="remember"),)
        ),
    ],
    "waybook.leaf_moved/1": [
        LeafMoved(from_leaf="a2", to_leaf="u1", reason="retry with a better prompt", actor="user"),
        LeafMoved(from_leaf="a9", to_leaf=None, reason="start over"),
    ],
    "waybook.reset/1": [Reset(reason="new task", actor="host")],
    "waybook.annotation/1": [
        Annotation(
            target="c7",
            type="langgraph.writes",
            data={"task_id": "t-1", "writes": [["messages", 0, ["msgpack", "kaFh"]]]},
        ),
        Annotation(target="c8", type="langgraph.hidden"),
    ],
    "waybook.erasure/1": [
        Erasure(
            records=(
                ErasedRecord(seq=4, state="5d" * 32, blocks=3, parts=("text", "data")),
                ErasedRecord(seq=9, state="e1" * 32, blocks=2, parts=("tool_output",)),
            ),
            reason="the user asked to forget this conversation",
            actor="host:privacy-desk",
            policy="retain-90d",
        ),
        Erasure(
            records=(ErasedRecord(seq=12, state="07" * 32, blocks=2, parts=("tool_arguments",)),),
            reason="a secret in a tool call",
            parts=("tool_arguments",),
        ),
    ],
    "waybook.subagent_link/1": [
        SubagentLink(node="a3", journal="agent-a881341", call_id="toolu_7", agent="Explore", reason="Task"),
        SubagentLink(node="c4", journal="agent-acompact-fffbd0"),
    ],
    "waybook.memory.write/1": [
        MemoryWrite(path="/memories/notes.md", text="# Notes\n", digest="ab" * 32, call_id="toolu_1"),
        MemoryWrite(
            path="/memories/notes.md",
            text="# Notes\nmore\n",
            digest="cd" * 32,
            prior="ab" * 32,
            command="str_replace",
        ),
    ],
    "waybook.memory.delete/1": [
        MemoryDelete(paths=("/memories/old.md",), call_id="toolu_2"),
        MemoryDelete(paths=("/memories/a.md", "/memories/b.md"), reason="evict"),
    ],
    "waybook.memory.rename/1": [MemoryRename(moves=(("/memories/a.md", "/memories/b/a.md"),))],
    "waybook.memory.adoption/1": [
        MemoryAdoption(
            operation="memory_adopt_" + "0a" * 24,
            actor="host:review-bot",
            binding="b1" * 32,
            nomination="c2" * 32,
            source="memory-working-1",
            source_seq=12,
            source_digest="d3" * 32,
            prior_seq=4,
            prior_digest="e4" * 32,
            writes=2,
            replaced=("/memories/facts.md",),
        )
    ],
    "waybook.memory.pin_moved/1": [
        MemoryPinMoved(
            canonical="memory-canonical-1",
            prior_seq=4,
            prior_digest="e4" * 32,
            new_seq=7,
            new_digest="f5" * 32,
            receipt="a6" * 32,
        ),
        MemoryPinMoved(
            canonical="memory-canonical-1",
            prior_seq=7,
            prior_digest="f5" * 32,
            new_seq=10,
            new_digest="a7" * 32,
            receipt="b8" * 32,
            status="adopted",
            binding="b1" * 32,
            actor="host:review-bot",
            nomination="c2" * 32,
            operation="memory_adopt_" + "d9" * 24,
            operation_digest="e0" * 32,
        ),
    ],
    "waybook.memory.used/1": [
        MemoryUsed(memory="memory-canonical-1", seq=7, digest="f5" * 32, index_sha256="a1" * 32),
        MemoryUsed(memory=None, unavailable="the memory journal is locked", policy="continue"),
        MemoryUsed(
            memory="memory-working-1",
            seq=12,
            digest="c3" * 32,
            block_sha256="b1" * 32,
            layers=(
                ("base", "operator", "0a" * 32),
                ("orientation", "extension", "0b" * 32),
                ("memory", "memory", "b1" * 32),
            ),
        ),
    ],
    "waybook.reflection.reserved/1": [
        ReflectionReserved(run="reflect_1", trigger="manual", reason="the user asked"),
        ReflectionReserved(run="reflect_2", trigger="step"),
    ],
    "waybook.reflection.started/1": [
        ReflectionStarted(run="reflect_1", windows=(("session-a", 0, 40), ("session-b", 12, 30))),
    ],
    "waybook.memory.synced/1": [
        MemorySynced(remote="git@example.com:me/memory.git", commit="c0" * 20, tree="7e" * 20, seq=12),
    ],
    "waybook.reflection.finished/1": [
        ReflectionFinished(run="reflect_1", outcome="merged"),
        ReflectionFinished(run="reflect_2", outcome="failed", detail="the model timed out"),
    ],
}

LEGACY_SAMPLES: dict[str, list[object]] = {
    "waybook.user/1": [UserMessageV1(parent=None, text="an old-style user message")],
}


def sealed_lines(bodies: list[AnyBody] | list[object]) -> list[bytes]:
    """Seal bodies as consecutive records (chained, ids r1, r2, ...). Legacy bodies are sealed raw."""
    lines: list[bytes] = []
    prev = GENESIS_DIGEST
    for i, body in enumerate(bodies, start=1):
        if isinstance(body, UserMessageV1):
            lines.append(_seal_legacy(i, body, prev))
        else:
            _, line = seal(i, NewRecord(id=f"r{i}", at=AT, body=body), prev)  # type: ignore[arg-type]
            lines.append(line)
        prev = lines[-1][-66:-2].decode()
    return lines


def _seal_legacy(seq: int, body: UserMessageV1, prev: str) -> bytes:
    import hashlib

    # Written by hand because the current envelope type no longer accepts a user/1 body.
    covered = (
        b'{"seq":%d,"id":"r%d","at":"%s","prev":"%s","body":' % (seq, seq, AT.encode(), prev.encode())
        + ENCODER.encode(body)
        + b"}"
    )
    digest = hashlib.sha256(covered).hexdigest()
    return covered[:-1] + b',"digest":"' + digest.encode() + b'"}'


def fixture_name(tag: str) -> str:
    return tag.replace("waybook.", "").replace("/", "-v") + ".jsonl"


def write_fixtures() -> None:
    WIRE_DIR.mkdir(parents=True, exist_ok=True)
    (WIRE_DIR / "legacy").mkdir(exist_ok=True)
    for tag, bodies in SAMPLES.items():
        (WIRE_DIR / fixture_name(tag)).write_bytes(b"".join(line + b"\n" for line in sealed_lines(bodies)))
    for tag, old in LEGACY_SAMPLES.items():
        (WIRE_DIR / "legacy" / fixture_name(tag)).write_bytes(
            b"".join(line + b"\n" for line in sealed_lines(old))
        )


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(
            "usage: python -m tests.helpers.wire_samples --write   (a breaking change: see the docstring)"
        )
    write_fixtures()
