# Appended by scripts/runtime_suites/langgraph.sh to LangGraph's tests/conftest_checkpointer.py.
# With WAYBOOK_SAVER set ("memory" or "file"), the "memory" checkpointer of LangGraph's own test suite
# (the sync_checkpointer and async_checkpointer fixtures) is waybook's WaybookSaver instead of
# LangGraph's in-memory saver; every other checkpointer is untouched.
if os.environ.get("WAYBOOK_SAVER"):
    _langgraph_memory_checkpointer = _checkpointer_memory

    @contextmanager
    def _checkpointer_memory():
        import shutil
        import tempfile

        from waybook.integrations.langgraph import WaybookSaver
        from waybook.stores import open_store

        directory = tempfile.mkdtemp(prefix="waybook-langgraph-")
        kind = os.environ["WAYBOOK_SAVER"]
        store = open_store(f"file:{directory}" if kind == "file" else "memory:")
        try:
            # The serializer the replaced in-memory saver gets: LangGraph's default (it trusts its own
            # database), or its strict mode under LANGGRAPH_STRICT_MSGPACK. WaybookSaver's own default is
            # the strict mode (a journal read back is outside data: docs/langgraph.md).
            serde = _strict_msgpack_serde() if STRICT_MSGPACK else JsonPlusSerializer()
            with WaybookSaver(store, serde=serde) as saver:
                yield saver
        finally:
            store.close()
            shutil.rmtree(directory, ignore_errors=True)
