"""The layering in docs/architecture.md is a fact the tests keep: no import runs upward, none closes a circle,
a private room is entered only from inside its package (or by an import listed with its reason), and a
private room with a face of its own (the JSONL adapter's wing) is imported only by those listed.

The contracts live in pyproject.toml (import-linter); these tests run them, check that they list the
layers the page draws, and prove that each check fails on a planted violation.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """Run import-linter on the `waybook` package found under `root`, with root's pyproject.toml."""
    program = (
        "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    )
    return subprocess.run(
        [sys.executable, "-c", program, "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


GRAPH_PROGRAM = """
import json, grimp
graph = grimp.build_graph("waybook", cache_dir=None)
print(json.dumps({m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}))
"""


def package_imports(root: Path) -> dict[str, set[str]]:
    """Which module imports which, for the `waybook` under `root` (read in a fresh interpreter, so the
    package this test runs from is not the one measured)."""
    result = subprocess.run(
        [sys.executable, "-c", GRAPH_PROGRAM],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {module: set(imported) for module, imported in json.loads(result.stdout).items()}


def bench_imports(root: Path) -> dict[str, set[str]]:
    """bench/ is a folder of scripts that import each other by module name."""
    names = {p.stem for p in (root / "bench").glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in (root / "bench").glob("*.py"):
        tree = ast.parse(path.read_text())
        used = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                used.add(node.module.removeprefix("bench."))
            elif isinstance(node, ast.Import):
                used.update(alias.name.removeprefix("bench.") for alias in node.names)
        graph[path.stem] = used & names
    return graph


def planted_copy(tmp_path: Path, plants: Mapping[str, str]) -> Path:
    copy = tmp_path / "house"
    shutil.copytree(ROOT / "waybook", copy / "waybook", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    for relative, text in plants.items():
        (copy / relative).write_text(text)
    return copy


def test_the_contracts_list_the_layers_the_architecture_page_draws() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    drawn = re.search(r"## The layers, top to bottom\n\n```text\n(.*?)```", page, re.DOTALL)
    assert drawn, "docs/architecture.md has no block of layers under 'The layers, top to bottom'"
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    contract = next(c for c in config if c["id"] == "layers")
    assert contract["containers"] == ["waybook"]
    layers = [
        " | ".join(f"waybook.{room.strip()}" for room in layer.split("|")) for layer in contract["layers"]
    ]
    assert drawn.group(1).split("\n")[:-1] == layers


def test_the_architecture_table_has_one_row_per_room_of_the_layers_in_their_order() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    table = re.search(r"\| layer \| owns \| may import \|\n\| --- .*?\n((?:\|.*\n)+)", page)
    assert table, "docs/architecture.md has no table of layers (| layer | owns | may import |)"
    rows = [re.findall(r"`([^`]+)`", row.split("|")[1]) for row in table.group(1).splitlines()]
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    contract = next(c for c in config if c["id"] == "layers")
    layer_of = {
        room.strip(): depth for depth, layer in enumerate(contract["layers"]) for room in layer.split("|")
    }
    listed = [room for row in rows for room in row]
    assert sorted(listed) == sorted(layer_of)
    depths = [layer_of[room] for room in listed]
    assert depths == sorted(depths), "the table's rows go top to bottom, as the layers do"


def test_no_import_runs_against_the_layers() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken" in result.stdout


def test_no_module_of_waybook_or_bench_is_in_an_import_circle() -> None:
    assert circles(package_imports(ROOT)) == []
    assert circles(bench_imports(ROOT)) == []


def test_an_upward_import_planted_in_the_model_breaks_the_layers(tmp_path: Path) -> None:
    house = planted_copy(tmp_path, {"waybook/model/_planted.py": "import waybook.commands\n"})
    result = lint_imports(house)
    assert result.returncode != 0
    assert "waybook.model._planted -> waybook.commands" in result.stdout


@pytest.mark.parametrize(
    ("planted", "container"),
    [("waybook/_planted.py", "waybook"), ("waybook/memory/_planted.py", "waybook.memory")],
)
def test_a_room_with_no_layer_breaks_the_exhaustive_layers(
    tmp_path: Path, planted: str, container: str
) -> None:
    result = lint_imports(planted_copy(tmp_path, {planted: '"""A new room nobody placed."""\n'}))
    assert result.returncode != 0
    assert f"{container}._planted" in result.stdout


def test_a_session_writer_that_imports_an_adapter_class_breaks_its_contract(tmp_path: Path) -> None:
    core = (ROOT / "waybook" / "_session_core.py").read_text()
    planted = core + "\nfrom waybook.journal._in_memory import InMemoryJournal  # an isinstance fast path\n"
    result = lint_imports(planted_copy(tmp_path, {"waybook/_session_core.py": planted}))
    assert result.returncode != 0
    assert "waybook._session_core -> waybook.journal._in_memory" in result.stdout


def test_a_planted_circle_is_found(tmp_path: Path) -> None:
    house = planted_copy(
        tmp_path,
        {
            "waybook/projections/_planted_a.py": "from waybook.projections import _planted_b\n",
            "waybook/projections/_planted_b.py": "from waybook.projections import _planted_a\n",
        },
    )
    assert ["waybook.projections._planted_a", "waybook.projections._planted_b"] in circles(
        package_imports(house)
    )


def test_two_sibling_packages_importing_each_other_break_the_acyclic_siblings_contract(
    tmp_path: Path,
) -> None:
    # memory and search sit on one layer, so the layers contract allows either direction; not both
    house = planted_copy(
        tmp_path,
        {
            "waybook/memory/_planted.py": "import waybook.search\n",
            "waybook/search/_planted.py": "import waybook.memory\n",
        },
    )
    result = lint_imports(house)
    assert result.returncode != 0
    assert "no two sibling packages import each other, at any depth BROKEN" in result.stdout


@pytest.mark.parametrize(
    "path", sorted((ROOT / "waybook").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_no_module_imports_another_modules_private_name(path: Path) -> None:
    tree = ast.parse(path.read_text())
    private = [
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("waybook")
        for alias in node.names
        if alias.name.startswith("_")
        and not alias.name.startswith("__")
        and not (ROOT / node.module.replace(".", "/") / f"{alias.name}.py").exists()
        and not (ROOT / node.module.replace(".", "/") / alias.name).is_dir()
    ]
    assert private == []


@pytest.mark.parametrize(
    ("planted", "imports"),
    [
        ("waybook/stores/_planted.py", "waybook.journal._jsonl"),  # a store other than the directory one
        ("waybook/journal/_planted.py", "waybook.journal._jsonl._scan"),  # a room beside the wing
        ("waybook/commands/_planted.py", "waybook.journal._jsonl._file_ops"),  # a command
    ],
)
def test_a_planted_import_of_the_jsonl_wing_from_elsewhere_breaks_its_protected_contract(
    tmp_path: Path, planted: str, imports: str
) -> None:
    house = planted_copy(tmp_path, {planted: f"import {imports}\n"})
    result = lint_imports(house)
    importer = planted.removesuffix(".py").replace("/", ".")
    assert result.returncode != 0
    assert f"Illegal imports of protected package {imports}" in result.stdout
    assert f"- {importer} -> {imports} (l.1)" in result.stdout
    # the wing's contract and the private rooms' (the wing is a private room of the journal): the layers hold
    assert " 2 broken." in result.stdout


@pytest.mark.parametrize(
    ("planted", "imports"),
    [
        ("waybook/search/_planted.py", "waybook.journal._clock"),  # a room of a package below
        ("waybook/commands/_planted.py", "waybook.stores._blobs"),  # the CLI past the stores' face
        ("waybook/memory/canonical/_planted.py", "waybook.memory.working._port"),  # a sibling's room
    ],
)
def test_a_planted_import_of_another_packages_private_room_breaks_the_private_rooms_contract(
    tmp_path: Path, planted: str, imports: str
) -> None:
    house = planted_copy(tmp_path, {planted: f"import {imports}\n"})
    result = lint_imports(house)
    importer = planted.removesuffix(".py").replace("/", ".")
    assert result.returncode != 0
    assert "Private modules may only be imported from within their parent package" in result.stdout
    assert f"- {importer} -> {imports} (l.1)" in result.stdout
    assert " 1 broken." in result.stdout  # the private rooms' contract alone: the layers hold


def test_an_allowed_private_import_that_no_longer_exists_fails_the_check(tmp_path: Path) -> None:
    # the allow-list only shrinks: an entry whose import is gone must be deleted, not left to be reused
    house = planted_copy(tmp_path, {})
    config = (house / "pyproject.toml").read_text()
    contract = config.index('id = "private-rooms"')
    entries = config.index("ignore_imports = [\n", contract) + len("ignore_imports = [\n")
    stale = '    "waybook.memory.working._port -> waybook.journal._fork",\n'
    (house / "pyproject.toml").write_text(config[:entries] + stale + config[entries:])
    result = lint_imports(house)
    assert result.returncode != 0
    said = " ".join(result.stdout.split())  # import-linter wraps its lines at 80 columns
    assert "No matches for ignored import waybook.memory.working._port -> waybook.journal._fork" in said
