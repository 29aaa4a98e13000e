"""The in-memory append against eventsourcing's POPO recorder (bench/speed.py, `--only memory`).

`speed.memory.append.vs_popo`: one record per `InMemoryJournal.append` (rules, seal, digest chain)
against eventsourcing's `POPOApplicationRecorder.insert_events` of one stored event per call (its
optimistic-concurrency version check, the state bytes given already encoded: msgspec's encoding of the
same record), both over the same records; goal at least 1.0. `speed.memory.append.floor_vs_popo`: the
contract inlined into one function (bench/floor.py `InlineJournal`) against the same recorder in the same
run: what the goal can reach here. Without eventsourcing installed (`pip install 'waybook[bench]'`) the
rows are left out, said on stderr.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.measure import Row  # noqa: E402
from bench.speed_pairing import row  # noqa: E402
from bench.workload import session_records  # noqa: E402


def memory_rows(quick: bool) -> Iterator[Row]:
    try:
        from eventsourcing.persistence import StoredEvent
        from eventsourcing.popo import POPOApplicationRecorder
    except ImportError:
        missing = "speed.memory.*: eventsourcing is not installed (pip install 'waybook[bench]')"
        print(missing, file=sys.stderr)
        return
    import msgspec

    from bench.floor import InlineJournal
    from waybook.journal import InMemoryJournal
    from waybook.model import GENESIS

    n = 20_000 if quick else 100_000
    records = list(session_records(n))
    states = [msgspec.json.encode(r.body) for r in records]
    stream = uuid.UUID(int=50)

    def popo() -> None:
        recorder = POPOApplicationRecorder()
        for version, state in enumerate(states, start=1):
            recorder.insert_events([StoredEvent(stream, version, "bench:Recorded", state)])

    def journal() -> None:
        memory = InMemoryJournal()
        head = GENESIS
        for r in records:
            head = memory.append((r,), expected=head).head

    def inline() -> None:
        memory = InlineJournal()
        head = GENESIS
        for r in records:
            head = memory.append((r,), expected=head).head

    rounds = 5 if quick else 7
    yield row(
        "speed.memory.append.vs_popo",
        n,
        popo,
        journal,
        unit="appends/s",
        goal=1.0,
        rounds=rounds,
        note="InMemoryJournal.append of one record against eventsourcing's POPOApplicationRecorder "
        "inserting one stored event (its state the record's encoded body)",
    )
    yield row(
        "speed.memory.append.floor_vs_popo",
        n,
        popo,
        inline,
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="not an adapter: the in-memory append contract inlined (bench/floor.py) against the same "
        "recorder: what the goal can reach here",
    )
