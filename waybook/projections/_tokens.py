"""One request's tokens in the categories a price table charges: input, output, cache read, cache write
(and, of the cache writes, those kept for an hour).

Recorded usage keeps each source's own names and meanings (docs/cost.md has the table):

- Anthropic's Messages API (Claude Code, OpenCode): `input_tokens` counts the uncached input only;
  `cache_read_input_tokens` and `cache_creation_input_tokens` beside it. A Claude Code import also keeps
  the split of the cache writes by lifetime, `cache_creation.ephemeral_5m_input_tokens` and
  `cache_creation.ephemeral_1h_input_tokens`; without that split (an older import) every cache write
  counts at the standard (5-minute) rate.
- OpenAI's Responses API (Codex): `input_tokens` includes `cached_input_tokens`; `output_tokens`
  includes `reasoning_output_tokens`.
- OpenAI's Chat Completions API: `prompt_tokens` (cached ones included, `cached_tokens`) and
  `completion_tokens`.
- Pi: `input` (uncached), `output`, `cacheRead`, `cacheWrite`.
- LangChain's `usage_metadata` (LangGraph threads), flattened: `input_tokens` sums every input token,
  of which `input_token_details.cache_read` were read from and `input_token_details.cache_creation`
  written to the cache.

`tokens_of` reads any of them into one `Tokens`; a pure function.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeVar

import attrs

CACHE_WRITE_1H: Final = "cache_creation.ephemeral_1h_input_tokens"
"""The usage key of the cache writes kept for an hour (Anthropic's `usage.cache_creation`, flattened)."""
CACHE_WRITE_5M: Final = "cache_creation.ephemeral_5m_input_tokens"
"""The usage key of the cache writes kept for five minutes."""

_INPUT: Final = ("input_tokens", "prompt_tokens", "input")
_OUTPUT: Final = ("output_tokens", "completion_tokens", "output")
_CACHE_READ: Final = (
    "cache_read_input_tokens",
    "cached_input_tokens",
    "cached_tokens",
    "cacheRead",
    "cache_read",
)
_CACHE_WRITE: Final = ("cache_creation_input_tokens", "cacheWrite", "cache_write")
_INPUT_HOLDS_CACHE: Final = ("cached_input_tokens", "cached_tokens")
"""Where the cache read is named so, the input count already includes it (OpenAI's APIs)."""
LANGCHAIN_CACHE_READ: Final = "input_token_details.cache_read"
LANGCHAIN_CACHE_WRITE: Final = "input_token_details.cache_creation"
"""LangChain's cache counts, parts of its `input_tokens`."""


Counts = TypeVar("Counts", bound=attrs.AttrsInstance)


def added(one: Counts, other: Counts) -> Counts:
    """`one` and `other` of the same counts class (`Tokens`, `Cost`), added category by category."""
    return type(one)(
        **{f.name: getattr(one, f.name) + getattr(other, f.name) for f in attrs.fields(type(one))}
    )


@attrs.frozen
class Tokens:
    """Tokens by the category a price table charges. `cache_write` counts every cache write, and
    `cache_write_1h` those of them kept for an hour (charged at their own rate); `input` is the
    uncached input only, `output` includes any reasoning."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    @property
    def input_with_cache(self) -> int:
        """Every input token of the request: what a long-context price tier is decided by."""
        return self.input + self.cache_read + self.cache_write

    def __add__(self, other: Tokens) -> Tokens:
        return added(self, other)

    def as_json(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_write": self.cache_write,
            "cache_write_1h": self.cache_write_1h,
            "cache_read": self.cache_read,
            "total": self.total,
        }


def sum_tokens(many: Iterable[Tokens]) -> Tokens:
    total = Tokens()
    for tokens in many:
        total += tokens
    return total


def tokens_of(usage: Mapping[str, Any] | None) -> Tokens | None:
    """The tokens a recorded usage counts, by category; None when it names none of them."""
    if not usage:
        return None
    counts = {key: value for key, value in usage.items() if type(value) is int and value >= 0}

    def first(keys: tuple[str, ...]) -> int | None:
        return next((counts[key] for key in keys if key in counts), None)

    if LANGCHAIN_CACHE_READ in counts or LANGCHAIN_CACHE_WRITE in counts:
        read, write = counts.get(LANGCHAIN_CACHE_READ, 0), counts.get(LANGCHAIN_CACHE_WRITE, 0)
        return Tokens(
            input=max(0, counts.get("input_tokens", 0) - read - write),
            output=counts.get("output_tokens", 0),
            cache_read=read,
            cache_write=write,
        )
    found = [first(keys) for keys in (_INPUT, _OUTPUT, _CACHE_READ, _CACHE_WRITE)]
    if all(value is None for value in found) and CACHE_WRITE_1H not in counts:
        return None
    given_input, output, cache_read, cache_write = (value or 0 for value in found)
    if any(key in counts for key in _INPUT_HOLDS_CACHE) and not any(
        key in counts for key in ("cache_read_input_tokens", "cacheRead", "cache_read")
    ):
        given_input = max(0, given_input - cache_read)
    hour = counts.get(CACHE_WRITE_1H, 0)
    if CACHE_WRITE_1H in counts or CACHE_WRITE_5M in counts:
        # The split is what the API bills; it sums to cache_creation_input_tokens where both are given.
        cache_write = hour + counts.get(CACHE_WRITE_5M, 0)
    return Tokens(
        input=given_input, output=output, cache_read=cache_read, cache_write=cache_write, cache_write_1h=hour
    )
