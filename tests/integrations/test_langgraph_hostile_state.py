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

from waybook.integrations.langgraph import CheckpointValueError, WaybookSaver
from waybook.model import JournalError
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
    with contextlib.suppress(CheckpointValueError):  # the strict serializer refuses pickle outright
        reader.get_tuple(conf)
    assert not marker.exists()


def _unreadable(marker: Path) -> dict[str, tuple[str, bytes]]:
    """Stored values the default saver cannot read back; each raised NotImplementedError, ValueError or
    RecursionError (untyped) before issue 43."""
    return {
        "pickle": ("pickle", pickle.dumps(_Pickled(marker))),
        "an unknown type": ("shelve", b"anything"),
        "an encrypted type": ("msgpack+aes", b"\x00" * 32),
        "broken msgpack": ("msgpack", b"\xc1\xc1\xc1"),
        "empty msgpack": ("msgpack", b""),
        "broken json": ("json", b"{not json"),
        "json nested past recursion": ("json", b"[" * 100_000 + b"]" * 100_000),
    }


def _plant(tmp_path: Path, planted: tuple[str, bytes]) -> tuple[Any, dict[str, Any]]:
    store = open_store(f"file:{tmp_path / 'store'}")
    writer = WaybookSaver(store, serde=_Planting(planted))
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"x": "PLANT"}
    checkpoint["channel_versions"] = {"x": writer.get_next_version(None, None)}
    conf = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    writer.put(conf, checkpoint, {"source": "loop", "step": 0}, checkpoint["channel_versions"])
    return store, conf


@pytest.mark.parametrize("name", list(_unreadable(Path("m"))))
def test_a_value_the_default_saver_cannot_read_back_is_its_typed_error(tmp_path: Path, name: str) -> None:
    marker = tmp_path / "ran"
    store, conf = _plant(tmp_path, _unreadable(marker)[name])
    with pytest.raises(CheckpointValueError, match="cannot be read back") as refused:
        WaybookSaver(store).get_tuple(conf)
    assert refused.value.kind == _unreadable(marker)[name][0]
    assert "\n" not in str(refused.value)
    assert isinstance(refused.value, JournalError)
    assert not marker.exists()


def test_a_graph_keeps_the_typed_error_after_with_allowlist(tmp_path: Path) -> None:
    store, conf = _plant(tmp_path, ("pickle", b"irrelevant"))
    saver = WaybookSaver(store).with_allowlist([("mymodule", "MyState")])
    with pytest.raises(CheckpointValueError):
        saver.get_tuple(conf)
