"""Secret redaction for exports: a documented, tested list of patterns, applied to every string.

Each match is replaced by `[REDACTED:<name>]`. The list errs toward masking: a training set that loses a
string that looked like a key is better than one that leaks a key. docs/export.md lists exactly what is
and is not caught, and why this is a list of our own rather than a scanner such as detect-secrets.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

import attrs

_KEY_END: Final = r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    # A private key block, to its END line, or to the end of the text when the END line is missing.
    (
        "private-key",
        re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:" + _KEY_END + r"|\Z)", re.S),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{8,}")),
    # user:password@ or :password@ after a scheme (redis://:pw@host).
    ("url-password", re.compile(r"(?<=://)[^/\s:@]*:[^/\s@]+(?=@)")),
    ("bearer-token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{8,}")),
    ("basic-auth", re.compile(r"(?i)(?<=authorization: basic )[A-Za-z0-9+/=]{8,}")),
    ("stripe-key", re.compile(r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{10,}")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{10,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    # A 40-character AWS secret key, only where a name says it is one (alone it is any base64 string);
    # only the `secret` group is masked.
    (
        "aws-secret-key",
        re.compile(
            r"(?i)\b(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
    ),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
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
            mask = f"[REDACTED:{name}]"
            if "secret" in pattern.groupindex:
                value, found = pattern.subn(functools.partial(_mask_group, mask=mask), value)
            else:
                value, found = pattern.subn(mask, value)
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


def _mask_group(match: re.Match[str], *, mask: str) -> str:
    start, end = match.start("secret") - match.start(), match.end("secret") - match.start()
    whole = match.group(0)
    return whole[:start] + mask + whole[end:]
