"""Secret redaction for exports: a documented, tested list of patterns, applied to every string.

Each match is replaced by `[REDACTED:<name>]`. The list errs toward masking: a training set that loses a
string that looked like a key is better than one that leaks a key. docs/export.md lists exactly what is
and is not caught, and why this is a list of our own rather than a scanner such as detect-secrets.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
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
    # user:password@ or :password@ after a scheme (redis://:pw@host); the password ends at the last @
    # before the host, so one holding an @ (p@ss) is masked whole.
    ("url-password", re.compile(r"(?<=://)[^/\s:@]*:[^/\s]+(?=@[^/\s@]+)")),
    ("bearer-token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{8,}")),
    ("basic-auth", re.compile(r"(?i)(?<=authorization: basic )[A-Za-z0-9+/=]{8,}")),
    ("stripe-key", re.compile(r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{10,}")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{10,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}")),
    # A bare 40-character AWS secret key within 100 characters of an access key id (either side): the
    # pair is how credentials are pasted (`AKIA... wJalr...`); only the `secret` group is masked.
    (
        "aws-secret-key",
        re.compile(
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b[\s\S]{0,100}?(?<![A-Za-z0-9/+=])"
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
    ),
    (
        "aws-secret-key",
        re.compile(
            r"(?<![A-Za-z0-9/+=])(?P<secret>(?=[A-Za-z0-9/+]*[0-9/+])(?=[A-Za-z0-9/+]*[a-z])[A-Za-z0-9/+]{40})"
            r"(?![A-Za-z0-9/+=])[\s\S]{0,100}?\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"
        ),
    ),
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
    # `password=hunter2`, `"client_secret": "x"`, `API_KEY: x`: the value after a name that says it is a
    # secret (any case, `=` or `:`, quoted or not); only the `secret` group is masked.
    (
        "assigned-secret",
        re.compile(
            r"(?i)(?<![A-Za-z0-9])(?:[A-Za-z0-9]{1,40}[_-]){0,6}(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key"
            r"|auth[_-]?token|access[_-]?token|refresh[_-]?token|private[_-]?key|credentials?)[\"']?"
            r"[ \t]*[:=][ \t]*[\"']?(?P<secret>(?!\[REDACTED)[^\s\"',;&<>]{3,})"
        ),
    ),
)
"""(name, pattern) pairs, tried in order. See docs/export.md for examples of each."""


_TRIGGERS: Final = (
    "-----begin",
    "eyj",
    "://",
    "bearer",
    "basic",
    "k_live_",
    "k_test_",
    "sk-",
    "akia",
    "asia",
    "abia",
    "acca",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "aiza",
    "passw",
    "pwd",
    "secret",
    "key",
    "token",
    "credential",
)
"""Something (lower-cased) every built-in pattern needs: a text holding none of these is returned after
a few substring scans instead of a run of every pattern (tests/export/test_redaction.py checks each pattern's
examples contain one)."""


def _may_hold_secret(value: str) -> bool:
    lowered = value.lower()
    return any(trigger in lowered for trigger in _TRIGGERS)


class RedactPatternError(ValueError):
    """A user redaction pattern that is not a valid regular expression."""


def compile_patterns(
    sources: Iterable[str], *, name: str = "custom"
) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """User patterns (`--redact-pattern REGEX`, a patterns file's lines), compiled; each match is masked
    whole as `[REDACTED:custom]`, or only its `secret` group when it has one."""
    compiled = []
    for source in sources:
        try:
            compiled.append((name, re.compile(source)))
        except re.error as exc:
            msg = f"redaction pattern {source[:80]!r} is not a regular expression: {exc}"
            raise RedactPatternError(msg) from None
        if compiled[-1][1].search("") is not None:
            msg = (
                f"redaction pattern {source[:80]!r} matches the empty string; give one that matches a secret"
            )
            raise RedactPatternError(msg)
    return tuple(compiled)


def read_patterns(text: str) -> list[str]:
    """The patterns of a patterns file: one regular expression a line; blank lines and `#` lines skipped."""
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@attrs.define
class Redactor:
    """Masks secrets in strings and nested JSON values, counting what it masked by pattern name.

    `extra` holds user patterns (`compile_patterns`), tried after the built-in ones on every text."""

    counts: dict[str, int] = attrs.Factory(dict)
    extra: tuple[tuple[str, re.Pattern[str]], ...] = ()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def text(self, value: str) -> str:
        if _may_hold_secret(value):
            value = self._apply(PATTERNS, value)
        if self.extra:
            value = self._apply(self.extra, value)
        return value

    def _apply(self, patterns: tuple[tuple[str, re.Pattern[str]], ...], value: str) -> str:
        for name, pattern in patterns:
            mask = f"[REDACTED:{name}]"
            if "secret" in pattern.groupindex:
                masked, found = pattern.subn(functools.partial(_mask_group, mask=mask), value)
            else:
                masked, found = pattern.subn(mask, value)
            if found:
                value = masked
                self.counts[name] = self.counts.get(name, 0) + found
        return value

    def value(self, value: Any) -> Any:
        """`value` with every string in it masked: map keys too (a secret can be a key), lists, maps.
        Returns `value` itself when nothing in it changed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            items = [self.value(v) for v in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if isinstance(value, dict):
            pairs = [(self.text(k) if isinstance(k, str) else k, self.value(v)) for k, v in value.items()]
            unchanged = all(
                k is k2 and v is v2 for (k, v), (k2, v2) in zip(pairs, value.items(), strict=True)
            )
            return value if unchanged else dict(pairs)
        return value


def _mask_group(match: re.Match[str], *, mask: str) -> str:
    if match.start("secret") < 0:  # a user pattern whose `secret` group took no part in this match
        return match.group(0)
    start, end = match.start("secret") - match.start(), match.end("secret") - match.start()
    whole = match.group(0)
    return whole[:start] + mask + whole[end:]
