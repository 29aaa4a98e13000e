"""What the integrations' `redact=` tests check a store with (issue 46): secrets from the corpus, and
every byte a store holds, with the base64 values a checkpointer stores decoded so they are searched too."""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any, Final

from tests.helpers.secret_corpus import SECRETS

TOKEN: Final = next(secret for secret in SECRETS if secret.kind == "github-token")
DB: Final = next(secret for secret in SECRETS if secret.kind == "url-password")
STORE_URLS: Final = {
    "directory": lambda tmp: f"file:{tmp / 'store'}",
    "sqlite": lambda tmp: f"sqlite:{tmp / 'store.db'}",
}
"""The stores whose raw bytes a test can search (files and an SQLite database)."""


def raw_bytes(root: Path) -> bytes:
    """Every byte of every file under `root` (journals, databases and their WAL, blobs, sidecars)."""
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return b"".join(p.read_bytes() for p in files)


def assert_no_secret_in(root: Path) -> None:
    """No byte under `root` holds the corpus's GitHub token or URL password."""
    data = raw_bytes(root)
    assert TOKEN.core.encode() not in data
    assert DB.core.encode() not in data


def decoded_values(value: Any) -> bytes:
    """The bytes of every `[type, base64]` value in a record's data (LangGraph's serialized values)."""
    if type(value) is list and len(value) == 2 and all(type(v) is str for v in value):
        try:
            return base64.b64decode(value[1], validate=True)
        except (binascii.Error, ValueError):
            pass
    if type(value) is list:
        return b"".join(decoded_values(item) for item in value)
    if type(value) is dict:
        return b"".join(decoded_values(item) for item in value.values())
    return b""
