"""LangGraph's data as waybook's: its serialized values decoded as plain data (never rebuilt as objects),
LangChain messages as session nodes, and a checkpoint record as a reader is shown it.

Shared by the LangGraph import (`waybook.formats.langgraph`), the checkpointer
(`waybook.integrations.langgraph`) and the viewer, so a thread reads the same however it was written.
Imports nothing of LangGraph; decoding msgpack needs `ormsgpack` (with `waybook[langgraph]`).
"""

from waybook._langgraph._decode import LangGraphDecodeError, decode_json, decode_typed, plain
from waybook._langgraph._messages import MESSAGE_KINDS, SOURCE, message_body, usage_of
from waybook._langgraph._shown import shown_blob, shown_checkpoint

__all__ = [
    "MESSAGE_KINDS",
    "SOURCE",
    "LangGraphDecodeError",
    "decode_json",
    "decode_typed",
    "message_body",
    "plain",
    "shown_blob",
    "shown_checkpoint",
    "usage_of",
]
