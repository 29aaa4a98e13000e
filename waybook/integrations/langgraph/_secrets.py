"""Secrets masked in LangGraph values before the saver serializes them (`WaybookSaver(redact=...)`).

A channel value or a pending write is stored through the serde as opaque bytes, so it is masked as a
Python value first, walking every family LangGraph's serializer (`JsonPlusSerializer`: ormsgpack and
its `_msgpack_default`) stores a string of, in the order it tries them:

- str and its subclasses (stored as a plain string), lists and their subclasses, tuples, dicts and their
  subclasses (OrderedDict, defaultdict, Counter: keys too), sets, frozensets and deques;
- namedtuples (`_make`; LangGraph's `_DeltaSnapshot` is one), pydantic v2 models (LangChain messages and
  every `Serializable`: fields and extra fields), pydantic secret types (`SecretStr`, `SecretBytes`:
  masked whole, the type saying it is a secret), pydantic v1 models (`copy(update=...)`), paths (their
  parts), LangGraph's `Send` (its arg), dataclasses (LangGraph's `Interrupt`, state dataclasses: every
  field the serializer stores, init=False and frozen ones too, set on a copy as the serializer reads
  them), LangGraph's store `Item`, numpy str arrays (a new array of the same shape, as wide as its
  longest masked string), and exceptions (the serializer stores their repr, so a masked one becomes its
  masked repr).

A value with nothing to mask comes back as the very object, so the saver's comparisons of a checkpoint's
lists with its parent's stay cheap; a masked value is a copy of the same type (a str, list or dict
subclass that cannot be copied becomes the plain type, which is what the serializer stores it as), so it
round-trips through the serde as the original would.

What the walk cannot mask (an Enum member whose value holds a secret, a compiled pattern, bytes, a type
it does not know) is caught after serialization: `leaked` reads the serialized bytes (a msgpack value's
strings, a numpy str array's UTF-32 buffer decoded, else the bytes themselves) and names the secrets
still there and the type that holds them; the saver then refuses the value before anything is written
(`UnmaskedSecretError`).
"""

from __future__ import annotations

import copy
import dataclasses
import pathlib
import sys
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import Any, Final

import attrs
import ormsgpack
from langgraph.checkpoint.serde.types import SendProtocol
from langgraph.store.base import Item
from pydantic import BaseModel

from waybook._masking import SecretMask


def masked_value(mask: SecretMask, value: Any) -> Any:
    """`value` with every string in it masked; `value` itself when nothing changed."""
    kind = type(value)
    if kind is str:
        return mask.value(value)
    if kind is list or kind is tuple:
        items = _masked_items(mask, value)
        return value if items is None else (items if kind is list else tuple(items))
    if kind is dict:
        pairs = _masked_pairs(mask, value)
        return value if pairs is None else dict(pairs)
    if value is None or kind is int or kind is float or kind is bool:
        return value
    return _masked_other(mask, value)


def _masked_other(mask: SecretMask, value: Any) -> Any:
    """The families beyond str, list, tuple and dict, in the order LangGraph's serializer tries them."""
    if isinstance(value, Enum):
        return value  # a member cannot be rebuilt with another value: `leaked` catches a secret in one
    if isinstance(value, str):  # ormsgpack stores a str subclass as a plain string
        masked = mask.value(str(value))
        return value if masked == value else _same_type(value, lambda: type(value)(masked), masked)
    if isinstance(value, list):  # stored as a plain array
        masked = _masked_items(mask, value)
        if masked is None:
            return value
        return _same_type(value, lambda: _refilled_list(value, masked), masked)
    if isinstance(value, dict):  # stored as a plain map
        pairs = _masked_pairs(mask, value)
        if pairs is None:
            return value
        return _same_type(value, lambda: _refilled_dict(value, pairs), dict(pairs))
    if isinstance(value, (set, frozenset)):
        items = _masked_items(mask, value)
        return value if items is None else type(value)(items)
    if isinstance(value, deque):
        items = _masked_items(mask, value)
        return value if items is None else deque(items, maxlen=value.maxlen)
    if isinstance(value, tuple) and callable(getattr(value, "_make", None)):  # a namedtuple
        items = _masked_items(mask, value)
        return value if items is None else value._make(items)  # type: ignore[attr-defined]
    if isinstance(value, BaseModel):
        return _masked_model(mask, value)
    if hasattr(value, "get_secret_value") and callable(value.get_secret_value):  # pydantic SecretStr
        return _masked_secret_type(value)
    if _is_pydantic_v1(value):
        changes = _masked_attributes(mask, value, list(value.__dict__))
        return value.copy(update=changes) if changes else value
    if isinstance(value, pathlib.Path):
        parts = _masked_items(mask, value.parts)
        return value if parts is None else type(value)(*parts)
    if isinstance(value, SendProtocol) and not isinstance(value, type):
        return _set_on_copy(value, _masked_attributes(mask, value, ["arg"]))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [field.name for field in dataclasses.fields(value)]
        return _set_on_copy(value, _masked_attributes(mask, value, names))
    if isinstance(value, Item):
        return _set_on_copy(value, _masked_attributes(mask, value, list(Item.__slots__)))
    if _is_numpy_str_array(value):
        return _masked_str_array(mask, value)
    if isinstance(value, BaseException):  # the serializer stores its repr
        shown = repr(value)
        masked = mask.value(shown)
        return value if masked == shown else masked
    return value


SECRET_TYPE_MASK: Final = "[REDACTED:secret-type]"
"""What a pydantic secret type (`SecretStr`, `SecretBytes`) holds once masked: all of it, whatever the
detector finds in it, since its type says it is a secret (the serializer stores the secret in clear)."""


def _masked_secret_type(value: Any) -> Any:
    secret = value.get_secret_value()
    if isinstance(secret, bytes):
        masked: Any = SECRET_TYPE_MASK.encode()
    elif isinstance(secret, str):
        masked = SECRET_TYPE_MASK
    else:
        return value  # not a secret type this walk knows: the check after serialization reads it
    return value if secret == masked else _same_type(value, lambda: type(value)(masked), masked)


def _is_pydantic_v1(value: Any) -> bool:
    """Whether `value` is a pydantic v1 model (none can exist before `pydantic.v1` is imported)."""
    v1 = sys.modules.get("pydantic.v1")
    return v1 is not None and isinstance(value, v1.BaseModel)


def _is_numpy_str_array(value: Any) -> bool:
    """Whether `value` is a numpy array of str (none can exist before numpy is imported)."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray) and value.dtype.kind == "U"


def _masked_str_array(mask: SecretMask, value: Any) -> Any:
    """A numpy str array with its strings masked: a new str array of the same shape and memory order,
    as wide as its longest masked string (the serializer stores the array's buffer)."""
    numpy = sys.modules["numpy"]
    flat = value.ravel(order="A").tolist()
    masked = _masked_items(mask, flat)
    if masked is None:
        return value
    order = "F" if value.flags.f_contiguous and not value.flags.c_contiguous else "C"
    return numpy.array(masked, dtype=str).reshape(value.shape, order=order)


def _masked_items(mask: SecretMask, items: Any) -> list[Any] | None:
    """The items masked, or None when none changed."""
    masked = [masked_value(mask, item) for item in items]
    return None if all(a is b for a, b in zip(masked, items, strict=True)) else masked


def _masked_pairs(mask: SecretMask, value: dict[Any, Any]) -> list[tuple[Any, Any]] | None:
    """The keys and values masked, or None when none changed."""
    pairs = [(masked_value(mask, key), masked_value(mask, item)) for key, item in value.items()]
    unchanged = all(k is k2 and v is v2 for (k, v), (k2, v2) in zip(pairs, value.items(), strict=True))
    return None if unchanged else pairs


def _masked_attributes(mask: SecretMask, value: Any, names: list[str]) -> dict[str, Any]:
    """The attributes among `names` that masking changed, masked."""
    changes = {}
    for name in names:
        field = getattr(value, name, None)
        masked = masked_value(mask, field)
        if masked is not field:
            changes[name] = masked
    return changes


def _masked_model(mask: SecretMask, value: BaseModel) -> BaseModel:
    """A pydantic v2 model with its fields and extra fields masked (what `model_dump` stores)."""
    names = [*type(value).model_fields, *(value.model_extra or {})]
    changes = _masked_attributes(mask, value, names)
    return value.model_copy(update=changes) if changes else value


def _set_on_copy(value: Any, changes: dict[str, Any]) -> Any:
    """A shallow copy of `value` with `changes` set as the serializer reads them (by attribute), frozen
    dataclasses and init=False fields included; `value` itself without changes."""
    if not changes:
        return value
    masked = copy.copy(value)
    for name, item in changes.items():
        object.__setattr__(masked, name, item)
    return masked


def _same_type(value: Any, rebuild: Callable[[], Any], plain: Any) -> Any:
    """`rebuild()` (a copy of `value`'s own type), or `plain` when the type cannot be copied so."""
    try:
        return rebuild()
    except Exception:  # a subclass whose constructor or copy wants more: the serializer stores it plain
        return plain


def _refilled_list(value: list[Any], items: list[Any]) -> list[Any]:
    masked = copy.copy(value)
    masked[:] = items
    return masked


def _refilled_dict(value: dict[Any, Any], pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    masked = copy.copy(value)  # keeps a defaultdict's factory, an OrderedDict's order
    masked.clear()
    masked.update(pairs)
    return masked


# --- the check after serialization ------------------------------------------------------------------


@attrs.frozen
class Leak:
    """Secrets found in a serialized value: their kinds, and the type that held them (the innermost
    type the serializer named, else the value's own)."""

    kinds: tuple[str, ...]
    holder: str


@attrs.frozen
class _Named:
    """A msgpack extension as read back for the check: the type it names and what it stores."""

    name: str
    payload: Any


_EXT_DELTA_SNAPSHOT: Final = 7
_EXT_NUMPY_ARRAY: Final = 6


def leaked(mask: SecretMask, kind: str, data: bytes, value: Any) -> Leak | None:
    """The secrets the detector still finds in `value` as serialized (`kind`, `data`), or None.

    A msgpack value is read back to its strings (each type the serializer named kept as the holder of
    its own strings): its bytes cannot be scanned as they are, since a string's length prefix before a
    token can be a letter or digit, which the detector takes for the token's left neighbour. Any other
    kind (bytes, JSON, pickle), or msgpack that does not read back, is scanned as its bytes."""
    if not data:
        return None
    strings: list[tuple[str, str]] = []
    if kind == "msgpack":
        try:
            _collect(_read(data), _type_name(value), strings)
        except (ormsgpack.MsgpackDecodeError, RecursionError):  # a serde of its own: its bytes as they are
            strings = []
    if not strings:
        strings = [(data.decode("latin-1"), _type_name(value))]
    found = mask.secrets_in([text for text, _ in strings])
    if not found:
        return None
    holder = next((owner for text, owner in strings if mask.secrets_in([text])), _type_name(value))
    return Leak(tuple(found), holder)


def _read(data: bytes) -> Any:
    def named(code: int, payload: bytes) -> Any:
        inner = ormsgpack.unpackb(payload, ext_hook=named, option=ormsgpack.OPT_NON_STR_KEYS)
        if code == _EXT_NUMPY_ARRAY:
            return _array_strings(inner)
        if code == _EXT_DELTA_SNAPSHOT:
            return inner
        if type(inner) is list and len(inner) >= 3 and type(inner[0]) is str and type(inner[1]) is str:
            return _Named(f"{inner[0]}.{inner[1]}", inner[2:])
        return inner

    return ormsgpack.unpackb(data, ext_hook=named, option=ormsgpack.OPT_NON_STR_KEYS)


def _array_strings(stored: Any) -> Any:
    """A numpy array as the serializer stores it (dtype, shape, order, buffer): a str array's strings
    (its buffer holds each as fixed-width UTF-32, which no scan of the bytes would read), else what it
    stores."""
    if type(stored) is not list or len(stored) != 4:
        return stored
    dtype, _shape, _order, buffer = stored
    if type(dtype) is not str or type(buffer) is not bytes:
        return stored
    if len(dtype) < 3 or dtype[1] != "U" or not dtype[2:].isdigit() or dtype[0] not in "<>":
        return stored
    width = int(dtype[2:]) * 4
    codec = "utf-32-le" if dtype[0] == "<" else "utf-32-be"
    if not width or len(buffer) % width:
        return stored
    try:
        return [buffer[at : at + width].decode(codec).rstrip("\x00") for at in range(0, len(buffer), width)]
    except UnicodeDecodeError:
        return stored


def _collect(value: Any, owner: str, out: list[tuple[str, str]]) -> None:
    kind = type(value)
    if kind is str:
        out.append((value, owner))
    elif kind is list:
        for item in value:
            _collect(item, owner, out)
    elif kind is dict:
        for key, item in value.items():
            _collect(key, owner, out)
            _collect(item, owner, out)
    elif kind is _Named:
        _collect(value.payload, value.name, out)
    elif kind is bytes:
        out.append((value.decode("latin-1"), owner))


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


@attrs.frozen
class CheckedSerde:
    """The saver's serde with `leaked` run over every value it serializes: a value still holding a secret
    goes to `refuse` (which raises) before its bytes go anywhere. With LangGraph's encrypting serializer
    the check reads the bytes it encrypts (the ciphertext would show nothing), so the value is still
    serialized once."""

    serde: Any
    mask: SecretMask
    refuse: Callable[[Leak], None]

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        cipher = _cipher_of(self.serde)
        if cipher is None:
            kind, data = self.serde.dumps_typed(obj)
            self._check(kind, data, obj)
            return kind, data
        kind, data = self.serde.serde.dumps_typed(obj)  # what EncryptedSerializer.dumps_typed does
        self._check(kind, data, obj)
        name, ciphertext = cipher.encrypt(data)
        return f"{kind}+{name}", ciphertext

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.serde.loads_typed(data)

    def _check(self, kind: str, data: bytes, value: Any) -> None:
        leak = leaked(self.mask, kind, data, value)
        if leak is not None:
            self.refuse(leak)


def _cipher_of(serde: Any) -> Any:
    """The cipher of LangGraph's own encrypting serializer (its dumps_typed not overridden), else None."""
    try:
        from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
    except ImportError:  # pragma: no cover - every LangGraph the extra installs has it
        return None
    if isinstance(serde, EncryptedSerializer) and type(serde).dumps_typed is EncryptedSerializer.dumps_typed:
        return serde.cipher
    return None
