"""`password=hunter2`, `"token": "abc"`, `GITLAB_TOKEN=...`, `passphrase: ...`: a value after a name that
says it is a secret, told apart from code that merely names one.

The name must END with the keyword (`DB_PASSWORD`, `client_secret`, `apiKey`; not `password_hash` or
`max_tokens`), a bare `key` counts only after a word that makes it a credential (`api_key`,
`secret_access_key`, not `sort_key`), and the value must look like a literal, not an expression:

- quoted: masked unless it is a placeholder (`""`, `"***"`, `"string"`, `"<token>"`, `"${VAR}"`), prose
  (three spaces or more, save after `passphrase`), or words where a generated value belongs (`apiKey:
  'proxy-handled'`: keys and tokens are never words; a password can be);
- unquoted: not masked when it is code: a call or an index or a member after it (`getKey()`,
  `tokens[0]`, `self.token`), a word of the language (`None`, `await`, `str`), a variable named for
  the secret (`password=password`, `new_password`, `apiKey`), a type after `:` (`token: Token`), a
  keyword argument (`f(password=hashed)`), or a reference (`$TOKEN`, `%(pw)s`).

The detector is tuned on this repository's sources and docs and the tool outputs of the real sessions
in shared fixtures (bench/redact.py counts its false positives per 10,000 lines); the source rules it
follows are detect-secrets' KeywordDetector and gitleaks' generic-api-key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Final

_TAIL: Final = rb"(?P<close>\\?[\"'`]?\]?)[ \t]*(?P<sep>=>|:=|==|=|:)(?P<gap>[ \t]*)(?P<open>\\?[\"'`]?)"
STEMS: Final = tuple(
    (literal, re.compile(stem + _TAIL))
    for literal, stem in (
        (b"pass", rb"(?P<kw>pass(?:word|wd|phrase))"),
        (b"pwd", rb"(?P<kw>pwd)"),
        (b"secret", rb"(?P<kw>secret)"),
        (b"token", rb"(?P<kw>token)"),
        (b"credential", rb"(?P<kw>credentials?)"),
        (b"key", rb"(?P<kw>key)"),
        (b"auth", rb"(?P<kw>auth)"),
    )
)
"""Each keyword's literal (found with `bytes.find` in the lower-cased bytes) and its pattern there."""

_QUALIFIED_KEY: Final = re.compile(
    rb"(?:api|access|secret|private|client|encryption|signing|master|app|account|service|license|"
    rb"subscription|admin|session|consumer|webhook|auth|storage|shared|deploy|ssh|gpg|pgp|openai|"
    rb"anthropic|stripe|aws|azure|gcp)[_.-]?$"
)
"""What must come right before `key` in a name for it to be a credential (`api_key`, `accessKey`)."""

_UNQUOTED: Final = re.compile(r"[^\s\"'`,;&<>(){}\[\]\\]+")
_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CHAIN: Final = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|->|::)[A-Za-z_$][\w$]*)+\.?")
_HUMP: Final = re.compile(r"[a-z][A-Z]")
_WORDS: Final = re.compile(r"[A-Za-z]+(?:[-_. ][A-Za-z]+)*[-_]?")
PASSWORDS: Final = frozenset({"password", "passwd", "passphrase", "pwd"})
"""Keywords whose value people choose: a plain word is a password there, and a placeholder elsewhere."""
CODE_WORDS: Final = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "self",
        "this",
        "cls",
        "await",
        "async",
        "new",
        "str",
        "string",
        "int",
        "bool",
        "bytes",
        "any",
        "object",
        "optional",
        "required",
        "unknown",
        "never",
        "void",
        "char",
        "number",
        "lambda",
        "function",
        "return",
        "yield",
        "def",
        "let",
        "const",
        "var",
        "os",
        "env",
        "process",
        "input",
        "getpass",
        "default",
        "secret",
        "secrets",
        "token",
        "password",
        "str,",
        "redacted",
        "hidden",
        "inherit",
        "type",
        "value",
        "text",
        "data",
        "field",
        "masked",
        "placeholder",
        "sensitive",
        "empty",
        "missing",
        "unset",
        "not",
        "and",
        "or",
        "is",
        "in",
    }
)
"""Unquoted values that are words of a language or a schema, never a secret."""
PLACEHOLDERS: Final = frozenset(
    {
        "string",
        "str",
        "none",
        "null",
        "true",
        "false",
        "password",
        "secret",
        "token",
        "redacted",
        "<redacted>",
        "hidden",
        "xxx",
        "changeme!",
        "your-token",
        "your_token",
        "your-api-key",
        "your_api_key",
        "...",
        "undefined",
        "required",
        "optional",
        "sensitive",
        "masked",
    }
)
_REFERENCE_START: Final = ("$", "%", "@", "*", "#", "<", "{", "!", "|", ">", "&", "[redacted")


_NAME_BYTES: Final = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_.-")
_QUALIFIER_REACH: Final = 16
"""How far before `key` a qualifier can start (the longest, `subscription_`, is 13 bytes)."""
_QUOTED: Final = {quote: re.compile("[^" + re.escape(quote) + r"\\\n]*") for quote in "\"'`\\"}
"""A quoted value's run, per opening quote (a lone backslash too): up to the quote, a backslash or a
line's end."""


def keyword_spans(text: str, lowered: bytes, where: Sequence[Sequence[int]]) -> Iterator[tuple[int, int]]:
    """The spans of values assigned to a name that says it is a secret (see the module's doc);
    `lowered` is the text as lower-cased bytes, one a character; `where` where each stem occurs in it."""
    for (_, pattern), positions in zip(STEMS, where, strict=True):
        for at in positions:
            match = pattern.match(lowered, at)
            if match is None or match["sep"] == b"==":
                continue
            keyword = match["kw"].decode()
            start = match.start()
            if not _named_here(text, lowered, start, keyword):
                continue
            separator = match["sep"].decode()
            spaced = bool(match["gap"]) or separator != "="
            span = _value(
                text, match.end(), match["open"].decode(), keyword, spaced=spaced, separator=separator
            )
            if span is not None:
                yield span


def _named_here(text: str, lowered: bytes, start: int, keyword: str) -> bool:
    """Whether the keyword at `start` ends a name (its last word), and `key` is a credential's."""
    if keyword == "key":
        name_start, floor = start, max(0, start - _QUALIFIER_REACH)  # a name can be a long run of bytes
        while name_start > floor and lowered[name_start - 1] in _NAME_BYTES:
            name_start -= 1
        return _QUALIFIED_KEY.search(lowered, name_start, start) is not None and (
            start == 0 or not text[start - 1].islower() or text[start].isupper()
        )
    if start == 0:
        return True
    before = text[start - 1]
    if not before.isalnum():
        return True
    here = text[start]
    return here.isupper() and (before.islower() or before.isdigit() or before.isupper())


def _value(
    text: str, at: int, opening: str, keyword: str, *, spaced: bool, separator: str
) -> tuple[int, int] | None:
    quote = opening[-1:] if opening else ""
    phrase = keyword == "passphrase"
    if quote:
        run = _QUOTED[quote].match(text, at)
        end = run.end() if run is not None else at
        value = text[at:end]
        if len(value) < 3 or _placeholder(value) or value != value.strip():
            return None
        if value.count(" ") >= 3 and not phrase:
            return None  # prose in quotes: a description, not a secret
        if _WORDS.fullmatch(value) and keyword not in PASSWORDS:
            return None  # words (`'proxy-handled'`, `"ollama"`): generated keys and tokens never are
        return at, end
    if phrase:
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        while end > at and text[end - 1] in " \t\r,;\"'":
            end -= 1
        return (at, end) if end - at >= 3 and not text.startswith(_REFERENCE_START, at) else None
    run = _UNQUOTED.match(text, at)
    if run is None:
        return None
    value = run.group()
    end = run.end()
    if (
        len(value) < 3
        or _placeholder(value)
        or _code(value, text, end, keyword, spaced=spaced, separator=separator)
    ):
        return None
    return at, end


def _placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        lowered in PLACEHOLDERS
        or len(set(value)) == 1
        or ("{" in value and "}" in value)
        or lowered.startswith((*_REFERENCE_START, "your", "my-", "my_", "example", "<", "..."))
        or not any(c.isalnum() for c in value)
    )


def _code(value: str, text: str, end: int, keyword: str, *, spaced: bool, separator: str) -> bool:
    """Whether an unquoted value is code (an expression, a name, a type) or a word, not a literal secret."""
    lowered = value.lower()
    if lowered in CODE_WORDS or _CHAIN.fullmatch(value):
        return True
    follow = end
    while follow < len(text) and text[follow] in " \t":
        follow += 1
    after = text[follow] if follow < len(text) else "\n"
    if after in "([":
        return True  # a call or an index
    if value.isdigit():
        return keyword not in PASSWORDS or len(value) < 4
    if _IDENT.fullmatch(value) and not any(c.isdigit() for c in value):
        if spaced and (after == "_" or after.isalpha()):
            return True  # more words: an expression (`x = await getKey()`) or prose
        if "_" in value or _HUMP.search(value) or keyword.rstrip("s") in lowered:
            return True  # a variable: new_password, apiKey, password=password
        if separator == ":" and value[0].isupper():
            return True  # a type: `token: Token`
        if separator == "=" and after in ",)":
            return True  # a keyword argument: f(password=hashed)
    if _WORDS.fullmatch(value):
        # a word: a password (people choose words), or an environment line (`NAME=word`)
        return keyword not in PASSWORDS and (spaced or separator != "=")
    return False
