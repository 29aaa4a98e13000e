"""Anthropic's memory tool (`memory_20250818`) on a waybook Memory port.

`WaybookMemoryTool(memory)` is a `BetaAbstractMemoryTool` and `AsyncWaybookMemoryTool(memory)` a
`BetaAsyncAbstractMemoryTool`: hand either to the SDK's tool runner as is. They answer with the texts of
the SDK's reference local-filesystem tool and raise the SDK's `ToolError` where it refuses; every write
is a record in the working-memory journal with a receipt. `call(input, call_id=...)` lets a runtime that
knows the tool-call id put it on the record; `take_calls()` hands a runtime each call's text and receipt
for its session's tool-result entry. docs/memory.md lists where waybook is deliberately stricter.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable
from contextvars import ContextVar
from functools import partial
from typing import Any, Final

import attrs

from waybook._masking import Redact, secret_mask
from waybook.integrations._extras import needs_extra

with needs_extra(
    "waybook.integrations.anthropic_memory",
    runtime="the anthropic SDK",
    extra="anthropic",
    modules=("anthropic", "anyio"),
):
    import anyio
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
    from anthropic.types.beta import BetaCacheControlEphemeralParam

from waybook.integrations import _anthropic_rules as rules
from waybook.integrations._anthropic_rules import Refusal
from waybook.journal._roles.memory_paths import ROOT, is_under
from waybook.memory.working import Memory, Receipt, Result


@attrs.frozen
class MemoryToolCall:
    """One call of the tool as the model saw it: the command, the text it read, and the write's receipt."""

    command: str
    text: str
    is_error: bool
    receipt: Receipt | None
    call_id: str | None


class _Core:
    """The six commands over one Memory port; each returns text or raises `Refusal`. Not thread-safe."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def view(self, command: Any, call_id: str | None) -> tuple[str, None]:
        path = rules.locate(command.path)
        state = self.memory.state()
        if state.is_directory(path):
            return rules.listing(command.path, path, state), None
        if not state.is_file(path):
            raise Refusal(f"The path {command.path} does not exist. Please provide a valid path.")
        return rules.file_view(command.path, state.files[path].text, command.view_range), None

    def create(self, command: Any, call_id: str | None) -> tuple[str, Receipt | None]:
        path = rules.locate(command.path)
        state = self.memory.state()
        if rules.file_above(path, state) is not None:
            raise Refusal(rules.NOT_A_DIRECTORY)
        if rules.exists(path, state):
            raise Refusal(f"File {command.path} already exists")
        with rules.model_value():
            command.file_text.encode("utf-8")
        result = self._run({"command": "create", "path": path, "text": command.file_text}, call_id)
        return f"File created successfully at: {command.path}", result.receipt

    def str_replace(self, command: Any, call_id: str | None) -> tuple[str, Receipt | None]:
        path = self._existing_file(command.path)
        current = self.memory.state().files[path]
        text, answer = rules.replaced(command.path, current.text, command.old_str, command.new_str)
        if command.old_str == "":  # the reference replaces the empty string in an empty file; the port won't
            result = self._checked(
                self.memory.supersede(path, text, expected_digest=current.digest, call_id=call_id)
            )
        else:
            edit = {
                "command": "str_replace",
                "path": path,
                "old_text": command.old_str,
                "new_text": command.new_str,
            }
            result = self._run(edit, call_id)
        return answer, result.receipt

    def insert(self, command: Any, call_id: str | None) -> tuple[str, Receipt | None]:
        path = self._existing_file(command.path)
        current = self.memory.state().files[path]
        text, added = rules.inserted(current.text, command.insert_line, command.insert_text)
        line = operator.index(command.insert_line)
        if rules.port_insert(current.text, line, added) == text:
            result = self._run(
                {"command": "insert", "path": path, "insert_line": line, "text": added}, call_id
            )
        else:
            # The port's insert would differ (it splits lines at \r too and always ends with a line break):
            # write the reference's text as a compare-and-supersede of the file read above.
            superseded = self.memory.supersede(path, text, expected_digest=current.digest, call_id=call_id)
            result = self._checked(superseded)
        return f"The file {command.path} has been edited.", result.receipt

    def delete(self, command: Any, call_id: str | None) -> tuple[str, Receipt | None]:
        path = rules.locate(command.path)
        if path == ROOT:
            raise Refusal("Cannot delete the /memories directory itself")
        if not rules.exists(path, self.memory.state()):
            raise Refusal(f"The path {command.path} does not exist")
        result = self._run({"command": "delete", "path": path}, call_id)
        return f"Successfully deleted {command.path}", result.receipt

    def rename(self, command: Any, call_id: str | None) -> tuple[str, Receipt | None]:
        old, new = rules.locate(command.old_path), rules.locate(command.new_path)
        if old == ROOT:
            raise Refusal("Cannot rename the /memories directory itself")
        state = self.memory.state()
        if rules.exists(new, state):
            raise Refusal(f"The destination {command.new_path} already exists")
        if rules.file_above(old, state) is not None or rules.file_above(new, state) is not None:
            raise Refusal(rules.NOT_A_DIRECTORY)
        if not rules.exists(old, state):
            if is_under(new, old):  # the reference creates `old` while making the new path's parents
                raise Refusal(rules.INVALID_MOVE)
            raise Refusal(f"The path {command.old_path} does not exist")
        if state.is_directory(old) and is_under(new, old):
            raise Refusal(rules.INVALID_MOVE)
        result = self._run({"command": "rename", "old_path": old, "new_path": new}, call_id)
        return f"Successfully renamed {command.old_path} to {command.new_path}", result.receipt

    def clear(self, call_id: str | None) -> tuple[str, Receipt | None]:
        """Tombstone every file, read-only ones included (the host's call: history stays)."""
        state = self.memory.state()
        if not state.files and not state.kept:
            return "All memory cleared", None
        return "All memory cleared", self._checked(self.memory.remove(ROOT, call_id=call_id)).receipt

    # --- helpers -----------------------------------------------------------------------------------

    def _existing_file(self, shown: Any) -> str:
        path = rules.locate(shown)
        state = self.memory.state()
        if not rules.exists(path, state):
            raise Refusal(f"The path {shown} does not exist. Please provide a valid path.")
        if not state.is_file(path):
            raise Refusal(f"The path {shown} is not a file.")
        return path

    def _run(self, command: dict[str, Any], call_id: str | None) -> Result:
        return self._checked(self.memory.execute(command, call_id=call_id))

    @staticmethod
    def _checked(result: Result) -> Result:
        if not result.ok:
            assert result.error is not None
            raise rules.waybook_refusal(result.error.message)
        return result


class _Calls:
    """The calls made since the runtime last took them (thread-safe: async tools run in worker threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[MemoryToolCall] = []

    def run(self, name: str, action: Callable[[], tuple[str, Receipt | None]], call_id: str | None) -> str:
        try:
            text, receipt = action()
        except Refusal as refusal:
            self._add(MemoryToolCall(name, refusal.text, True, None, call_id))
            raise ToolError(refusal.text) from None
        self._add(MemoryToolCall(name, text, False, receipt, call_id))
        return text

    def take(self) -> tuple[MemoryToolCall, ...]:
        with self._lock:
            calls, self._calls = tuple(self._calls), []
        return calls

    def _add(self, call: MemoryToolCall) -> None:
        with self._lock:
            self._calls.append(call)


def _command_name(command: object) -> str:
    with rules.model_value():
        name = command.command  # type: ignore[attr-defined]
    if name not in ("view", "create", "str_replace", "insert", "delete", "rename"):
        raise Refusal(repr(NotImplementedError(f"Unknown command: {name}")))
    return str(name)


_CALL_ID: ContextVar[str | None] = ContextVar("waybook_memory_call_id", default=None)


_WRITTEN_TEXTS: Final = ("file_text", "old_str", "new_str", "insert_text")
"""The fields of the SDK's memory commands that hold text a call writes (or matches, for old_str)."""


class _ToolState:
    """What both tools hold: the Memory port's core and the calls made since the last take. Listed
    first among the bases, so its __init__ hands `cache_control` on to the SDK's tool class."""

    def __init__(
        self,
        memory: Memory,
        *,
        cache_control: BetaCacheControlEphemeralParam | None = None,
        redact: Redact = False,
    ) -> None:
        """`redact` masks secrets in the text a call writes (a file's text, an edit's old and new text, an
        inserted text) before the memory stores it: True with the built-in detector (the one `export
        --redact` uses), or a list of extra regular expressions to mask too (as `Session`'s). The old
        text of an edit is masked too, so it matches the masked file the model was shown."""
        self._mask = secret_mask(redact, who=type(self).__name__)
        super().__init__(cache_control=cache_control)  # type: ignore[call-arg]
        self._core = _Core(memory)
        self._calls = _Calls()

    @property
    def memory(self) -> Memory:
        return self._core.memory

    def take_calls(self) -> tuple[MemoryToolCall, ...]:
        """The calls since the last take, in the order they ran: pair them with the turn's tool_use blocks."""
        return self._calls.take()

    def _planned(self, command: Any) -> tuple[str, Callable[[], tuple[str, Receipt | None]], str | None]:
        """The command's name, the core's action for it (a refusal for an unknown one) and its call id."""
        call_id = _CALL_ID.get()
        try:
            name = _command_name(command)
        except Refusal as refusal:
            return "unknown", partial(_raise, refusal), call_id
        return name, partial(getattr(self._core, name), self._masked(command), call_id), call_id

    def _masked(self, command: Any) -> Any:
        """`command` with the texts it writes masked (`redact=`): a copy of the SDK's command model."""
        if self._mask is None:
            return command
        changes = {}
        for field in _WRITTEN_TEXTS:
            value = getattr(command, field, None)
            if isinstance(value, str) and (masked := self._mask.value(value)) is not value:
                changes[field] = masked
        return command.model_copy(update=changes) if changes else command


class WaybookMemoryTool(_ToolState, BetaAbstractMemoryTool):
    """Anthropic's memory tool, stored in a waybook working-memory journal. One writer at a time."""

    def call(self, input: object, *, call_id: str | None = None) -> str:
        """Run one tool call; `call_id` (the tool_use id) is stored on the record and the receipt."""
        token = _CALL_ID.set(call_id)
        try:
            return str(super().call(input))
        finally:
            _CALL_ID.reset(token)

    def execute(self, command: Any) -> str:
        return self._calls.run(*self._planned(command))

    view = create = str_replace = insert = delete = rename = execute
    """The SDK's command methods: each is `execute`, since every command runs through the one port."""

    def clear_all_memory(self) -> str:
        """Delete every file: tombstones in the journal, so an auditor still sees what was there."""
        return self._calls.run("clear_all_memory", partial(self._core.clear, None), None)


class AsyncWaybookMemoryTool(_ToolState, BetaAsyncAbstractMemoryTool):
    """The async twin: each call runs the port in a worker thread, one call at a time."""

    _lock: anyio.Lock | None = None
    """What keeps calls one at a time; made by the first call, in the event loop that runs it."""

    async def call(self, input: object, *, call_id: str | None = None) -> str:
        """Run one tool call; `call_id` (the tool_use id) is stored on the record and the receipt."""
        token = _CALL_ID.set(call_id)
        try:
            return str(await super().call(input))
        finally:
            _CALL_ID.reset(token)

    async def execute(self, command: Any) -> str:
        return await self._run(*self._planned(command))

    view = create = str_replace = insert = delete = rename = execute
    """The SDK's command methods: each is `execute`, since every command runs through the one port."""

    async def clear_all_memory(self) -> str:
        """Delete every file: tombstones in the journal, so an auditor still sees what was there."""
        return await self._run("clear_all_memory", partial(self._core.clear, None), None)

    async def _run(
        self, name: str, action: Callable[[], tuple[str, Receipt | None]], call_id: str | None
    ) -> str:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            return await anyio.to_thread.run_sync(self._calls.run, name, action, call_id)


def _raise(refusal: Refusal) -> tuple[str, Receipt | None]:
    raise refusal


__all__ = ["AsyncWaybookMemoryTool", "MemoryToolCall", "WaybookMemoryTool"]
