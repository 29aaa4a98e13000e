"""`StrictSerializer`: how `WaybookSaver` reads values back by default.

A journal read back is outside data. LangGraph's `JsonPlusSerializer` in strict mode rebuilds only its
list of safe types and never unpickles; what it cannot read it answers with whatever its decoder raised
(NotImplementedError for pickle or an unknown type name, ValueError for broken msgpack or JSON,
RecursionError for deep nesting). Here every such failure is one typed error, `CheckpointValueError`.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from waybook.integrations.langgraph._errors import CheckpointValueError


class StrictSerializer(JsonPlusSerializer):
    """LangGraph's serializer with no msgpack module beyond its safe list; a value it cannot read back
    is a `CheckpointValueError`. (LangGraph clones it for `with_allowlist`, keeping the class.)"""

    def __init__(self) -> None:
        super().__init__(allowed_msgpack_modules=None)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        try:
            return super().loads_typed(data)
        except Exception as exc:  # a hostile payload may fail in any decoder: one typed answer
            raise CheckpointValueError(str(data[0]), f"{type(exc).__name__}: {exc}") from None
