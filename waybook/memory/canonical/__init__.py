"""Canonical memory: the host-reviewed authority, its pin, nominations, adoptions and receipts."""

from waybook.memory.canonical._authority import (
    AsyncAuthority,
    Authority,
    create_async_authority,
    create_authority,
)
from waybook.memory.canonical._faces import AgentFace
from waybook.memory.canonical._nominations import (
    NominatedRecord,
    Nomination,
)
from waybook.memory.canonical._outcomes import (
    AdoptionReceipt,
    Explanation,
    PinReceipt,
    QueryResult,
    RememberReceipt,
    Route,
)

__all__ = [
    "AdoptionReceipt",
    "AgentFace",
    "AsyncAuthority",
    "Authority",
    "Explanation",
    "NominatedRecord",
    "Nomination",
    "PinReceipt",
    "QueryResult",
    "RememberReceipt",
    "Route",
    "create_async_authority",
    "create_authority",
]
