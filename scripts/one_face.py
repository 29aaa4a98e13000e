"""Rewrite every import of a public name to its one face (issue 39, point 6; docs/architecture.md, "One
face per name").

A public module (no `_` in its dotted path, the CLI's own modules aside: tests/test_public_api.py's rule)
is a face; its `__all__` lists what it exports. An import `from FACE import NAME` where FACE does not
export NAME is rewritten to the one face that does: the faces whose `__all__` lists the same object
(followed through their imports, read from the source, never imported: the script runs on a tree whose
imports are broken), less those that only gather a descendant's names (`waybook` gathers `waybook.model`'s
`Record`). Names no face exports, or two unrelated faces export, are left and reported.

It reads the source only, so it runs on a tree whose imports are still broken (after a merge of branches
that import a name from its old face), and it is idempotent: a second run changes nothing.

Usage, from the checkout root:
    python scripts/one_face.py          # rewrite in place, then `ruff check --fix --select I` and
                                        # `ruff format` the Python files it changed
    python scripts/one_face.py --check  # change nothing; list what would change, exit 1 if anything would

It rewrites `waybook/`, `tests/`, `bench/`, `examples/`, `scripts/` (Python files), the ```python blocks of
`README.md` and `docs/*.md`, and dotted mentions in prose and docstrings (`waybook.journal.JournalError`
becomes `waybook.model.JournalError`). A file that says `one_face: leave this file` is left alone.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "waybook"
CLI_MODULES = ("waybook.cli", "waybook.__main__", "waybook.commands")
PYTHON_TREES = ("waybook", "tests", "bench", "examples", "scripts")
LINE_LENGTH = 110
LEAVE = "one_face: " + "leave this file"
"""A file that says so is left as it is (the script's own test: its old imports are the test's input)."""
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[A-Za-z0-9_+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S
)


# --- the faces, read from the source --------------------------------------------------------------------


def module_files(root: Path) -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def is_public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split(".")[1:]) and not name.startswith(CLI_MODULES)


def module_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """The statements run at import: the module's body and its `if`/`try` blocks, not functions'."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield node
        for name in ("body", "orelse", "finalbody"):
            pending.extend(getattr(node, name, []))
        for handler in getattr(node, "handlers", []):
            pending.extend(handler.body)


@dataclass
class Faces:
    """What each module defines, imports and exports, read from its source."""

    files: dict[str, Path]
    _trees: dict[str, ast.Module | None] = field(default_factory=dict)
    _faces: dict[tuple[str, str], str | list[str] | None] = field(default_factory=dict)

    def tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            path = self.files.get(module)
            self._trees[module] = ast.parse(path.read_text()) if path else None
        return self._trees[module]

    def exported(self, module: str) -> list[str]:
        tree = self.tree(module)
        for node in tree.body if tree else []:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names_all = any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)
                if names_all and isinstance(node.value, ast.List | ast.Tuple):
                    return [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and any(a.name == "__all__" for a in node.names)
            ):
                return self.exported(node.module)
        return []

    def origin(
        self, module: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()
    ) -> tuple[str, str] | None:
        """Where `module.name` is defined: followed through module-level `from X import name`."""
        tree = self.tree(module)
        if tree is None or (module, name) in seen:
            return None
        for node in module_level(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        if node.module in self.files:
                            return self.origin(node.module, alias.name, seen | {(module, name)}) or (
                                node.module,
                                alias.name,
                            )
                        return (node.module, alias.name)
        for node in tree.body:
            defined = (
                [node.name]
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                else [t.id for t in node.targets if isinstance(t, ast.Name)]
                if isinstance(node, ast.Assign)
                else [node.target.id]
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                else []
            )
            if name in defined:
                return (module, name)
        # a submodule is a name of its package
        return (module, name) if f"{module}.{name}" in self.files else None

    def is_alias(self, module: str) -> bool:
        """A kept path (docs/architecture.md): a module that borrows another's `__all__` whole."""
        tree = self.tree(module)
        return any(
            isinstance(node, ast.ImportFrom) and any(a.name == "__all__" for a in node.names)
            for node in (tree.body if tree else [])
        )

    def face_of(self, module: str, name: str) -> str | list[str] | None:
        """The one face to import `name` from instead of `module`; None when `module` is right (or no
        face exports it); the candidates when more than one unrelated face does."""
        if (module, name) not in self._faces:
            self._faces[module, name] = self._face_of(module, name)
        return self._faces[module, name]

    def _face_of(self, module: str, name: str) -> str | list[str] | None:
        if not is_public(module) or module not in self.files or name in self.exported(module):
            return None
        origin = self.origin(module, name)
        candidates = [
            face
            for face in self.files
            if face != module
            and is_public(face)
            and not self.is_alias(face)
            and name in self.exported(face)
            and (origin is None or self.origin(face, name) == origin)
        ]
        gatherers = {a for a in candidates for b in candidates if b.startswith(a + ".")}
        chosen = [face for face in candidates if face not in gatherers]
        if len(chosen) == 1:
            return chosen[0]
        return chosen or None


# --- rewriting one source ---------------------------------------------------------------------------------


def sort_key(name: str) -> tuple[int, str]:
    """ruff's isort order (order-by-type): CONSTANTS, Classes, functions."""
    bare = name.split(" as ")[0]
    kind = 0 if bare.isupper() and len(bare) > 1 else 1 if bare[:1].isupper() else 2
    return (kind, bare)


def render(module: str, names: list[str], indent: str, comment: str) -> str:
    names = sorted(set(names), key=sort_key)
    tail = f"  {comment}" if comment else ""
    one = f"{indent}from {module} import {', '.join(names)}"
    if len(one) + len(tail) <= LINE_LENGTH:
        return one + tail + "\n"
    inner = "".join(f"{indent}    {n},\n" for n in names)
    return f"{indent}from {module} import ({tail}\n{inner}{indent})\n"


def comments_in(source: str) -> dict[int, str]:
    found = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                found[token.start[0]] = token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def spoken(alias: ast.alias) -> str:
    return alias.name + (f" as {alias.asname}" if alias.asname else "")


def bodies(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value
        for handler in getattr(node, "handlers", []):
            yield handler.body


def rewrite(source: str, faces: Faces, where: str, notes: list[str]) -> str:
    """`source` with its imports of public names taken from their one face."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    comments = comments_in(source)
    edits: dict[int, tuple[int, str]] = {}  # first line -> (last line, new text)
    for body in bodies(tree):
        imports = [n for n in body if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module]
        moved: dict[ast.ImportFrom, dict[str, list[str]]] = {}
        for node in imports:
            for alias in node.names:
                assert node.module is not None
                face = faces.face_of(node.module, alias.name)
                if isinstance(face, list):
                    notes.append(
                        f"{where}:{node.lineno}: {alias.name} is exported by {', '.join(face)}: left"
                    )
                elif face is not None:
                    moved.setdefault(node, {}).setdefault(face, []).append(spoken(alias))
        if not moved:
            continue
        kept: dict[ast.ImportFrom, list[str]] = {
            n: [spoken(a) for a in n.names if not any(spoken(a) in v for v in moved.get(n, {}).values())]
            for n in imports
        }
        # a moved name joins the first import already taken from its face in the same body
        joins: dict[str, ast.ImportFrom] = {}
        for node in imports:
            if node.module not in joins and kept[node]:
                joins[node.module] = node  # type: ignore[index]
        added: dict[ast.ImportFrom, list[str]] = {}
        new_lines: dict[ast.ImportFrom, list[tuple[str, list[str]]]] = {}
        for node, targets in moved.items():
            for face, names in targets.items():
                if face in joins:
                    added.setdefault(joins[face], []).extend(names)
                else:
                    new_lines.setdefault(node, []).append((face, names))
        for node in {*moved, *added}:
            assert node.end_lineno is not None
            assert node.module is not None
            inner = [comments[i] for i in range(node.lineno + 1, node.end_lineno + 1) if i in comments]
            if inner:
                notes.append(f"{where}:{node.lineno}: comments inside the import: left")
                continue
            first = lines[node.lineno - 1]
            indent = first[: len(first) - len(first.lstrip())]
            comment = comments.get(node.lineno, "")
            text = ""
            if kept[node] or added.get(node):
                text += render(node.module, kept[node] + added.get(node, []), indent, comment)
            for face, names in new_lines.get(node, []):
                text += render(face, names, indent, comment)
            edits[node.lineno] = (node.end_lineno, text)
    for start in sorted(edits, reverse=True):
        end, text = edits[start]
        lines[start - 1 : end] = [text]
    return "".join(lines)


EMBEDDED = re.compile(
    r"^(?P<lead>[ \t]*[\"']?)(?P<indent>[ \t]*)from (?P<module>waybook(?:\.\w+)*) import "
    r"(?P<names>\w+(?: as \w+)?(?:, \w+(?: as \w+)?)*)(?P<tail>[^\n]*)$",
    re.M,
)


def rewrite_embedded(text: str, faces: Faces, where: str, notes: list[str]) -> str:
    """One-line imports the parser does not see: in the code a test or a bench hands a child process as a
    string (a line of a triple-quoted string, or a string of its own)."""

    def one(match: re.Match[str]) -> str:
        module, lead, indent, tail = match["module"], match["lead"], match["indent"], match["tail"]
        groups: dict[str, list[str]] = {}
        for spoken in match["names"].split(", "):
            face = faces.face_of(module, spoken.split(" as ")[0])
            groups.setdefault(face if isinstance(face, str) else module, []).append(spoken)
        if list(groups) == [module]:
            return match.group(0)
        if lead.strip() and len(groups) > 1:
            notes.append(f"{where}: {match.group(0).strip()}: names of two faces in one string: left")
            return match.group(0)
        return "\n".join(
            f"{lead}{indent}from {face} import {', '.join(sorted(names, key=sort_key))}{tail}"
            for face, names in groups.items()
        )

    return EMBEDDED.sub(one, text)


MENTION = re.compile(
    r"(?<![\w.])(waybook(?:\.[a-z][a-z0-9_]*)+)\.([A-Za-z_][A-Za-z0-9_]*)(?=[`\s),:;]|\.(?:\s|$)|$)", re.M
)
"""A dotted mention of a name under a package (`waybook.journal.JournalError`), not a wire tag or kind
(`waybook.remember_receipt/1`, `"waybook.journal.id"`: a string, ended by its quote)."""


def rewrite_prose(text: str, faces: Faces) -> str:
    """Dotted mentions (`waybook.journal.JournalError`) of a name its face does not export."""

    def one(match: re.Match[str]) -> str:
        module, name = match.group(1), match.group(2)
        face = faces.face_of(module, name) if module in faces.files else None
        return f"{face}.{name}" if isinstance(face, str) else match.group(0)

    return re.sub(MENTION, one, text)


def rewrite_markdown(text: str, faces: Faces, where: str, notes: list[str]) -> str:
    def block(match: re.Match[str]) -> str:
        if match.group("lang") not in ("python", "py", "pycon", ""):
            return match.group(0)
        indent, body = match.group("indent"), match.group("body")
        dedented = "".join(line.removeprefix(indent) for line in body.splitlines(keepends=True))
        try:
            new = rewrite(dedented, faces, where, notes)
        except SyntaxError:
            if "from waybook" in body and match.group("lang"):
                notes.append(f"{where}: a code block that does not parse: left")
            return match.group(0)
        if new == dedented:
            return match.group(0)
        body_start, body_end = match.span("body")
        whole_start = match.start()
        reindented = "".join(
            indent + line if line.strip() else line for line in new.splitlines(keepends=True)
        )
        return (
            match.group(0)[: body_start - whole_start] + reindented + match.group(0)[body_end - whole_start :]
        )

    return rewrite_prose(FENCE.sub(block, text), faces)  # a block's embedded strings are rare: not read


def files(root: Path) -> Iterator[Path]:
    for tree in PYTHON_TREES:
        yield from sorted((root / tree).rglob("*.py"))
    yield root / "README.md"
    yield from sorted((root / "docs").rglob("*.md"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=".", type=Path, help="the checkout (default: .)")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if anything would change"
    )
    args = parser.parse_args()
    root = args.root.resolve()
    faces = Faces(module_files(root))
    notes: list[str] = []
    changed: list[Path] = []
    for path in files(root):
        if not path.is_file() or path.resolve() == Path(__file__).resolve():
            continue
        where = str(path.relative_to(root))
        text = path.read_text()
        if LEAVE in text:
            continue
        if path.suffix == ".md":
            new = rewrite_markdown(text, faces, where, notes)
        else:
            try:
                new = rewrite_prose(
                    rewrite_embedded(rewrite(text, faces, where, notes), faces, where, notes), faces
                )
            except SyntaxError:
                notes.append(f"{where}: does not parse: left")
                continue
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new)
    python = [str(p) for p in changed if p.suffix == ".py"]
    if python and not args.check:
        subprocess.run(["ruff", "check", "--fix", "--select", "I", "--quiet", *python], cwd=root, check=False)
        subprocess.run(["ruff", "format", "--quiet", *python], cwd=root, check=False)
    for note in notes:
        print(note, file=sys.stderr)
    verb = "would rewrite" if args.check else "rewrote"
    print(
        f"{verb} {len(changed)} files" + "".join(f"\n  {p.relative_to(root)}" for p in changed if args.check)
    )
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
