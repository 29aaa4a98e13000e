"""A writer process for the multi-process tests: appends with compare-and-append, syncs on conflict.

Usage: python -m tests.helpers.process_writer PATH NAME ATTEMPTS [BATCH [SIZE [trickle]]]
Prints `seq id` for every append that returned (an acknowledgement; for a batch, the last record's seq
and the batch's label), flushed at once, so a parent that kills this process knows exactly what was
acknowledged. ATTEMPTS 0 means run until killed. With BATCH > 1, each append is one batch of BATCH user
messages of SIZE characters, labelled `NAME-bI` in every record's text.

With `trickle`, each write(2) hands over at most 16 KiB (a short write, as POSIX allows), and after the
first one that leaves bytes for later the writer prints `mid` and holds, the batch half on disk, until
the parent SIGKILLs it (HOLD seconds at most, should the parent be gone): the kill lands mid-batch
every time, however late the parent reads `mid`.

A writer killed in the middle of its write can leave a torn tail; the host policy here is to repair it
on open, so a writer that meets one exits with status 3 and its replacement repairs it.
"""

from __future__ import annotations

import itertools
import sys
import time

from waybook import JsonlJournal, Session, StaleWriterError, utc_now
from waybook.journal._jsonl._file_ops import OS_FILE_OPS, OsFileOps
from waybook.model import NewRecord, TornTailError, UserMessage, text

TORN_TAIL_EXIT = 3


def main() -> None:
    path, name, attempts = sys.argv[1], sys.argv[2], int(sys.argv[3])
    batch = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    size = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    trickle = len(sys.argv) > 6 and sys.argv[6] == "trickle"
    ops = TricklingFileOps() if trickle else OS_FILE_OPS
    journal = JsonlJournal(path, create=False, on_torn_tail="repair", file_ops=ops)
    if journal.repair_receipt is not None and journal.repair_receipt.repaired:
        print(f"repaired {journal.repair_receipt.removed_bytes} torn bytes", file=sys.stderr)
    session = Session(journal)
    counter = itertools.count() if attempts == 0 else range(attempts)
    for i in counter:
        try:
            if batch == 1:
                record = session.user(f"{name} says {i}")
                print(record.seq, record.id, flush=True)
                continue
            label = f"{name}-b{i}"
            result = journal.append(_batch(label, session.leaf, batch, size), expected=session.head)
            session.sync()
            print(result.head.seq, label, flush=True)
        except StaleWriterError:
            session.sync()
            continue
        except TornTailError:
            sys.exit(TORN_TAIL_EXIT)


HOLD = 120.0


class TricklingFileOps(OsFileOps):
    """Real writes of at most 16 KiB each; at the first unfinished one, says `mid` and holds there."""

    def write(self, fd: int, data: bytes) -> int:
        done = super().write(fd, data[: 16 * 1024])
        if done < len(data):
            print("mid", flush=True)
            time.sleep(HOLD)  # held mid-batch for the parent's SIGKILL: a bound, not a wait for time
        return done


def _batch(label: str, leaf: str | None, count: int, size: int) -> list[NewRecord]:
    """`count` user messages, each the child of the one before, the first extending `leaf`."""
    records, parent = [], leaf
    for j in range(count):
        rid = f"{label}-{j}"
        body = UserMessage(parent=parent, content=text(f"{label} {j} " + "x" * size))
        records.append(NewRecord(id=rid, at=utc_now(), body=body))
        parent = rid
    return records


if __name__ == "__main__":
    main()
