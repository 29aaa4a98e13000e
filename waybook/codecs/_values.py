"""Application value codecs: an application's own typed values, stored under stable wire tags.

A runtime keeps its own values in custom entries (a plan, a task state, a tool's structured result).
Reflecting a class onto the wire would make every refactor a storage migration, so each value type is
registered explicitly: a stable wire tag (`myapp.plan/2`), stable wire field names mapped to the class's
current attributes, and upcasters from the tag's earlier versions. cattrs does the mapping.

On the wire a value is a JSON object with exactly two members, inside a custom entry's `data`:

    {"$value":"myapp.plan/2","fields":{"goal":"ship","value":3}}

Both directions fail closed: an object whose class is not registered is refused before anything is
written (UnregisteredValueError), at any depth: a registered value's attribute holding an attrs class or
dataclass that is not registered is refused too, never written from its attribute names; a tag nobody
registered is a typed error where code asks for the class (`decode_value`, UnknownValueTagError) and a
typed `OpaqueValue` where a tool only shows it (`read_value`). An attribute typed `object` or `Any` holds
JSON data or registered values (stored with their tags, so they read back as their classes). Every
error of the mapping library (cattrs) surfaces as one of these.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from waybook.model import InvalidRecordError, JournalError, UnknownTagError, WrongTypeError

__all__ = [
    "VALUE_KEY",
    "NotJsonDataError",
    "OpaqueValue",
    "UnknownValueTagError",
    "UnregisteredValueError",
    "ValueRegistry",
    "decode_value",
    "encode_value",
    "is_value",
    "read_value",
    "register_value",
]

VALUE_KEY: Final = "$value"
"""The member naming a value's tag; its sibling `fields` holds the wire fields."""

VALUE_TAG: Final = re.compile(r"([a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)+)/([1-9][0-9]*)")
"""`namespace.name/version`: at least one dot, so an application's tags never collide with bare words."""

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
"""Lifts the wire fields of version n to the wire fields of version n + 1 (pure)."""


class NotJsonDataError(InvalidRecordError):
    """A value given to be stored is not JSON data: NaN or an infinity, a dict key that is not a str, an
    object of a class with no registered value codec (UnregisteredValueError), data nested too deeply.
    `path` names where it sits in the record's body (`data.steps[0]`, `content[1].arguments.when`).
    Nothing was written."""

    def __init__(
        self, message: str, *, path: str = "", journal: str = "", record_id: str | None = None
    ) -> None:
        super().__init__(message, journal=journal, record_id=record_id)
        self.path = path
        self.reason = message


class UnregisteredValueError(NotJsonDataError):
    """An object whose class has no registered value codec was given to be stored. Nothing was written.

    Register the class with `waybook.codecs.register_value(cls, "myapp.name/1")`, or pass JSON data.
    """


class UnknownValueTagError(UnregisteredValueError, UnknownTagError):
    """Stored data names a value tag no codec is registered for (or is not a value at all).

    Code that asks for the class gets this; tools that only show values use `read_value`, which returns
    an `OpaqueValue` instead.
    """

    def __init__(self, reason: str, *, tag: str | None = None) -> None:
        UnknownTagError.__init__(self, reason, tag=tag, field="$.data")
        self.journal = ""
        self.record_id = None
        self.path = "data"


@attrs.frozen
class OpaqueValue:
    """A stored value whose tag this process has no codec for: its tag and wire fields, as data."""

    tag: str
    fields: Mapping[str, Any]

    def __str__(self) -> str:
        return f"{self.tag} (no codec registered) {dict(self.fields)}"


@attrs.frozen
class _Codec:
    cls: type
    tag: str
    name: str
    version: int
    upcasters: Mapping[int, Upcaster]
    unstructure: Callable[[Any], dict[str, Any]]
    structure: Callable[[Mapping[str, Any]], Any]


def _split_tag(tag: object, what: str = "tag") -> tuple[str, int]:
    match = VALUE_TAG.fullmatch(tag) if isinstance(tag, str) else None
    if match is None:
        msg = f"a value {what} is 'namespace.name/version' (like 'myapp.plan/2'), not {tag!r}"
        raise InvalidRecordError(msg)
    if match.group(1).split(".", 1)[0] == "waybook":
        msg = f"value tag {tag!r}: the 'waybook' namespace is waybook's own; use your application's name"
        raise InvalidRecordError(msg)
    return match.group(1), int(match.group(2))


class ValueRegistry:
    """Value codecs by tag and by class. Thread-safe; `waybook.codecs.register_value` uses the default one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_tag: dict[str, _Codec] = {}
        self._by_name: dict[str, _Codec] = {}
        self._by_cls: dict[type, _Codec] = {}
        self._converter = converter = cattrs.Converter(forbid_extra_keys=True)
        # A class nested in a registered value is written by its own codec, looked up when the value is
        # (so the classes register in any order); one with none is refused, never reflected.
        converter.register_unstructure_hook_factory(_is_record_class, lambda _t: self._nested_to_wire)
        converter.register_structure_hook_factory(_is_record_class, lambda t: self._nested_from_wire)
        converter.register_unstructure_hook_func(_is_anything, self._any_to_wire)
        converter.register_structure_hook_func(_is_anything, self._any_from_wire)

    def register(
        self,
        cls: type,
        tag: str,
        *,
        fields: Mapping[str, str] | None = None,
        upcasters: Mapping[str, Upcaster] | None = None,
        unstructure: Callable[[Any], dict[str, Any]] | None = None,
        structure: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> None:
        """Store instances of the attrs class `cls` under `tag`, with `fields` mapping each wire field name
        to the attribute that holds it now (attributes left out keep their own name on the wire) and
        `upcasters` lifting each earlier version of the tag (`"myapp.plan/1"`) to the next one.

        A class that is not an attrs class gives its own hook pair instead of `fields`: `unstructure`
        (value -> wire fields) and `structure` (wire fields -> value), as cattrs hooks do.

        Registering the same class under the same tag again is a no-op; anything else that reuses a tag,
        a tag's name or a class raises InvalidRecordError.
        """
        name, version = _split_tag(tag)
        hooks = (unstructure, structure)
        if hooks != (None, None) and (not all(callable(h) for h in hooks) or fields is not None):
            msg = f"value tag {tag!r}: give both unstructure= and structure= (and no fields=), or neither"
            raise InvalidRecordError(msg)
        if not isinstance(cls, type) or (hooks == (None, None) and not attrs.has(cls)):
            msg = f"register_value takes an attrs class (or a class and its hook pair), not {cls!r}"
            raise InvalidRecordError(msg)
        renames = _renames(cls, tag, fields) if unstructure is None else {}
        lifts = _upcasters(name, version, upcasters)
        with self._lock:
            known = self._by_cls.get(cls)
            if known is not None and known.tag == tag and self._by_tag.get(tag) is known:
                return
            if known is not None:
                msg = f"{cls.__qualname__} is already registered as {known.tag!r}; one class, one tag"
                raise InvalidRecordError(msg)
            if name in self._by_name:
                taken = self._by_name[name]
                msg = (
                    f"value tag {tag!r}: {taken.tag!r} is already registered for "
                    f"{taken.cls.__qualname__}; a new version replaces it in a new registry (a new process)"
                )
                raise InvalidRecordError(msg)
            if unstructure is None or structure is None:
                to_wire, from_wire = _generated(self._converter, cls, tag, renames)
                self._converter.register_unstructure_hook(cls, to_wire)
                self._converter.register_structure_hook(cls, from_wire)
                codec = _Codec(cls, tag, name, version, lifts, to_wire, lambda data: from_wire(data, cls))
            else:
                self._converter.register_unstructure_hook(cls, unstructure)
                self._converter.register_structure_hook(cls, lambda data, _t: structure(data))
                codec = _Codec(cls, tag, name, version, lifts, unstructure, structure)
            self._by_tag[tag] = self._by_name[name] = self._by_cls[cls] = codec

    def tag_of(self, cls: type) -> str | None:
        codec = self._by_cls.get(cls)
        return None if codec is None else codec.tag

    def encode(self, value: object) -> dict[str, Any]:
        """The wire form of a registered value; UnregisteredValueError for any other object, and for a
        registered value holding (at any depth) an attrs class or dataclass with no codec, naming the
        path to it (`steps[0]`). An error of the value's codec is an InvalidRecordError."""
        codec = self._by_cls.get(type(value))
        if codec is None:
            msg = (
                f"no value codec is registered for {type(value).__qualname__}; register it with "
                "waybook.codecs.register_value(cls, 'myapp.name/1') or pass JSON data; nothing was written"
            )
            raise UnregisteredValueError(msg)
        try:
            fields = codec.unstructure(value)
        except _NestedUnregistered as nested:
            path = _locate(value, nested.value, "") or ""
            name = type(nested.value).__qualname__
            msg = (
                f"{type(value).__qualname__} holds a {name} at {path or 'an attribute'}, and {name} has no "
                f"registered value codec: register it too (waybook.codecs.register_value({name}, "
                "'myapp.name/1')); a class is never stored by its attribute names; nothing was written"
            )
            raise UnregisteredValueError(msg, path=path) from None
        except JournalError:
            raise
        except (cattrs.errors.CattrsError, AttributeError, KeyError, TypeError, ValueError) as exc:
            msg = f"the codec of {codec.tag!r} could not encode a {type(value).__qualname__}: {exc}"
            raise InvalidRecordError(msg + "; nothing was written") from exc
        return {VALUE_KEY: codec.tag, "fields": fields}

    def _nested_to_wire(self, value: object) -> Any:
        """A class nested in a registered value: its codec's wire fields, or refused."""
        codec = self._by_cls.get(type(value))
        if codec is None:
            raise _NestedUnregistered(value)
        return codec.unstructure(value)

    def _nested_from_wire(self, data: Any, cls: type) -> Any:
        codec = self._by_cls.get(cls)
        if codec is None:
            msg = f"{cls.__qualname__} has no registered value codec; register it to read it"
            raise UnknownValueTagError(msg)
        return codec.structure(data)

    def _any_to_wire(self, value: Any) -> Any:
        """What an attribute typed `object` or `Any` holds: JSON data as it is, registered values as
        their wire form (tag and fields, so they read back as their classes)."""
        if type(value) in self._by_cls:
            return self.encode(value)
        if isinstance(value, dict):
            return {key: self._any_to_wire(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._any_to_wire(item) for item in value]
        if _is_record_class(type(value)):
            raise _NestedUnregistered(value)
        return value  # anything else is judged where the record is sealed (waybook.codecs._json_data)

    def _any_from_wire(self, data: Any, _cls: object) -> Any:
        if is_value(data):
            return self.decode(data)
        if isinstance(data, dict):
            return {key: self._any_from_wire(item, None) for key, item in data.items()}
        if isinstance(data, list):
            return [self._any_from_wire(item, None) for item in data]
        return data

    def decode(self, data: object) -> Any:
        """The value `data` holds, as an instance of its class today; UnknownValueTagError for a tag no
        codec is registered for, WrongTypeError for fields that do not fit."""
        tag, wire = _envelope(data)
        name, version = _split_tag(tag)
        codec = self._by_name.get(name)
        if codec is None or version > codec.version:
            have = f" (this process knows {codec.tag!r})" if codec else ""
            msg = f"no value codec is registered for tag {tag!r}{have}; register its class to read it"
            raise UnknownValueTagError(msg, tag=tag)
        fields = dict(wire)
        for step in range(version, codec.version):
            lift = codec.upcasters.get(step)
            if lift is None:
                msg = f"value tag {tag!r}: no upcaster from version {step} to {step + 1} is registered"
                raise UnknownValueTagError(msg, tag=tag)
            fields = lift(fields)
        try:
            return codec.structure(fields)
        except JournalError:
            raise
        except (cattrs.errors.CattrsError, AttributeError, KeyError, TypeError, ValueError) as exc:
            reason = _structure_reason(exc)
            msg = f"value {tag!r} does not fit {codec.cls.__qualname__}: {reason}"
            raise WrongTypeError(msg, tag=tag, field="$.data.fields") from None

    def read(self, data: object) -> Any:
        """Like `decode`, but a tag without a codec reads as an OpaqueValue (for tools that show values)."""
        try:
            return self.decode(data)
        except UnknownValueTagError:
            tag, wire = _envelope(data)
            return OpaqueValue(tag, dict(wire))


class _NestedUnregistered(Exception):  # noqa: N818 (internal: becomes UnregisteredValueError)
    """Raised from inside cattrs for a nested object with no codec; `encode` names the path to it."""

    def __init__(self, value: object) -> None:
        super().__init__(type(value).__qualname__)
        self.value = value


def _is_record_class(cls: Any) -> bool:
    """Classes cattrs would otherwise reflect onto the wire by their attribute names."""
    return isinstance(cls, type) and (attrs.has(cls) or dataclasses.is_dataclass(cls))


def _is_anything(cls: Any) -> bool:
    return cls is Any or cls is object


def _generated(
    converter: cattrs.Converter, cls: type, tag: str, renames: Mapping[str, str]
) -> tuple[Callable[[Any], dict[str, Any]], Callable[[Mapping[str, Any], Any], Any]]:
    """cattrs' hook pair for an attrs class, or InvalidRecordError naming the attribute it cannot map."""
    overrides = {attr: override(rename=wire) for attr, wire in renames.items()}
    try:
        to_wire: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(
            cls,
            converter,
            **overrides,  # type: ignore[arg-type]
        )
        from_wire: Callable[[Mapping[str, Any], Any], Any] = make_dict_structure_fn(
            cls,
            converter,
            _cattrs_forbid_extra_keys=True,
            **overrides,  # type: ignore[arg-type]
        )
    except (cattrs.errors.CattrsError, TypeError, ValueError, AttributeError, NameError) as exc:
        unmapped = getattr(exc, "type_", None)
        where = ""
        named = [a.name for a in attrs.fields(cls) if a.type is unmapped or unmapped in _args(a.type)]
        if unmapped is not None and named:
            where = f" attribute {named[0]!r} has type {getattr(unmapped, '__qualname__', unmapped)},"
        msg = (
            f"value tag {tag!r}: {cls.__qualname__} cannot be mapped:{where} which no codec maps "
            f"({exc}); register a codec for that type first (register_value with unstructure= and "
            "structure=), or store it as JSON data (a str, a number)"
        )
        raise InvalidRecordError(msg) from exc
    return to_wire, from_wire


def _args(annotation: object) -> tuple[object, ...]:
    """Every type an annotation names, at any depth (`list[dict[str, datetime]]` names datetime)."""
    found: list[object] = []
    stack = [annotation]
    while stack:
        item = stack.pop()
        for arg in getattr(item, "__args__", ()) or ():
            found.append(arg)
            stack.append(arg)
    return tuple(found)


def _locate(value: object, target: object, path: str, depth: int = 0) -> str | None:
    """The path from `value` to the object `target` (attributes, keys, indexes), if it is inside it."""
    if value is target and path:
        return path
    if depth > 100:
        return None
    if _is_record_class(type(value)):
        kind: Any = type(value)
        names = (
            [a.name for a in attrs.fields(kind)]
            if attrs.has(kind)
            else [f.name for f in dataclasses.fields(kind)]
        )
        items: list[tuple[str, object]] = [
            (f"{path}.{name}" if path else name, getattr(value, name, None)) for name in names
        ]
    elif isinstance(value, Mapping):
        items = [(f"{path}[{key!r}]", item) for key, item in value.items()]
    elif isinstance(value, list | tuple | set | frozenset):
        items = [(f"{path}[{index}]", item) for index, item in enumerate(value)]
    else:
        return None
    for where, item in items:
        found = _locate(item, target, where, depth + 1)
        if found is not None:
            return found
    return None


def _renames(cls: type, tag: str, fields: Mapping[str, str] | None) -> dict[str, str]:
    """attribute -> wire name for every attribute of `cls`, from the wire -> attribute map given."""
    attributes = [a.name for a in attrs.fields(cls) if a.init]
    renames = {name: name for name in attributes}
    if fields is None:
        return renames
    wires = set(attributes) - set(fields.values())
    for wire, attribute in fields.items():
        if not isinstance(wire, str) or not wire or attribute not in renames:
            msg = (
                f"value tag {tag!r}: fields maps wire names to attributes of {cls.__qualname__} "
                f"({attributes}); {wire!r} -> {attribute!r} is not one"
            )
            raise InvalidRecordError(msg)
        if wire in wires:
            msg = f"value tag {tag!r}: wire name {wire!r} is given to two attributes"
            raise InvalidRecordError(msg)
        wires.add(wire)
        renames[attribute] = wire
    return renames


def _upcasters(name: str, version: int, upcasters: Mapping[str, Upcaster] | None) -> dict[int, Upcaster]:
    lifts: dict[int, Upcaster] = {}
    for old, lift in (upcasters or {}).items():
        old_name, old_version = _split_tag(old, "upcaster tag")
        if old_name != name or old_version >= version or not callable(lift):
            msg = f"upcasters of {name}/{version} are earlier versions of it mapped to functions, not {old!r}"
            raise InvalidRecordError(msg)
        lifts[old_version] = lift
    return lifts


def _envelope(data: object) -> tuple[str, Mapping[str, Any]]:
    if not is_value(data):
        msg = f"the data is not a stored value (an object with {VALUE_KEY!r} and 'fields'): {data!r:.80}"
        raise UnknownValueTagError(msg)
    assert isinstance(data, Mapping)
    return data[VALUE_KEY], data["fields"]


def _structure_reason(exc: Exception) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        notes = [str(e) for e in exc.exceptions]
        return "; ".join(notes) or str(exc)
    return f"{type(exc).__name__}: {exc}"


def is_value(data: object) -> bool:
    """Whether `data` has the shape of a stored value (its tag may still be unknown)."""
    return (
        isinstance(data, Mapping)
        and len(data) == 2
        and isinstance(data.get(VALUE_KEY), str)
        and isinstance(data.get("fields"), Mapping)
    )


DEFAULT_REGISTRY: Final = ValueRegistry()


register_value: Final = DEFAULT_REGISTRY.register
"""Register a class in the default registry: `ValueRegistry.register`, whose arguments it takes."""


def encode_value(value: object) -> dict[str, Any]:
    return DEFAULT_REGISTRY.encode(value)


def decode_value(data: object) -> Any:
    """The current class's instance for a registered tag (default registry; `ValueRegistry.decode`)."""
    return DEFAULT_REGISTRY.decode(data)


def read_value(data: object) -> Any:
    return DEFAULT_REGISTRY.read(data)
