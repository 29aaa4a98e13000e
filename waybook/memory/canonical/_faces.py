"""The two faces of an authority: what a model tool gets (agent) and what trusted code keeps (host).

The agent face holds one opaque number. Its methods are plain functions of its class that look the core
up in a module registry by that number (the entry goes when the face is collected), so no attribute,
closure, default, bound method or `__wrapped__` chain of the face leads to the core, the journals or
the host face. A Python object is
not a sandbox (any code in the process can import this module): untrusted code reaches memory from
outside the host process, through the MCP server (waybook.integrations.mcp).

Host methods validate and copy their request, then take their place in line, when called; the async
ones return a task that already holds its place.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import count
from typing import NoReturn, Self, TypeVar

from waybook.memory._errors import ProfileError, RequestError
from waybook.memory.canonical._adopting import adopt
from waybook.memory.canonical._advancing import advance
from waybook.memory.canonical._core import Core
from waybook.memory.canonical._nominations import Nomination
from waybook.memory.canonical._outcomes import (
    AdoptionReceipt,
    Explanation,
    PinReceipt,
    QueryResult,
    RememberReceipt,
)
from waybook.memory.canonical._requests import (
    VERSION,
    adoption_request,
    advance_request,
    explain_request,
    keys_arg,
    prefix_arg,
    remember_request,
    version_arg,
)
from waybook.memory.canonical._turns import AsyncTurns, Turns
from waybook.model import Head

T = TypeVar("T")
_CORES: dict[int, Core] = {}
"""The core behind each live agent face, by the face's token; a face's `__del__` drops its entry."""
_tokens = count(1)


def _register(core: Core) -> int:
    token = next(_tokens)
    _CORES[token] = core
    return token


def _release(token: int) -> None:
    _CORES.pop(token, None)


def _core(token: int) -> Core:
    core = _CORES.get(token)
    if core is None:
        msg = "this agent face no longer has an authority; ask the host for a new face"
        raise ProfileError(msg)
    return core


class _AgentHandle:
    """An agent face's hold on its authority (a token in the registry): never copied or pickled, and
    released when the face is collected."""

    __slots__ = ("_token",)

    def __init__(self, token: int) -> None:
        self._token = token

    def __copy__(self) -> Self:
        """The face itself: a copy would share the token, and collecting it would end this face."""
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        return self

    def __reduce__(self) -> NoReturn:
        msg = "an agent face is a handle on an authority in this process; it cannot be pickled"
        raise TypeError(msg)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter exit the registry may already be gone
            _release(self._token)


class AgentFace(_AgentHandle):
    """What a model tool gets: remember, query, explain, nominate."""

    __slots__ = ()

    def remember(
        self,
        request_id: str,
        puts: Mapping[str, str] | Sequence[tuple[str, str]],
        tombstones: Sequence[str] = (),
        *,
        v: int = VERSION,
    ) -> RememberReceipt:
        version_arg(v, "remember")
        return _core(self._token).remember(*remember_request(request_id, puts, tombstones))

    def query(
        self, keys: Iterable[str] | None = None, *, prefix: str | None = None, v: int = VERSION
    ) -> QueryResult:
        version_arg(v, "query")
        return _core(self._token).query(None if keys is None else keys_arg(keys), prefix_arg(prefix))

    def explain(self, key: str | None = None, *, handle: int | None = None, v: int = VERSION) -> Explanation:
        version_arg(v, "explain")
        return _core(self._token).explain(*explain_request(key, handle))

    def nominate(self, keys: Sequence[str], route: str, purpose: str, *, v: int = VERSION) -> Nomination:
        version_arg(v, "nominate")
        return _core(self._token).nominate(keys_arg(keys), route, purpose)


class HostFace:
    """For trusted host code only: advance_canonical and adopt_nomination, one at a time in call order."""

    __slots__ = ("_core", "_turns")

    def __init__(self, core: Core) -> None:
        self._core = core
        self._turns = Turns()

    def advance_canonical(self, expected_head: Head, next_head: Head, *, v: int = VERSION) -> PinReceipt:
        expected, target = advance_request(expected_head, next_head, v)
        with self._turns.turn(self._turns.take()):
            return advance(self._core, expected, target)

    def adopt_nomination(
        self,
        expected_canonical_head: Head,
        nomination: Nomination,
        replacements: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
        *,
        v: int = VERSION,
    ) -> AdoptionReceipt:
        expected, nominated, replace = adoption_request(expected_canonical_head, nomination, replacements, v)
        with self._turns.turn(self._turns.take()):
            return adopt(self._core, expected, nominated, replace)


class AsyncAgentFace(_AgentHandle):
    """The agent face with coroutine methods; journal work runs in a worker thread."""

    __slots__ = ()

    async def remember(
        self,
        request_id: str,
        puts: Mapping[str, str] | Sequence[tuple[str, str]],
        tombstones: Sequence[str] = (),
        *,
        v: int = VERSION,
    ) -> RememberReceipt:
        version_arg(v, "remember")
        request = remember_request(request_id, puts, tombstones)
        return await asyncio.to_thread(_core(self._token).remember, *request)

    async def query(
        self, keys: Iterable[str] | None = None, *, prefix: str | None = None, v: int = VERSION
    ) -> QueryResult:
        version_arg(v, "query")
        return _core(self._token).query(None if keys is None else keys_arg(keys), prefix_arg(prefix))

    async def explain(
        self, key: str | None = None, *, handle: int | None = None, v: int = VERSION
    ) -> Explanation:
        version_arg(v, "explain")
        return _core(self._token).explain(*explain_request(key, handle))

    async def nominate(
        self, keys: Sequence[str], route: str, purpose: str, *, v: int = VERSION
    ) -> Nomination:
        version_arg(v, "nominate")
        copied = keys_arg(keys)
        return await asyncio.to_thread(_core(self._token).nominate, copied, route, purpose)


class AsyncHostFace:
    """Host methods return a task that took its place in line when the method was called.

    Cancelled while waiting, a call leaves the line and nothing is written. Cancelled after its turn
    began, it finishes its journal calls (and records its outcome in the pin journal) before the next
    call starts, then raises CancelledError.
    """

    __slots__ = ("_core", "_turns")

    def __init__(self, core: Core) -> None:
        self._core = core
        self._turns = AsyncTurns()

    def advance_canonical(
        self, expected_head: Head, next_head: Head, *, v: int = VERSION
    ) -> asyncio.Task[PinReceipt]:
        expected, target = advance_request(expected_head, next_head, v)
        return self._submit(lambda: advance(self._core, expected, target))

    def adopt_nomination(
        self,
        expected_canonical_head: Head,
        nomination: Nomination,
        replacements: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
        *,
        v: int = VERSION,
    ) -> asyncio.Task[AdoptionReceipt]:
        expected, nominated, replace = adoption_request(expected_canonical_head, nomination, replacements, v)
        return self._submit(lambda: adopt(self._core, expected, nominated, replace))

    def _submit(self, call: Callable[[], T]) -> asyncio.Task[T]:
        try:
            place = self._turns.take()
        except RuntimeError:
            msg = "call the async host methods from a running event loop"
            raise RequestError(msg) from None
        task = asyncio.get_running_loop().create_task(self._run(place, call))
        task.add_done_callback(lambda _task: self._turns.leave(place))  # cancelled before it ever ran
        return task

    async def _run(self, place: asyncio.Future[None], call: Callable[[], T]) -> T:
        await self._turns.wait(place)
        work = asyncio.ensure_future(asyncio.to_thread(call))
        cancelled = False
        try:
            while not work.done():
                try:
                    await asyncio.wait({work})
                except asyncio.CancelledError:
                    cancelled = True  # the journal calls run on; the turn ends when they end
        finally:
            self._turns.leave(place)
        if cancelled:
            raise asyncio.CancelledError
        return work.result()


def faces(core: Core) -> tuple[AgentFace, HostFace]:
    return AgentFace(_register(core)), HostFace(core)


def async_faces(core: Core) -> tuple[AsyncAgentFace, AsyncHostFace]:
    return AsyncAgentFace(_register(core)), AsyncHostFace(core)
