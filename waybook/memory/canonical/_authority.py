"""The canonical memory authority: an agent proposes, trusted host code reviews, adopts and moves the pin.

`create_authority(working=..., canonical=..., routes=..., actor=..., session=... | pins=...)` returns an
`Authority` with two faces (faces.py): `authority.agent` (remember, query, explain, nominate) is what a
model tool gets; `authority.host` (advance_canonical, adopt_nomination) is for trusted code only.

The parts, one idea each: core.py (journals, binding, the agent-side calls), pins.py (the pin as a
projection of pin records), advancing.py and adopting.py (the host calls), turns.py (the host queue),
requests.py (request validation at call time), receipts.py (re-deriving receipts from the journals).
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from waybook.journal import SessionJournal
from waybook.memory.canonical._core import Core
from waybook.memory.canonical._faces import (
    AgentFace,
    AsyncAgentFace,
    AsyncHostFace,
    HostFace,
    async_faces,
    faces,
)
from waybook.memory.canonical._outcomes import Route

__all__ = [
    "AgentFace",
    "AsyncAgentFace",
    "AsyncAuthority",
    "AsyncHostFace",
    "Authority",
    "HostFace",
    "create_async_authority",
    "create_authority",
]


@attrs.frozen
class Authority:
    agent: AgentFace
    host: HostFace


@attrs.frozen
class AsyncAuthority:
    agent: AsyncAgentFace
    host: AsyncHostFace


def create_authority(
    *,
    working: SessionJournal,
    canonical: SessionJournal,
    routes: Iterable[Route],
    actor: str,
    session: SessionJournal | None = None,
    pins: SessionJournal | None = None,
) -> Authority:
    """An authority over journals it borrows (it never closes them).

    `working` and `canonical` are memory journals (roles `working_memory`, `canonical_memory`; an empty
    journal gets its header). The pin is recorded in exactly one of `session` (the session journal the
    agent works in, role `session`) or `pins` (a pin journal, role `pin`); the authority starts at the
    last pin recorded there, or at the canonical journal's header when there is none.
    """
    core = Core(working=working, canonical=canonical, routes=routes, actor=actor, session=session, pins=pins)
    agent, host = faces(core)
    return Authority(agent=agent, host=host)


def create_async_authority(
    *,
    working: SessionJournal,
    canonical: SessionJournal,
    routes: Iterable[Route],
    actor: str,
    session: SessionJournal | None = None,
    pins: SessionJournal | None = None,
) -> AsyncAuthority:
    """The same authority with coroutine methods; host calls queue in call order on the event loop and
    journal work runs in a worker thread, so the loop is never blocked."""
    core = Core(working=working, canonical=canonical, routes=routes, actor=actor, session=session, pins=pins)
    agent, host = async_faces(core)
    return AsyncAuthority(agent=agent, host=host)
