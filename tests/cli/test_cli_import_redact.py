"""`waybook import ... --redact` (issue 46): a real Claude Code session with a planted secret is masked
before any record is appended: neither the journal file nor the store's database holds the secret, and
the masked message says what kind was masked where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import SHARED_FIXTURES
from tests.helpers.secret_corpus import SECRETS

pytestmark = pytest.mark.skipif(
    not SHARED_FIXTURES.is_dir(), reason="shared/fixtures is not beside this checkout"
)
TOKEN = next(secret for secret in SECRETS if secret.kind == "github-token")


def planted(tmp_path: Path) -> Path:
    """spotter's short session with a token pasted into its first prompt and its git branch."""
    lines = (SHARED_FIXTURES / "claude-code" / "spotter" / "short.jsonl").read_text().splitlines()
    out = []
    done = False
    for line in lines:
        entry = json.loads(line)
        if not done and entry.get("type") == "user" and isinstance(entry["message"]["content"], str):
            entry["message"]["content"] += f" (my token is {TOKEN.core})"
            entry["gitBranch"] = f"fix-{TOKEN.core}"
            done = True
        out.append(json.dumps(entry))
    assert done
    source = tmp_path / "src" / "session.jsonl"
    source.parent.mkdir()
    source.write_text("\n".join(out) + "\n")
    return source


def raw(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_a_redacted_import_file_never_holds_the_secret_and_says_what_was_masked(tmp_path: Path) -> None:
    source = planted(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    run = waybook("import", "claude-code", source, "-o", out / "s.jsonl", "--redact")
    assert run.returncode == 0, run.stderr
    assert TOKEN.core.encode() not in raw(out)
    assert waybook("verify", out / "s.jsonl").returncode == 0
    records = [json.loads(line) for line in (out / "s.jsonl").read_text().splitlines()]
    details = [r["body"].get("details") or {} for r in records]
    notes = [found for d in details if isinstance(d, dict) for found in d.get("waybook.redacted", [])]
    assert {"field": "content", "block": 0, "kind": "github-token", "count": 1} in notes


def test_without_redact_the_planted_secret_is_imported(tmp_path: Path) -> None:
    source = planted(tmp_path)
    run = waybook("import", "claude-code", source, "-o", tmp_path / "s.jsonl")
    assert run.returncode == 0, run.stderr
    assert TOKEN.core.encode() in (tmp_path / "s.jsonl").read_bytes()  # the test above can fail


def test_a_redacted_import_into_a_sqlite_store_never_holds_the_secret(tmp_path: Path) -> None:
    source = planted(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    run = waybook("import", "claude-code", source, "--store", f"sqlite:{store}/s.db", "chat", "--redact")
    assert run.returncode == 0, run.stderr
    assert TOKEN.core.encode() not in raw(store)
    again = waybook("import", "claude-code", source, "--store", f"sqlite:{store}/s.db", "chat", "--redact")
    assert again.returncode == 0, again.stderr  # masked the same way: the journal holds the import
