"""WaybookSessionStore passes the Claude Agent SDK's own SessionStore conformance suite, on every store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk")

import anyio
from claude_agent_sdk.testing import run_session_store_conformance

from waybook.integrations.claude_agent_sdk import WaybookSessionStore
from waybook.stores import JournalStore, open_store

KEY = {"project_key": "proj", "session_id": "sess"}


@pytest.fixture(params=["memory", "file", "sqlite"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], JournalStore]:
    counter = iter(range(1_000_000))
    if request.param == "memory":
        return lambda: open_store("memory:")
    if request.param == "sqlite":
        return lambda: open_store(f"sqlite:{tmp_path / str(next(counter))}.db")
    return lambda: open_store(f"file:{tmp_path / str(next(counter))}")


@pytest.mark.parametrize("delete", ["purge", "reset"])
def test_the_sdks_conformance_suite_passes_every_contract(
    make_store: Callable[[], JournalStore], delete: str
) -> None:
    async def run() -> None:
        await run_session_store_conformance(lambda: WaybookSessionStore(make_store(), delete=delete))  # type: ignore[arg-type]

    anyio.run(run)


def test_every_optional_method_is_implemented_so_no_contract_is_skipped() -> None:
    from claude_agent_sdk.types import SessionStore

    for method in ("list_sessions", "list_session_summaries", "delete", "list_subkeys"):
        assert getattr(WaybookSessionStore, method) is not getattr(SessionStore, method)


def entry(uuid: str | None, n: int) -> dict[str, object]:
    return {"type": "user", "n": n, **({"uuid": uuid} if uuid else {})}


def test_entries_are_deduplicated_by_uuid_and_entries_without_one_are_kept() -> None:
    store = WaybookSessionStore(open_store("memory:"))

    async def run() -> object:
        await store.append(KEY, [entry("a", 1), entry("a", 2), entry(None, 3)])
        await store.append(KEY, [entry("a", 4), entry("b", 5), entry(None, 3)])
        return await store.load(KEY)

    assert anyio.run(run) == [entry("a", 1), entry(None, 3), entry("b", 5), entry(None, 3)]


def test_two_writers_on_one_directory_store_lose_nothing_and_duplicate_nothing(tmp_path: Path) -> None:
    first = WaybookSessionStore(open_store(f"file:{tmp_path}"))
    second = WaybookSessionStore(open_store(f"file:{tmp_path}"))

    async def run() -> object:
        await first.append(KEY, [entry("a", 1)])
        await second.append(KEY, [entry("a", 1), entry("b", 2)])  # a lost reply retried by another process
        await first.append(KEY, [entry("c", 3)])  # first's head is stale: it re-reads and appends after b
        return await second.load(KEY)

    assert anyio.run(run) == [entry("a", 1), entry("b", 2), entry("c", 3)]


def test_reset_delete_keeps_the_history_and_a_later_append_starts_fresh() -> None:
    backing = open_store("memory:")
    store = WaybookSessionStore(backing, delete="reset")

    async def run() -> tuple[object, object]:
        await store.append(KEY, [entry("a", 1)])
        await store.delete(KEY)
        gone = await store.load(KEY)
        await store.append(KEY, [entry("a", 2)])  # after a reset the uuid is new again
        return gone, await store.load(KEY)

    assert anyio.run(run) == (None, [entry("a", 2)])
    (info,) = backing.list()
    kinds = [record.kind for record in backing.open(info.journal_id).read()]
    assert kinds.count("waybook.reset/1") == 1
    assert kinds.count("waybook.custom/1") == 4  # two entries, two summaries: nothing was erased


def test_purge_delete_erases_the_bytes_leaves_a_receipt_and_the_key_can_live_again() -> None:
    backing = open_store("memory:")
    store = WaybookSessionStore(backing)

    async def run() -> object:
        await store.append(KEY, [entry("a", 1)])
        await store.delete(KEY)
        await store.append(KEY, [entry("a", 2)])
        return await store.load(KEY)

    assert anyio.run(run) == [entry("a", 2)]
    (live,) = backing.list()
    assert live.journal_id.endswith("-1")  # the purged id is retired; the key's next life has the next one
    assert not backing.exists(live.journal_id[: -len("-1")])


def test_a_key_purged_and_written_again_by_another_process_is_found_again(tmp_path: Path) -> None:
    """Regression (found by the ADK state machine): a cached journal id must not outlive its purge."""
    first = WaybookSessionStore(open_store(f"file:{tmp_path}"))
    second = WaybookSessionStore(open_store(f"file:{tmp_path}"))

    async def run() -> tuple[object, object]:
        await first.append(KEY, [entry("a", 1)])
        await second.delete(KEY)
        await second.append(KEY, [entry("b", 2)])
        seen_by_first = await first.load(KEY)
        await first.delete(KEY)
        return seen_by_first, await second.load(KEY)

    assert anyio.run(run) == ([entry("b", 2)], None)


def test_the_runtime_suites_plugin_helpers_read_what_the_store_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """scripts/runtime_suites/waybook_claude_store_plugin.py gives the SDK's own tests the helpers of its
    InMemorySessionStore (`get_entries`, `size`, `clear`) on a WaybookSessionStore; they read the store's
    private keyed journals, so a rename there must fail here, not only in CI's suite run."""
    import importlib.util

    import claude_agent_sdk
    import claude_agent_sdk._internal.session_store as sdk_store

    for module in (claude_agent_sdk, sdk_store):  # the plugin puts its class under the SDK's name
        monkeypatch.setattr(module, "InMemorySessionStore", module.InMemorySessionStore)
    monkeypatch.setenv("WAYBOOK_STORE", "memory")
    path = Path(__file__).parents[2] / "scripts" / "runtime_suites" / "waybook_claude_store_plugin.py"
    spec = importlib.util.spec_from_file_location("waybook_claude_store_plugin", path)
    assert spec is not None
    assert spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    store = plugin.WaybookBackedSessionStore()
    anyio.run(store.append, KEY, [entry("a", 1), entry("b", 2)])
    assert store.get_entries(KEY) == [entry("a", 1), entry("b", 2)]
    assert store.size == 1
    store.clear()
    assert store.get_entries(KEY) == []
    assert store.size == 0
