"""`waybook demo` says which durability policy its journals were written under (issue 41)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli_runner import waybook


def test_the_demo_says_its_appends_were_on_disk_before_they_returned(tmp_path: Path) -> None:
    ran = waybook("demo", tmp_path / "demo")
    assert ran.returncode == 0, ran.stderr
    assert "durability: group: every append was on disk (fsynced) before it returned" in ran.stdout
