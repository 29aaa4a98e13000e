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
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

import waybook
from waybook.integrations.errors import MissingExtraError

SNAPSHOT = Path(__file__).with_name("public_api.txt")
ARCHITECTURE = Path(__file__).parents[1] / "docs" / "architecture.md"
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


def kept_paths() -> dict[str, str]:
    """docs/architecture.md's "Kept paths": each moved module's old documented path, and where it went."""
    section = ARCHITECTURE.read_text().split("## Kept paths", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^- `(waybook[\w.]*)` -> `(waybook[\w.]*)`", section, re.M))


def two_faces(exports: Mapping[str, Mapping[str, object]], aliases: Mapping[str, str]) -> list[str]:
    """Each object exported by two faces (module -> its `__all__`'s names and objects) where neither is
    a package gathering its descendant's names, nor a kept path (an alias of its module whole)."""
    faces: dict[tuple[str, int], list[str]] = {}
    for module, names in exports.items():
        if module not in aliases:
            for name, value in names.items():
                faces.setdefault((name, id(value)), []).append(module)
    found = []
    for (name, _), modules in sorted(faces.items()):
        unrelated = [
            (a, b)
            for a in modules
            for b in modules
            if a < b and not b.startswith(a + ".") and not a.startswith(b + ".")
        ]
        found.extend(f"{name}: {a} and {b}" for a, b in unrelated)
    return found


def public_exports() -> dict[str, dict[str, object]]:
    exports = {}
    for name in public_modules():
        try:
            module = importlib.import_module(name)
        except MissingExtraError:
            continue  # its runtime's suite runs this test where it is installed
        exports[name] = {item: getattr(module, item) for item in getattr(module, "__all__", [])}
    return exports


def test_each_public_name_has_one_face() -> None:
    found = two_faces(public_exports(), kept_paths())
    assert not found, (
        "a name exported by two faces (docs/architecture.md, 'One face per name'): keep it in one "
        "__all__ and run `python scripts/one_face.py` to move the imports:\n" + "\n".join(found)
    )


def test_a_kept_path_is_its_module_whole_under_the_old_name() -> None:
    exports = public_exports()
    assert kept_paths(), "docs/architecture.md lists no kept paths: the parser lost them"
    for old, new in kept_paths().items():
        assert exports[old] == exports[new], f"{old} must re-export {new} whole (docs/architecture.md)"


class _Record:
    pass


def test_two_sibling_faces_of_one_object_are_found_and_a_gathering_parent_or_kept_path_is_not() -> None:
    record, other = _Record(), _Record()
    exports = {
        "waybook": {"Record": record},  # the root gathers its descendants' everyday names
        "waybook.model": {"Record": record},
        "waybook.journal": {"Record": record, "verify": other},
        "waybook.memory.old": {"Record": record},  # a kept path
        "waybook.formats.pi": {"import_folder": record},  # one name, two objects: two things
        "waybook.formats.codex": {"import_folder": other},
    }
    assert two_faces(exports, {"waybook.memory.old": "waybook.model"}) == [
        "Record: waybook.journal and waybook.model"
    ]
