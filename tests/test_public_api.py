"""The public surface is a list you can read: every public module's `__all__`, snapshotted.

A public module is one whose dotted path has no part starting with `_` (the CLI's own modules are the
CLI's, not a Python surface). A change to the list is a change to the snapshot file, made on purpose:
`WAYBOOK_UPDATE_SNAPSHOT=1 python -m pytest tests/test_public_api.py` rewrites it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import pkgutil
from pathlib import Path

import pytest

import waybook
from waybook.integrations.errors import MissingExtraError

SNAPSHOT = Path(__file__).with_name("public_api.txt")
CLI_MODULES = ("waybook.cli", "waybook.__main__", "waybook.commands")


def public_modules() -> list[str]:
    found = ["waybook"]
    for info in pkgutil.walk_packages(waybook.__path__, "waybook."):
        parts = info.name.split(".")[1:]
        if any(part.startswith("_") for part in parts) or info.name.startswith(CLI_MODULES):
            continue
        found.append(info.name)
    return sorted(found)


def declared(name: str) -> list[str] | None:
    """`name`'s `__all__` as its source writes it (read, not imported: a runtime's adapter is listed
    whether or not that runtime is installed here)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None
    assert spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text())
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            return [ast.literal_eval(element) for element in node.value.elts]  # type: ignore[attr-defined]
        if isinstance(node, ast.ImportFrom) and any(a.name == "__all__" for a in node.names) and node.module:
            return declared(node.module)
    return None


def surface() -> list[str]:
    lines = []
    for name in public_modules():
        lines.extend(f"{name}: {item}" for item in sorted(declared(name) or ["<no __all__>"]))
    return lines


def test_the_public_surface_is_the_snapshot() -> None:
    now = surface()
    if os.environ.get("WAYBOOK_UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.write_text("\n".join(now) + "\n")
    assert now == SNAPSHOT.read_text().splitlines()


@pytest.mark.parametrize("name", public_modules())
def test_every_public_module_says_what_it_exports_and_every_name_resolves(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except MissingExtraError as missing:
        pytest.skip(str(missing))  # its runtime runs in its own suite (README, "Longer suites")
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert len(set(exported)) == len(exported), f"{name}.__all__ lists a name twice"
    for item in exported:
        assert hasattr(module, item), f"{name}.__all__ names {item!r}, which {name} does not define"
        assert not item.startswith("_") or item == "__version__", f"{name} exports a private name {item!r}"
