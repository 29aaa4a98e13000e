"""Working and canonical memory rows (issues 5 and 6)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import Row, rate


def bench_memory(quick: bool) -> Iterator[Row]:
    import tempfile

    from waybook.journal import JsonlJournal
    from waybook.memory import Limits, Memory, MemoryProjection
    from waybook.projections import replay

    tmp = Path(tempfile.mkdtemp(prefix="waybook-bench-"))
    limits = Limits(max_file_bytes=1 << 20, max_total_bytes=1 << 30, max_files=1 << 20)
    n_replace = 200 if quick else 1_000
    memory = Memory(JsonlJournal(tmp / "replace.jsonl", durability="flush"), scope="bench", limits=limits)
    big = ("line of memory text " * 3 + "\n") * 1092  # ~64 KiB
    memory.execute({"command": "create", "path": "/memories/big.md", "text": big + "token-0"})

    def replaces() -> None:
        for i in range(n_replace):
            result = memory.execute(
                {
                    "command": "str_replace",
                    "path": "/memories/big.md",
                    "old_text": f"token-{i}",
                    "new_text": f"token-{i + 1}",
                }
            )
            assert result.ok, result.error

    value = rate(n_replace, replaces, repeat=1)
    yield Row(
        "memory.str_replace.64k", value, "ops/s", None, "", None, "str_replace on a 64 KiB file, JSONL, flush"
    )

    n_create = 1_000 if quick else 5_000
    creator = Memory(JsonlJournal(tmp / "create.jsonl", durability="flush"), scope="bench", limits=limits)
    kib = "x" * 1023 + "\n"

    def creates() -> None:
        for i in range(n_create):
            assert creator.execute({"command": "create", "path": f"/memories/f{i % 500}.md", "text": kib}).ok

    value = rate(n_create, creates, repeat=1)
    yield Row(
        "memory.create.1k",
        value,
        "ops/s",
        None,
        "",
        None,
        "create (and overwrite) of 1 KiB files, JSONL, flush",
    )

    n_ops = 20_000 if quick else 100_000
    replayed = Memory(JsonlJournal(tmp / "replay.jsonl", durability="none"), scope="bench", limits=limits)
    for i in range(n_ops):
        if i % 10 == 9:
            replayed.execute({"command": "delete", "path": f"/memories/d/f{i % 300}.md"})
        else:
            replayed.execute(
                {"command": "create", "path": f"/memories/d/f{i % 300}.md", "text": f"note {i}\n"}
            )
    with JsonlJournal(tmp / "replay.jsonl", create=False) as journal:
        value = rate(journal.head().seq, lambda: replay(MemoryProjection(), journal), repeat=2)
        seq = journal.head().seq
    yield Row(
        "memory.replay",
        value,
        "records/s",
        None,
        "",
        None,
        f"replay of a {seq:,}-record memory journal ({n_ops:,} operations)",
    )
    for path in tmp.iterdir():
        path.unlink()
    tmp.rmdir()


def bench_authority(quick: bool) -> Iterator[Row]:
    from waybook.journal import InMemoryJournal, MemoryWrite, NewRecord
    from waybook.journal._roles.memory_text import content_digest
    from waybook.memory import Route, create_authority

    n = 200 if quick else 1_000

    def adopt_once() -> None:
        authority = create_authority(
            working=InMemoryJournal("w"),
            canonical=InMemoryJournal("c"),
            routes=[Route("shared", frozenset({"facts"}))],
            actor="bench",
            pins=InMemoryJournal("p"),
        )
        facts = {
            f"/memories/f{i:04d}.md": f"fact {i} see [next](/memories/f{i + 1:04d}.md)" for i in range(n)
        }
        authority.agent.remember("bench", facts)  # type: ignore[attr-defined]
        roots = [f"/memories/f{i:04d}.md" for i in range(0, n, 10)]
        nomination = authority.agent.nominate(roots, "shared", "facts")  # type: ignore[attr-defined]
        assert len(nomination.records) == n
        receipt = authority.host.adopt_nomination(authority.agent.query().head, nomination)  # type: ignore[attr-defined]
        assert receipt.status == "adopted"

    value = rate(n, adopt_once, repeat=2)
    yield Row(
        "authority.nominate_adopt",
        value,
        "records/s",
        None,
        "",
        None,
        f"{n} records with closures (link chains)",
    )

    distance = 4_000 if quick else 16_384
    canonical = InMemoryJournal("c")
    authority = create_authority(
        working=InMemoryJournal("w"),
        canonical=canonical,
        routes=[Route("r", frozenset({"p"}))],
        actor="bench",
        pins=InMemoryJournal("p"),
    )
    pin = authority.agent.query().head  # type: ignore[attr-defined]
    batch = []
    for i in range(distance):
        text = f"canonical fact {i}"
        body = MemoryWrite(path=f"/memories/c{i % 500}.md", text=text, digest=content_digest(text))
        batch.append(NewRecord(id=f"c{i}", at="2026-12-01T09:00:00.000Z", body=body))
    canonical.append(batch, expected=canonical.head())
    start = time.perf_counter()
    authority.host.advance_canonical(pin, canonical.head())  # type: ignore[attr-defined]
    elapsed = time.perf_counter() - start
    yield Row(
        "authority.advance",
        distance / elapsed,
        "records/s",
        None,
        "",
        None,
        f"advance over {distance:,} records: {elapsed * 1000:.0f} ms (read in pages, proven, folded)",
    )
