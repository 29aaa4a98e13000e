"""Integration benchmarks: waybook-backed runtimes against the runtimes' own SQLite savers, in one run.

LangGraph: a thread of 2,000 steps over a messages state (each step adds one message to the list and
records its pending write), stored by WaybookSaver (directory store) and by LangGraph's SqliteSaver:
bytes on disk, puts per second, and reads per second of the latest checkpoint and of a random earlier
one. OpenAI Agents: 2,000 items added two at a time (one turn), then full and last-20 reads, by
WaybookSession (directory store) and the SDK's SQLiteSession. Both SQLite savers run in WAL mode with
SQLite's default synchronous setting (a sync per commit), so waybook's directory store runs with
`flush` (no sync, its default) and with `fsync` (a sync per append); waybook's SQLite store runs too.
Rows alternate between savers round by round so machine drift hits all alike; each figure is the
median of the rounds.

LangGraph with `redact=True`: what the check after serialization costs (the saver reads each value it
serialized back to its strings and runs the detector over them, to refuse a secret its masking could
not reach): serializing a 200-message list alone against serializing it and checking it, and
`WaybookSaver(redact=True)` puts against the same saver with the check left out, paired (alternate
rounds, order flipped, median of the per-round ratios).

Claude Agent SDK store: a transcript's load by a fresh store object (the fold from the first record) at
8,000 and 32,000 entries, paired: the fold's growth (`--only claude-load`).

Run: `python bench/integrations.py [--steps N] [--rounds R] [--only redact|claude-load]`; prints a table,
writes bench/integrations.json (`--only`: its own key only).
Needs `pip install -e '.[dev]'` (LangGraph's SQLite saver is in the dev extra).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.memory import SQLiteSession
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from bench.speed_pairing import paired
from waybook._masking import SecretMask
from waybook.integrations.langgraph import WaybookSaver
from waybook.integrations.langgraph._secrets import leaked, masked_value
from waybook.integrations.openai_agents import WaybookSession
from waybook.stores import open_store

RESULTS = Path(__file__).resolve().parent / "integrations.json"
TEXT = "The quarterly numbers are in; revenue grew in every region but one, and costs held steady. " * 2


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- LangGraph ----------------------------------------------------------------------------------------


def put_growing(saver: BaseCheckpointSaver[Any], steps: int) -> list[str]:
    """`steps` checkpoints of a growing messages list (each with its pending write) on thread "bench";
    their ids."""
    config: Any = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
    messages: list[Any] = []
    version: Any = None
    ids: list[str] = []
    for step in range(steps):
        message = (HumanMessage if step % 2 == 0 else AIMessage)(f"{step}: {TEXT}", id=f"m{step}")
        messages = [*messages, message]
        version = saver.get_next_version(version, None)
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": messages}
        checkpoint["channel_versions"] = {"messages": version}
        checkpoint["versions_seen"] = {"agent": {"messages": version}}
        config = saver.put(config, checkpoint, {"source": "loop", "step": step}, {"messages": version})
        saver.put_writes(config, [("messages", [message])], f"task-{step}")
        ids.append(checkpoint["id"])
    return ids


def langgraph_run(saver: BaseCheckpointSaver[Any], steps: int) -> dict[str, float]:
    """Put `steps` checkpoints of a growing messages list, then read some back. Returns rates."""
    thread = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
    start = time.perf_counter()
    ids = put_growing(saver, steps)
    put_seconds = time.perf_counter() - start
    reads = 50
    start = time.perf_counter()
    for _ in range(reads):
        latest = saver.get_tuple(thread)
        assert latest is not None
        assert len(latest.checkpoint["channel_values"]["messages"]) == steps
    latest_seconds = time.perf_counter() - start
    picks = random.Random(7).choices(ids, k=reads)
    start = time.perf_counter()
    for checkpoint_id in picks:
        found = saver.get_tuple({"configurable": {**thread["configurable"], "checkpoint_id": checkpoint_id}})
        assert found is not None
    random_seconds = time.perf_counter() - start
    return {
        "puts_per_s": steps / put_seconds,
        "latest_gets_per_s": reads / latest_seconds,
        "random_gets_per_s": reads / random_seconds,
    }


def store_url(work: Path, kind: str) -> str:
    """A directory store with a durability policy ("flush", "fsync"), or "sqlite" (its defaults)."""
    return f"sqlite:{work / 'store.db'}" if kind == "sqlite" else f"file:{work}?durability={kind}"


def langgraph_waybook(kind: str) -> Callable[[Path, int], dict[str, float]]:
    def run(work: Path, steps: int) -> dict[str, float]:
        store = open_store(store_url(work, kind))
        with WaybookSaver(store) as saver:
            rates = langgraph_run(saver, steps)
        store.close()
        return {**rates, "bytes": dir_bytes(work)}

    return run


def langgraph_sqlite(work: Path, steps: int) -> dict[str, float]:
    path = work / "checkpoints.sqlite"
    connection = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(connection)
    rates = langgraph_run(saver, steps)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return {**rates, "bytes": dir_bytes(work)}


class UncheckedSaver(WaybookSaver):
    """`redact=` without the check after serialization: only what the check costs differs."""

    def _checked(self, view: Any, where: str) -> Any:
        return self.serde


def langgraph_puts(saver_type: type[WaybookSaver], steps: int) -> None:
    """`steps` puts (and their pending writes) of a growing messages list, with `redact=True`."""
    with (
        tempfile.TemporaryDirectory(prefix="waybook-bench-") as work,
        open_store(store_url(Path(work), "flush")) as store,
        saver_type(store, redact=True) as saver,
    ):
        put_growing(saver, steps)


def langgraph_redact(steps: int, rounds: int) -> dict[str, dict[str, float]]:
    """The check's cost: on one serialized value, and on the saver's puts (paired rows)."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    mask = SecretMask()
    messages = [(HumanMessage if n % 2 == 0 else AIMessage)(f"{n}: {TEXT}", id=f"m{n}") for n in range(200)]
    masked_value(mask, messages)  # the saver masks (and so remembers) every string before it serializes
    repeats = 50

    def serialize() -> None:
        for _ in range(repeats):
            serde.dumps_typed(messages)

    def serialize_and_check() -> None:
        for _ in range(repeats):
            kind, data = serde.dumps_typed(messages)
            assert leaked(mask, kind, data, messages) is None

    value = paired(repeats, serialize, serialize_and_check, rounds=rounds)
    saver = paired(
        steps,
        lambda: langgraph_puts(UncheckedSaver, steps),
        lambda: langgraph_puts(WaybookSaver, steps),
        rounds=rounds,
    )
    return {
        "langgraph.redact.check.200_messages_value": {
            "serialize_per_s": value[0],
            "serialize_and_check_per_s": value[1],
            "ratio": value[2],
        },
        f"langgraph.redact.check.{steps}_puts": {
            "unchecked_puts_per_s": saver[0],
            "checked_puts_per_s": saver[1],
            "ratio": saver[2],
        },
    }


# --- OpenAI Agents ------------------------------------------------------------------------------------


async def agents_run(session: Any, items: int) -> dict[str, float]:
    turns = items // 2
    start = time.perf_counter()
    for turn in range(turns):
        await session.add_items(
            [
                {"role": "user", "content": f"{turn}: {TEXT}"},
                {
                    "id": f"msg_{turn}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": TEXT, "annotations": [], "logprobs": []}],
                },
            ]
        )
    add_seconds = time.perf_counter() - start
    reads = 50
    start = time.perf_counter()
    for _ in range(reads):
        assert len(await session.get_items()) == turns * 2
    all_seconds = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(reads):
        assert len(await session.get_items(limit=20)) == 20
    last_seconds = time.perf_counter() - start
    return {
        "adds_per_s": turns / add_seconds,
        "get_all_per_s": reads / all_seconds,
        "get_last20_per_s": reads / last_seconds,
    }


def agents_waybook(kind: str) -> Callable[[Path, int], dict[str, float]]:
    def run(work: Path, items: int) -> dict[str, float]:
        store = open_store(store_url(work, kind))
        session = WaybookSession("bench", store)
        rates = asyncio.run(agents_run(session, items))
        session.close()
        store.close()
        return {**rates, "bytes": dir_bytes(work)}

    return run


def agents_sqlite(work: Path, items: int) -> dict[str, float]:
    session = SQLiteSession("bench", work / "sessions.sqlite")
    rates = asyncio.run(agents_run(session, items))
    session.close()
    return {**rates, "bytes": dir_bytes(work)}


# --- the run ------------------------------------------------------------------------------------------


def claude_load_growth(entries: int, rounds: int) -> dict[str, float]:
    """A Claude Agent SDK transcript's load by a fresh `WaybookSessionStore` (the fold from the journal's
    first record), at `entries` entries and at four times as many, paired (alternate rounds, order
    flipped, median of the per-round ratios): a fold linear in the entries takes about 4x as long at 4x
    the entries, a quadratic one about 16x."""
    from waybook.integrations.claude_agent_sdk import WaybookSessionStore

    key: Any = {"project_key": "bench", "session_id": "s1"}

    def stored(n: int) -> Any:
        store = open_store("memory:")
        writer = WaybookSessionStore(store)
        for start in range(0, n, 100):
            batch = [
                {"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": TEXT}}
                for i in range(start, min(n, start + 100))
            ]
            asyncio.run(writer.append(key, batch))
        return store

    small, large = stored(entries), stored(4 * entries)

    def load(store: Any) -> Callable[[], object]:
        return lambda: asyncio.run(WaybookSessionStore(store).load(key))

    small_rate, large_rate, ratio = paired(1, load(small), load(large), rounds=rounds)
    return {
        f"load {entries:,} entries (s)": 1 / small_rate,
        f"load {4 * entries:,} entries (s)": 1 / large_rate,
        "time at 4x the entries / time at 1x (linear ~4, quadratic ~16)": 1 / ratio,
    }


def measure(
    contenders: dict[str, Callable[[Path, int], dict[str, float]]], size: int, rounds: int
) -> dict[str, dict[str, float]]:
    """Each contender once per round, in alternating order; the median of every figure."""
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in contenders}
    names = list(contenders)
    for number in range(rounds):
        for name in names if number % 2 == 0 else reversed(names):
            with tempfile.TemporaryDirectory(prefix="waybook-bench-") as work:
                samples[name].append(contenders[name](Path(work), size))
    return {
        name: {key: statistics.median(s[key] for s in runs) for key in runs[0]}
        for name, runs in samples.items()
    }


def table(title: str, results: dict[str, dict[str, float]], baseline: str) -> list[str]:
    keys = list(next(iter(results.values())))
    lines = [title, f"{'':<30}" + "".join(f"{key:>20}" for key in keys)]
    for name, figures in results.items():
        cells = []
        for key in keys:
            ratio = figures[key] / results[baseline][key] if results[baseline][key] else float("nan")
            cell = f"{figures[key]:,.0f}" + ("" if name == baseline else f" ({ratio:.2f}x)")
            cells.append(f"{cell:>20}")
        lines.append(f"{name:<30}" + "".join(cells))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--only",
        choices=["redact", "claude-load"],
        help="run only the redact= check's rows, or the Claude load's",
    )
    args = parser.parse_args()
    if args.only == "claude-load":
        growth = claude_load_growth(8000, max(args.rounds, 5))
        print("Claude Agent SDK store: loading a transcript, the fold's growth (paired)")
        print("\n".join(f"{name:<66}{figure:,.3f}" for name, figure in growth.items()))
        saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        RESULTS.write_text(json.dumps({**saved, "claude_load_growth": growth}, indent=2) + "\n")
        return
    redact = langgraph_redact(min(args.steps, 500), max(args.rounds, 5))
    redact_lines = [
        "LangGraph redact=True: the check after serialization (paired; ratio = with / without the check)",
        *(
            f"{name:<44}" + "".join(f"{key}={figure:,.2f}  " for key, figure in figures.items())
            for name, figures in redact.items()
        ),
    ]
    if args.only == "redact":
        print("\n".join(redact_lines))
        saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        RESULTS.write_text(json.dumps({**saved, "langgraph_redact": redact}, indent=2) + "\n")
        return
    langgraph = measure(
        {
            "LangGraph SqliteSaver": langgraph_sqlite,
            "WaybookSaver (flush)": langgraph_waybook("flush"),
            "WaybookSaver (fsync)": langgraph_waybook("fsync"),
            "WaybookSaver (sqlite store)": langgraph_waybook("sqlite"),
        },
        args.steps,
        args.rounds,
    )
    agents = measure(
        {
            "Agents SQLiteSession": agents_sqlite,
            "WaybookSession (flush)": agents_waybook("flush"),
            "WaybookSession (fsync)": agents_waybook("fsync"),
            "WaybookSession (sqlite store)": agents_waybook("sqlite"),
        },
        args.steps,
        args.rounds,
    )
    lines = [
        *table(f"LangGraph: {args.steps} steps of a messages state", langgraph, "LangGraph SqliteSaver"),
        "",
        *table(f"OpenAI Agents: {args.steps} items, two per turn", agents, "Agents SQLiteSession"),
        "",
        "(ratios against the runtime's own SQLite saver, measured in the same run; higher is better "
        "except for bytes)",
        "",
        *redact_lines,
    ]
    print("\n".join(lines))
    RESULTS.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "python": platform.python_version(),
                "steps": args.steps,
                "rounds": args.rounds,
                "langgraph": langgraph,
                "openai_agents": agents,
                "langgraph_redact": redact,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
