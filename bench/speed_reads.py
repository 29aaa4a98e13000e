"""The reading speed rows (bench/speed.py): opening a journal (full proof, checkpoint, trusted
checkpoint), verify_file, resume, and reopening a 500-record session, each against a raw decode of the
same bytes (or the full-proof reopen).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.measure import Row  # noqa: E402
from bench.speed_pairing import row  # noqa: E402
from bench.workload import proof_floor, write_journal_file  # noqa: E402

# --- opening: full proof, checkpoint, no proof -------------------------------------------------------

NO_CHECKPOINT = (
    "; NO checkpoint was there to use (none saved, or not one for these bytes), so this open proved "
    "every line"
)


def checkpoint_kind(path: Path, name: str) -> tuple[str, str]:
    """The row name's last part for an open of `path` that may use its checkpoint, and a note to add:
    a row named `checkpoint` must have had one to use (saved, and holding for the file's bytes)."""
    from waybook.journal._jsonl import _checkpoint as checkpoint

    with path.open("rb") as file:

        def read_at(size: int, offset: int) -> bytes:
            file.seek(offset)
            return file.read(size)

        loaded = checkpoint.load(path, size=path.stat().st_size, read_at=read_at)
    if loaded is not None:
        return name, ""
    return f"{name.replace('checkpoint', 'no_checkpoint')}", NO_CHECKPOINT


def open_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    import msgspec

    from waybook import JsonlJournal
    from waybook.journal import verify_file
    from waybook.model import Record

    decoder = msgspec.json.Decoder(Record)
    n = 20_000 if quick else 100_000
    path = tmp / f"open-{n}.jsonl"
    write_journal_file(path, n)
    with JsonlJournal(path, create=False):
        pass  # a writer's open and close: the checkpoint exists from here on

    def raw() -> None:
        decoder.decode_lines(path.read_bytes())

    def opened(**options: object) -> Callable[[], None]:
        def run() -> None:
            with JsonlJournal(path, create=False, readonly=True, **options) as journal:  # type: ignore[arg-type]
                journal.head()

        return run

    rounds = 5 if quick else 7
    yield row(
        f"speed.open.{n}.full_proof",
        n,
        raw,
        opened(sidecar=False),
        unit="records/s",
        goal=0.45,
        rounds=rounds,
        note="open proving every line (chain, batches, rules; sidecar=False); baseline msgspec "
        "decode_lines of the same file's bytes (read included), no checks",
    )
    yield row(
        f"speed.open.{n}.proof_floor",
        n,
        raw,
        lambda: proof_floor(path),
        unit="records/s",
        goal=None,
        rounds=rounds,
        note="not an adapter: the chain alone, inline (read, split, decode, one SHA-256 per line, compare "
        "digests and prevs; no rules, batches, offsets or journal): what any full proof costs here; same "
        "baseline",
    )
    yield row(
        f"speed.verify_file.{n}.full_proof",
        n,
        raw,
        lambda: verify_file(path),
        unit="records/s",
        goal=0.45,
        rounds=rounds,
        note="waybook verify's proof (verify_file); same baseline",
    )
    kind, missing = checkpoint_kind(path, "checkpoint")
    yield row(
        f"speed.open.{n}.{kind}",
        n,
        raw,
        opened(),
        unit="records/s",
        goal=None,
        rounds=rounds,
        note="the default open: every byte of the checkpointed prefix hashed (SHA-256) against the "
        f"checkpoint, nothing decoded but the head line; same baseline{missing}",
    )
    kind, missing = checkpoint_kind(path, "trusted_checkpoint")
    yield row(
        f"speed.open.{n}.{kind}",
        n,
        raw,
        opened(trust_checkpoint=True),
        unit="records/s",
        goal=None,
        rounds=rounds,
        note="trust_checkpoint=True: the prefix is not proved (head line and header only); same "
        f"baseline{missing}",
    )
    yield from read_rows(path, n, rounds)


def read_rows(path: Path, n: int, rounds: int) -> Iterator[Row]:
    """`read()` of an open, proved journal: every chunk proved again as it is read (issue 42.2), against
    the read before that change (the same chunks decoded, nothing proved), on the same open journal."""
    from waybook import JsonlJournal
    from waybook.journal._ledger import decode_records

    journal = JsonlJournal(path, create=False, readonly=True)
    end = path.stat().st_size

    def unproved() -> None:
        for lines in journal._file.line_chunks(0, end):  # the read as it was: decode, no proof
            decode_records(lines, "bench")

    def proved() -> None:
        for _ in journal.read():
            pass

    try:
        yield row(
            f"speed.read.{n}.proved",
            n,
            unproved,
            proved,
            unit="records/s",
            goal=None,
            rounds=rounds,
            note="read() of an open, proved journal: each chunk's lines hashed (SHA-256) and chained again "
            "as they are read, so bytes changed after the open's proof are refused; baseline the read "
            "before (the same chunks decoded, nothing proved), on the same journal",
        )
    finally:
        journal.close()


# --- resume and reopen ------------------------------------------------------------------------------


def checkpoint_floor(path: Path) -> int:
    """The work no default (checkpointed) resume of `path` can skip, inline, as a floor row's value (not
    an adapter): the file read, its bytes hashed once (SHA-256, as the checkpoint's prefix check) and
    every record decoded (the replay reads each). Returns the record count."""
    import hashlib

    import msgspec

    from waybook.model import Record

    data = path.read_bytes()
    hashlib.sha256(data).hexdigest()
    return len(msgspec.json.Decoder(Record).decode_lines(data))


def resume_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    import msgspec

    from waybook import JsonlJournal, resume
    from waybook.model import Record
    from waybook.projections import ContextProjection, context_at, replay

    decoder = msgspec.json.Decoder(Record)
    for n, repeat in ((500, 200), (20_000 if quick else 100_000, 1)):
        path = tmp / f"resume-{n}.jsonl"
        write_journal_file(path, n)
        total = n * repeat

        def raw(path: Path = path, repeat: int = repeat) -> None:
            for _ in range(repeat):
                decoder.decode_lines(path.read_bytes())

        def fused(path: Path = path, repeat: int = repeat, sidecar: bool = True) -> None:
            for _ in range(repeat):
                resume(path, create=False, sidecar=sidecar).journal.close()

        def apart(path: Path = path, repeat: int = repeat) -> None:
            for _ in range(repeat):
                with JsonlJournal(path, create=False, sidecar=False) as journal:
                    state = replay(ContextProjection(), journal)
                    context_at(journal, state.tree)

        with JsonlJournal(path, create=False):
            pass  # a writer's open and close: the checkpoint exists from here on
        kind, missing = checkpoint_kind(path, "checkpoint")
        yield row(
            f"speed.resume.{n}.{kind}",
            total,
            raw,
            fused,
            unit="records/s",
            goal=0.25,
            rounds=5,
            note=f"resume(): the default open (prefix hashed against its checkpoint) + replay + render "
            f"the context of {n:,} records; baseline decode_lines of the file's bytes{missing}",
        )
        yield row(
            f"speed.resume.{n}.full_proof",
            total,
            raw,
            lambda f=fused: f(sidecar=False),  # type: ignore[misc]
            unit="records/s",
            goal=0.35,
            rounds=5,
            note="the same, proving every line (sidecar=False): replay into tree + context",
        )
        yield row(
            f"speed.resume.{n}.checkpoint_floor",
            total,
            raw,
            lambda path=path, repeat=repeat: [checkpoint_floor(path) for _ in range(repeat)],  # type: ignore[misc]
            unit="records/s",
            goal=None,
            rounds=5,
            note="not an adapter: the least a default resume does, inline (read the file, one SHA-256 of its "
            "bytes as the checkpoint's check, decode every record for the replay; no tree, rules or "
            "context): the ceiling of speed.resume.N.checkpoint; same baseline",
        )
        yield row(
            f"speed.resume.{n}.proof_floor",
            total,
            raw,
            lambda path=path, repeat=repeat: [proof_floor(path) for _ in range(repeat)],  # type: ignore[misc]
            unit="records/s",
            goal=None,
            rounds=5,
            note="not an adapter: the chain alone, inline, as speed.open.N.proof_floor (no tree, no "
            "context): the ceiling of any full-proof resume; same baseline",
        )
        yield row(
            f"speed.resume.{n}.apart.full_proof",
            total,
            raw,
            apart,
            unit="records/s",
            goal=None,
            rounds=3,
            note="open + replay + context_at as three steps, no checkpoint (each record decoded 2-3 times)",
        )


def reopen_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    from waybook import JsonlJournal

    path = tmp / "reopen-500.jsonl"
    write_journal_file(path, 500)
    with JsonlJournal(path, create=False):
        pass  # leaves the checkpoint
    count = 200 if quick else 1_000

    def reopen(**options: object) -> Callable[[], None]:
        def run() -> None:
            for _ in range(count):
                with JsonlJournal(path, create=False, **options) as journal:  # type: ignore[arg-type]
                    journal.head()

        return run

    yield row(
        "speed.reopen.500.checkpoint",
        count,
        reopen(sidecar=False),
        reopen(sidecar=True),
        unit="opens/s",
        goal=None,
        rounds=5,
        note="reopen (default: prefix hashed against the checkpoint) + head of a 500-record session; "
        "baseline the same with sidecar=False (full proof)",
    )
    yield row(
        "speed.reopen.500.trusted_checkpoint",
        count,
        reopen(sidecar=False),
        reopen(sidecar=True, trust_checkpoint=True),
        unit="opens/s",
        goal=None,
        rounds=5,
        note="the same with trust_checkpoint=True (prefix not proved); baseline the full proof",
    )
