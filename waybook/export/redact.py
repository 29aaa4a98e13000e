"""Secret redaction for exports: a documented, tested list of patterns, applied to every string.

Each match is replaced by `[REDACTED:<name>]`. The list errs toward masking: a training set that loses a
string that looked like a key is better than one that leaks a key.
"""

from __future__ import annotations

import re
from typing import Any, Final

import attrs

PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    (
        "private-key",
        re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----", re.S),
    ),
    ("url-password", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
    ("bearer-token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{8,}")),
    ("stripe-key", re.compile(r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{10,}")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{10,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{16,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
)
"""(name, pattern) pairs, tried in order. See docs/export.md for examples of each."""


@attrs.define
class Redactor:
    """Masks secrets in strings and nested JSON values, counting what it masked by pattern name."""

    counts: dict[str, int] = attrs.Factory(dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def text(self, value: str) -> str:
        for name, pattern in PATTERNS:
            value, found = pattern.subn(f"[REDACTED:{name}]", value)
            if found:
                self.counts[name] = self.counts.get(name, 0) + found
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value
