"""Golden sealed and erased lines (docs/erasure.md): the bytes and digests of schema-2 journals, frozen.

Every sealed sample of `wire_samples.SAMPLES` and a few bodies that take the sealer's other roads (a
tuple and an IntEnum in free-form data, a nested `"kind"` key in details, content over many SHA-256
blocks, a batch) is sealed with a fixed salt, chained, and erased by one erasure. A sealer that writes
other bytes would change the digests of existing sealed journals. Regenerating the files
(`python -m tests.helpers.sealed_samples --write`) is a breaking change of the wire format.
"""

from __future__ import annotations

import enum
import hashlib
import sys

from tests.helpers.wire_samples import AT, SAMPLES, WIRE_DIR
from waybook.codecs._commitments import SEALED_FIELDS, erase_line, sealed_content
from waybook.codecs._wire import seal
from waybook.model import (
    AssistantMessage,
    CustomEntry,
    NewRecord,
    Record,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)
from waybook.model._head import GENESIS_DIGEST

SEALED_DIR = WIRE_DIR / "sealed"
ERASED_BY = 1000


class Level(enum.IntEnum):
    LOW = 1


EXTRA_BODIES: list[object] = [
    UserMessage(parent=None, content=(TextBlock("plain text, the one-pass road"),)),
    AssistantMessage(parent="r1", content=(TextBlock('é ü 漢字 \u2028 "quoted" \\ back'),), model="m-1"),
    UserMessage(parent="r2", content=(TextBlock("x" * 700),), details={"kind": "waybook.user/2", "n": 1}),
    CustomEntry(parent="r3", type="probe", content=(), data={"steps": (1, 2, ("a", "b"))}),
    ToolResult(
        parent="r4",
        call_id="c1",
        tool_name="shell",
        content=(TextBlock("out"),),
        details={"level": Level.LOW},
    ),
    AssistantMessage(
        parent="r5",
        content=(
            ThinkingBlock("hmm " * 40),
            ToolCallBlock(call_id="c2", name="read", arguments={"path": "/etc/hosts", "kind": "file"}),
        ),
        stop_reason="tool_use",
        model="m-2",
        usage={"input": 120, "output": 30},
    ),
]


def golden_bodies() -> list[object]:
    samples = [b for bodies in SAMPLES.values() for b in bodies]
    return [b for b in samples if type(b) in SEALED_FIELDS and sealed_content(b)] + EXTRA_BODIES


def golden_salt(index: int) -> str:
    return hashlib.sha256(f"golden salt {index}".encode()).hexdigest()[:32]


def sealed_golden() -> list[tuple[Record, bytes]]:
    """The golden bodies sealed as consecutive records (ids r1, r2, ...); the last two as one batch."""
    bodies = golden_bodies()
    out: list[tuple[Record, bytes]] = []
    prev = GENESIS_DIGEST
    for seq, body in enumerate(bodies, start=1):
        batch = None if seq < len(bodies) - 1 else (seq - len(bodies) + 2, 2)
        new = NewRecord(id=f"r{seq}", at=AT, body=body)  # type: ignore[arg-type]
        record, line = seal(seq, new, prev, batch, golden_salt(seq))
        out.append((record, line))
        prev = record.digest
    return out


def erased_golden() -> list[bytes]:
    """Each golden sealed line erased by the erasure at seq ERASED_BY."""
    return [erase_line(line, record, ERASED_BY)[0] for record, line in sealed_golden()]


def write() -> None:
    SEALED_DIR.mkdir(parents=True, exist_ok=True)
    (SEALED_DIR / "sealed-v2.jsonl").write_bytes(b"".join(line + b"\n" for _, line in sealed_golden()))
    (SEALED_DIR / "erased-v2.jsonl").write_bytes(b"".join(line + b"\n" for line in erased_golden()))


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.helpers.sealed_samples --write   (a breaking change: the docstring)")
    write()
