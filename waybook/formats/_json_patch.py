"""A small structural patch between two JSON values, so a foreign codec can restore a source exactly.

A codec maps a foreign entry to a record, derives the entry back from the record alone, and keeps only
the difference (`diff(derived, original)`): fields waybook has no place for, block fields it does not
model, a content string where the derived form is a list, a timestamp in another spelling. Applying the
patch to the derived value gives the original back, with JSON types kept exactly (1 is not 1.0, and
neither is true).

Patch form (a dict, empty when nothing differs): `set` {key: value}, `del` [key], `sub` {key: patch}
for dicts; `items` {index: patch} for lists of the same length. At the top only, `order` {JSON pointer:
[key]} gives the source's key order for each object that would otherwise come out in another order
(see `key_orders`), so a codec that writes JSON as its source did gives the source's bytes back.
"""

from __future__ import annotations

from typing import Any


def same(a: Any, b: Any) -> bool:
    """JSON equality that also compares types: 1, 1.0 and True are three different values."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def diff(derived: Any, original: Any) -> dict[str, Any]:
    """The patch that turns `derived` into `original` (both dicts or both lists of one length)."""
    if isinstance(derived, list):
        items = {
            str(i): diff(d, o) if _nested(d, o) else {"value": o}
            for i, (d, o) in enumerate(zip(derived, original, strict=True))
            if not same(d, o)
        }
        return {"items": items} if items else {}
    patch: dict[str, Any] = {}
    for key, value in original.items():
        if key not in derived:
            patch.setdefault("set", {})[key] = value
        elif not same(derived[key], value):
            if _nested(derived[key], value):
                patch.setdefault("sub", {})[key] = diff(derived[key], value)
            else:
                patch.setdefault("set", {})[key] = value
    gone = [key for key in derived if key not in original]
    if gone:
        patch["del"] = gone
    return patch


def key_orders(produced: Any, original: Any, path: str = "") -> dict[str, list[str]]:
    """Where `produced` (JSON-equal to `original`) lists an object's keys in another order: for each such
    object, its JSON pointer and the original's key order."""
    found: dict[str, list[str]] = {}
    if isinstance(original, dict) and isinstance(produced, dict):
        if list(produced) != list(original):
            found[path] = list(original)
        for key, value in original.items():
            if key in produced:
                found |= key_orders(produced[key], value, f"{path}/{_escape(key)}")
    elif isinstance(original, list) and isinstance(produced, list):
        for index, (ours, theirs) in enumerate(zip(produced, original, strict=False)):
            found |= key_orders(ours, theirs, f"{path}/{index}")
    return found


def reorder(value: Any, orders: dict[str, list[str]], path: str = "") -> Any:
    """`value` with the objects `orders` names (by JSON pointer) given those key orders."""
    if isinstance(value, dict):
        out = {key: reorder(item, orders, f"{path}/{_escape(key)}") for key, item in value.items()}
        order = orders.get(path)
        if isinstance(order, list):
            out = {key: out[key] for key in order if isinstance(key, str) and key in out} | out
        return out
    if isinstance(value, list):
        return [reorder(item, orders, f"{path}/{index}") for index, item in enumerate(value)]
    return value


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def apply(derived: Any, patch: dict[str, Any]) -> Any:
    """`derived` with `patch` applied (a new value; `derived` is not changed)."""
    if not patch:
        return derived
    orders = patch.get("order")
    if isinstance(orders, dict):
        return reorder(apply(derived, {k: v for k, v in patch.items() if k != "order"}), orders)
    if isinstance(derived, list):
        out = list(derived)
        for index, item in patch.get("items", {}).items():
            i = int(index)
            out[i] = item["value"] if "value" in item else apply(out[i], item)
        return out
    result = dict(derived)
    for key in patch.get("del", ()):
        result.pop(key, None)
    for key, sub in patch.get("sub", {}).items():
        result[key] = apply(result[key], sub)
    result.update(patch.get("set", {}))
    return result


def _nested(derived: Any, original: Any) -> bool:
    if isinstance(derived, dict) and isinstance(original, dict):
        return True
    return isinstance(derived, list) and isinstance(original, list) and len(derived) == len(original)
