"""A LangGraph database is outside data: importing one never imports or calls what a checkpoint names.

Each payload below ran a command under LangGraph's own serializer (issue 27, finding 2). Each is planted
into a real SqliteSaver database; the import refuses it with a typed error naming what it found, the
marker file the payload would create is never made, and no journal is written.
"""

from __future__ import annotations

import json
import pickle
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC
from pathlib import Path

import pytest

from waybook.formats.langgraph._database import LangGraphDatabaseError, read_thread

ormsgpack = pytest.importorskip("ormsgpack")
sqlite_saver = pytest.importorskip("langgraph.checkpoint.sqlite")


def _packed(code: int, parts: tuple[object, ...]) -> bytes:
    state = {
        "v": 4,
        "ts": "2026-12-01T11:06:00.000000+00:00",
        "id": "1",
        "channel_values": {"messages": [ormsgpack.Ext(code, ormsgpack.packb(parts))]},
        "channel_versions": {},
        "versions_seen": {},
    }
    return ormsgpack.packb(state)


class _Pickled:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        return (subprocess.check_call, (["touch", str(self.marker)],))


def payloads(marker: Path) -> dict[str, tuple[str, bytes]]:
    touch = f"touch {marker}"
    argv = ["touch", str(marker)]
    return {
        "ext 0 os.system": ("msgpack", _packed(0, ("os", "system", touch))),
        "ext 1 os.system": ("msgpack", _packed(1, ("os", "system", [touch]))),
        "ext 2 os.system": ("msgpack", _packed(2, ("os", "system", {"command": touch}))),
        "ext 1 subprocess.check_call": ("msgpack", _packed(1, ("subprocess", "check_call", [argv]))),
        "ext 2 subprocess.run": ("msgpack", _packed(2, ("subprocess", "run", {"args": argv}))),
        "ext 3 method call": ("msgpack", _packed(3, ("os", "system", touch, "__call__"))),
        "ext 5 pydantic": ("msgpack", _packed(5, ("subprocess", "run", {"args": argv}, "x"))),
        "pickle": ("pickle", pickle.dumps(_Pickled(marker))),
        "json lc 2 constructor": (
            "json",
            json.dumps(
                {
                    "channel_values": {
                        "messages": [
                            {
                                "lc": 2,
                                "type": "constructor",
                                "id": ["subprocess", "check_call"],
                                "args": [argv],
                            }
                        ]
                    }
                }
            ).encode(),
        ),
        "json lc 1 secret": (
            "json",
            json.dumps({"channel_values": {"x": {"lc": 1, "type": "secret", "id": ["HOME"]}}}).encode(),
        ),
    }


def planted(tmp_path: Path, kind: str, data: bytes) -> Path:
    """A real SqliteSaver database whose one checkpoint's bytes are replaced by `data`."""
    from langgraph.checkpoint.base import empty_checkpoint

    path = tmp_path / "evil.db"
    connection = sqlite3.connect(path, check_same_thread=False)
    saver = sqlite_saver.SqliteSaver(connection)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    saver.put(config, empty_checkpoint(), {"source": "input", "step": -1}, {})
    connection.execute("UPDATE checkpoints SET type = ?, checkpoint = ?", (kind, data))
    connection.commit()
    connection.close()
    return path


@pytest.mark.parametrize("name", list(payloads(Path("m"))))
def test_a_planted_payload_is_refused_typed_and_nothing_runs(tmp_path: Path, name: str) -> None:
    marker = tmp_path / "ran"
    kind, data = payloads(marker)[name]
    database = planted(tmp_path, kind, data)
    with pytest.raises(LangGraphDatabaseError, match="checkpoint") as refused:
        read_thread(database, None)
    assert "\n" not in str(refused.value)
    assert not marker.exists()


@pytest.mark.parametrize("name", ["ext 0 os.system", "pickle", "json lc 2 constructor"])
def test_the_cli_import_refuses_a_planted_payload_in_one_line_and_writes_nothing(
    tmp_path: Path, name: str
) -> None:
    marker = tmp_path / "ran"
    kind, data = payloads(marker)[name]
    database = planted(tmp_path, kind, data)
    out = tmp_path / "out.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "waybook", "import", "langgraph", str(database), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert not marker.exists()
    assert not out.exists()


def test_the_secret_a_payload_names_is_not_read_from_the_environment(tmp_path: Path) -> None:
    kind, data = payloads(tmp_path / "m")["json lc 1 secret"]
    with pytest.raises(LangGraphDatabaseError, match="lc secret naming HOME"):
        read_thread(planted(tmp_path, kind, data), None)


def test_a_checkpoint_nested_100000_deep_is_a_typed_error(tmp_path: Path) -> None:
    deep = b"\x81\xaechannel_values\x81\xa1x" + b"\x91" * 100_000 + b"\x90"
    with pytest.raises(LangGraphDatabaseError, match=r"does not decode|deeper"):
        read_thread(planted(tmp_path, "msgpack", deep), None)


def test_plain_state_types_decode_to_their_payloads(tmp_path: Path) -> None:
    import uuid
    from datetime import datetime

    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    state = {
        "v": 4,
        "ts": "2026-12-01T11:06:00.000000+00:00",
        "channel_values": {
            "id": uuid.UUID(int=1),
            "at": datetime(2026, 12, 1, tzinfo=UTC),
            "tags": {"a"},
            "ratio": float("nan"),
        },
    }
    kind, data = JsonPlusSerializer().dumps_typed(state)
    _, [checkpoint] = read_thread(planted(tmp_path, kind, data), None)
    assert checkpoint.channels == {
        "id": "00000000-0000-0000-0000-000000000001",
        "at": "2026-12-01T00:00:00+00:00",
        "tags": ["a"],
        "ratio": "nan",
    }
