"""The memory commands as typed values, and strict parsing of a tool's JSON input into them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs
import cattrs

from waybook.journal._roles.memory_paths import MAX_PATH_BYTES
from waybook.memory._copy import exact, items_of


@attrs.frozen
class View:
    path: str
    view_range: tuple[int, int] | None = None


@attrs.frozen
class Create:
    path: str
    text: str
    exclusive: bool = False
    """True: refuse (ALREADY_EXISTS) rather than overwrite a note that exists."""


@attrs.frozen
class StrReplace:
    path: str
    old_text: str
    new_text: str


@attrs.frozen
class Insert:
    path: str
    insert_line: int
    text: str


@attrs.frozen
class Delete:
    path: str


@attrs.frozen
class Rename:
    old_path: str
    new_path: str


@attrs.frozen
class ApplyPatch:
    """One multi-file patch in the Codex `*** Begin Patch` format (paths are `/memories/...`)."""

    patch: str


@attrs.frozen
class UpdateDescription:
    """Set a note's front matter `description`, leaving its body as it is."""

    path: str
    description: str


Command = View | Create | StrReplace | Insert | Delete | Rename | ApplyPatch | UpdateDescription

COMMANDS: Final[dict[str, type]] = {
    "view": View,
    "create": Create,
    "str_replace": StrReplace,
    "insert": Insert,
    "delete": Delete,
    "rename": Rename,
    "apply_patch": ApplyPatch,
    "update_description": UpdateDescription,
}
NAMES: Final = {cls: name for name, cls in COMMANDS.items()}


class CommandError(ValueError):
    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        self.code = code
        self.details = details
        super().__init__(message)


def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"expected a whole number, got {type(value).__name__}"
        raise TypeError(msg)
    copied: int = exact(value)
    return copied


def _strict_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        msg = f"expected a string, got {type(value).__name__}"
        raise TypeError(msg)
    copied: str = exact(value)  # the characters, never a subclass whose methods could lie
    return copied


def _strict_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        msg = f"expected true or false, got {type(value).__name__}"
        raise TypeError(msg)
    return value


def _view_range(value: Any, _: type) -> tuple[int, int] | None:
    if value is None:
        return None
    items = tuple(value) if isinstance(value, list | tuple) else None  # read once
    if items is None or len(items) != 2:
        msg = "view_range must be [start, end]"
        raise TypeError(msg)
    return (_strict_int(items[0], int), _strict_int(items[1], int))


_converter = cattrs.Converter(forbid_extra_keys=True)
_converter.register_structure_hook(int, _strict_int)
_converter.register_structure_hook(str, _strict_str)
_converter.register_structure_hook(bool, _strict_bool)
_converter.register_structure_hook(tuple[int, int] | None, _view_range)


def parse(command: Mapping[str, Any] | Command) -> tuple[str, Command]:
    """(command name, typed command) from a typed command or a tool's JSON object; CommandError if not."""
    if isinstance(
        command, View | Create | StrReplace | Insert | Delete | Rename | ApplyPatch | UpdateDescription
    ):
        # attrs does not check field types: hold a typed command to the same rules as a tool's JSON.
        typed = NAMES[type(command)]
        fields = {f.name: getattr(command, f.name) for f in attrs.fields(type(command))}
        return typed, _structure(typed, fields, type(command))
    items = items_of(command)  # the caller's object read once; everything below reads the copy
    if items is None:
        msg = "a memory command is an object with a `command` field"
        raise CommandError("INVALID_COMMAND", msg)
    fields = dict(items)
    name = fields.pop("command", None)
    cls = COMMANDS.get(name) if isinstance(name, str) else None
    if cls is None or not isinstance(name, str):
        msg = f"unknown command {name!r}; use one of {', '.join(COMMANDS)}"
        raise CommandError("INVALID_COMMAND", msg)
    return name, _structure(name, fields, cls)


def _structure(name: str, fields: dict[str, Any], cls: type) -> Command:
    try:
        parsed: Command = _converter.structure(fields, cls)
    except cattrs.BaseValidationError as exc:
        problems = cattrs.transform_error(exc)
        msg = f"{name}: " + "; ".join(problems)
        raise CommandError("INVALID_ARGUMENT", msg, {"problems": problems}) from None
    return parsed


def check_call_id(call_id: object) -> None:
    """A tool-call id is a string or None, at most MAX_PATH_BYTES in UTF-8 like the port's paths (a
    1 MiB id is refused before anything is written); anything else is the caller's INVALID_ARGUMENT."""
    if call_id is not None and not isinstance(call_id, str):
        msg = f"call_id must be a string (the tool call's id) or None, not {type(call_id).__name__}"
        raise CommandError("INVALID_ARGUMENT", msg)
    if call_id is not None and len(call_id.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        msg = f"call_id is longer than {MAX_PATH_BYTES} bytes (the limit of the port's paths and ids)"
        raise CommandError("INVALID_ARGUMENT", msg)
