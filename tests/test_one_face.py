"""scripts/one_face.py moves imports to each name's one face, and nothing else (docs/architecture.md).

It runs here on a small tree laid out like waybook's, whose imports are broken as a merge leaves them:
the script reads the source and never imports it.

one_face: leave this file (its old imports are the input of the test).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import ROOT

SCRIPT = ROOT / "scripts" / "one_face.py"

TREE = {
    "waybook/__init__.py": 'from waybook.model import Record\n\n__all__ = ["Record"]\n',
    "waybook/model/__init__.py": (
        'from waybook.model._records import Record, TextBlock\n\n__all__ = ["Record", "TextBlock"]\n'
    ),
    "waybook/model/_records.py": "class Record: ...\n\n\nclass TextBlock: ...\n",
    "waybook/journal/__init__.py": 'class JsonlJournal: ...\n\n\n__all__ = ["JsonlJournal"]\n',
    "waybook/memory/__init__.py": 'def remember_receipt() -> None: ...\n\n\n__all__ = ["remember_receipt"]\n',
    "tests/test_x.py": (
        '"""Raises `waybook.journal.TextBlock` errors; kind "waybook.remember_receipt/1"."""\n\n'
        "from waybook.journal import JsonlJournal, Record, TextBlock  # noqa: E402\n\n"
        'CHILD = """\nfrom waybook.journal import TextBlock\n"""\n'
        'KIND = "waybook.remember_receipt/1"\n'
    ),
    "docs/x.md": "Use `waybook.journal.Record`.\n\n```python\nfrom waybook.journal import TextBlock\n```\n",
}


def run(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *options, str(root)], capture_output=True, text=True, check=False
    )


def test_imports_and_mentions_move_to_the_one_face_and_wire_strings_stay(tmp_path: Path) -> None:
    for name, text in TREE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "README.md").write_text("waybook\n")

    assert run(tmp_path, "--check").returncode == 1
    assert (tmp_path / "tests/test_x.py").read_text() == TREE["tests/test_x.py"]  # --check writes nothing
    assert run(tmp_path).returncode == 0

    test = (tmp_path / "tests/test_x.py").read_text()
    assert "from waybook.journal import JsonlJournal  # noqa: E402" in test
    assert "from waybook.model import Record, TextBlock  # noqa: E402" in test  # not the root's Record
    assert "\nfrom waybook.model import TextBlock\n" in test  # the code a test hands a child process
    assert "`waybook.model.TextBlock`" in test
    assert test.count('"waybook.remember_receipt/1"') == 2  # a kind, not a mention of a name
    doc = (tmp_path / "docs/x.md").read_text()
    assert doc == "Use `waybook.model.Record`.\n\n```python\nfrom waybook.model import TextBlock\n```\n"
    assert run(tmp_path, "--check").returncode == 0  # a second run changes nothing
