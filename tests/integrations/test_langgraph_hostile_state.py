"""A journal WaybookSaver reads back is outside data: a value naming a callable is never called.

LangGraph's default serializer rebuilds whatever a msgpack extension names (`os.system` included) and
can unpickle; WaybookSaver's default reads with LangGraph's strict mode (issue 27, finding 2).
"""

from __future__ import annotations

import contextlib
import pickle
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

import ormsgpack
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from waybook.integrations.langgraph import WaybookSaver
from waybook.stores import open_store


class _Planting(JsonPlusSerializer):
    """A writer whose value `"PLANT"` is stored as the hostile bytes it was given."""

    def __init__(self, planted: tuple[str, bytes]) -> None:
        super().__init__()
        self.planted = planted

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.planted if obj == "PLANT" else super().dumps_typed(obj)


class _Pickled:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (subprocess.check_call, (["touch", str(self.marker)],))


def _hostile(marker: Path) -> dict[str, tuple[str, bytes]]:
    return {
        "ext 0 os.system": (
            "msgpack",
            ormsgpack.packb(ormsgpack.Ext(0, ormsgpack.packb(("os", "system", f"touch {marker}")))),
        ),
        "ext 2 subprocess.run": (
            "msgpack",
            ormsgpack.packb(
                ormsgpack.Ext(2, ormsgpack.packb(("subprocess", "run", {"args": ["touch", str(marker)]})))
            ),
        ),
        "pickle": ("pickle", pickle.dumps(_Pickled(marker))),
    }


@pytest.mark.parametrize("name", ["ext 0 os.system", "ext 2 subprocess.run", "pickle"])
def test_a_planted_channel_value_is_not_run_when_the_default_saver_reads_it(
    tmp_path: Path, name: str
) -> None:
    marker = tmp_path / "ran"
    store = open_store(f"file:{tmp_path / 'store'}")
    writer = WaybookSaver(store, serde=_Planting(_hostile(marker)[name]))
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"x": "PLANT"}
    checkpoint["channel_versions"] = {"x": writer.get_next_version(None, None)}
    conf = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    writer.put(conf, checkpoint, {"source": "loop", "step": 0}, checkpoint["channel_versions"])
    reader = WaybookSaver(store)
    with contextlib.suppress(NotImplementedError):  # LangGraph's strict serializer refuses pickle outright
        reader.get_tuple(conf)
    assert not marker.exists()
