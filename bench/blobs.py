"""Blobs bench: opening a journal of large tool outputs inline vs as blobs, and collecting many blobs.

  open     a directory-store journal of N tool results of S MiB each: written inline (as journals were
           before the 8 MiB record limit; the limit is lifted in this process to write them) against the
           same session written with `blobs=store.blobs` (each output a blob, each record small). Opening
           proves the whole chain, so inline it hashes every output byte; with blobs it reads small lines.
  collect  `store.blobs.collect` over B blobs of which half are referenced, for the directory store and the
           SQLite store.

    python bench/blobs.py [--outputs 100] [--mib 10] [--blobs 100000]
Prints a table; writes bench/blobs.json. Ratios are within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import waybook.codecs.wire as wire
from waybook import Session
from waybook.stores import open_store
from waybook.stores.blobs import BlobRef

RESULTS = Path(__file__).resolve().parent / "blobs.json"


def write_session(url: str, outputs: int, size: int, *, blobs: bool) -> None:
    with open_store(url) as store:
        session = Session.create(
            store.create("s"),
            blobs=store.blobs if blobs else None,
            inline_limit=size // 2 if blobs else size * 2,
        )
        for n in range(outputs):
            session.tool_result(f"c{n}", (f"{n:06d} " + "x" * 120 + "\n") * (size // 128), tool_name="bash")


def time_open(url: str) -> float:
    started = time.perf_counter()
    with open_store(url) as store, store.open("s") as journal:
        journal.head()
    return time.perf_counter() - started


def bench_open(outputs: int, mib: int, root: Path) -> dict[str, Any]:
    size = mib * 1024 * 1024
    saved = wire.MAX_RECORD_BYTES
    wire.MAX_RECORD_BYTES = size * 2  # type: ignore[misc]  # journals as they were before the limit
    try:
        write_session(f"file:{root / 'inline'}", outputs, size, blobs=False)
    finally:
        wire.MAX_RECORD_BYTES = saved  # type: ignore[misc]
    write_session(f"file:{root / 'blobs'}", outputs, size, blobs=True)
    inline = min(time_open(f"file:{root / 'inline'}") for _ in range(3))
    blobbed = min(time_open(f"file:{root / 'blobs'}") for _ in range(3))
    journal_bytes = {k: os.path.getsize(root / k / "journals" / "s.jsonl") for k in ("inline", "blobs")}
    return {
        "outputs": outputs,
        "mib_each": mib,
        "open_inline_s": inline,
        "open_blobs_s": blobbed,
        "speedup": inline / blobbed,
        "journal_bytes": journal_bytes,
    }


def bench_collect(count: int, root: Path) -> list[dict[str, Any]]:
    rows = []
    for kind, url in (("file", f"file:{root / 'gc'}"), ("sqlite", f"sqlite:{root / 'gc.db'}")):
        with open_store(url) as store:
            session = Session.create(store.create("s"))
            refs: list[BlobRef] = [
                store.blobs.put(f"blob {n}".encode(), media_type="text/plain") for n in range(count)
            ]
            for start in range(0, count // 2, 500):
                session.user([ref.block() for ref in refs[start : min(start + 500, count // 2)]])
            for ref in refs:
                store.blobs.release(ref)
            started = time.perf_counter()
            receipt = store.blobs.collect(grace=0)
            took = time.perf_counter() - started
        rows.append(
            {
                "store": kind,
                "blobs": count,
                "removed": len(receipt.removed),
                "collect_s": took,
                "per_blob_us": took / count * 1e6,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--outputs", type=int, default=100)
    parser.add_argument("--mib", type=int, default=10)
    parser.add_argument("--blobs", type=int, default=100_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="waybook-bench-blobs-"))
    try:
        opened = bench_open(args.outputs, args.mib, root)
        collected = bench_collect(args.blobs, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"open: {opened['outputs']} outputs x {opened['mib_each']} MiB")
    print(f"  inline  {opened['open_inline_s']:8.3f} s   journal {opened['journal_bytes']['inline']:,} bytes")
    print(f"  blobs   {opened['open_blobs_s']:8.3f} s   journal {opened['journal_bytes']['blobs']:,} bytes")
    print(f"  blobs open {opened['speedup']:.0f}x faster")
    print("collect:")
    for row in collected:
        print(
            f"  {row['store']:7} {row['blobs']:,} blobs, removed {row['removed']:,} "
            f"in {row['collect_s']:.2f} s ({row['per_blob_us']:.0f} us/blob)"
        )
    RESULTS.write_text(json.dumps({"open": opened, "collect": collected}, indent=2) + "\n")


if __name__ == "__main__":
    main()
