"""Secret redaction: one detector, applied to every string an export, a sync or a memory block sends out.

Each secret found is replaced by `[REDACTED:<kind>]`. The detector (`find_secrets`) is a list of rules
(waybook._redact._rules: each kind, its pattern and the detect-secrets plugin or gitleaks rule it comes
from) and the keyword detector (waybook._redact._keywords: `password=...`, `"token": "..."`). Its three
promises, each measured by `python -m bench.redact` and tested by tests/export/test_redaction_corpus.py:

- recall: every example of every kind in tests/helpers/secret_corpus.py is masked, in every field of a
  record and every export shape;
- precision: at most 1 false positive per 10,000 lines of real code, prose and tool output;
- idempotence: masking masked text changes nothing. The masks already in a text are never matched
  again (a match that overlaps one is dropped), and masking repeats until nothing more is found, so the
  result is a fixed point by construction (`https://[REDACTED:github-token]@github.com` stays as it is).

And its cost: at most 2x the export without it. Every rule starts with a literal, and one pass over a
text finds where each occurs (waybook._redact._literals: Hyperscan where installed, else
Python's finds, 3-4x slower, the same spans); the rules' patterns run only there. A row's texts are
scanned joined, in one pass; a `Redactor` remembers what it masked per distinct text, so the per-turn
export, which shows the same context again and again, scans each text once, and an export keeps a
message whose texts masking leaves as they are without walking it.

docs/export.md lists the kinds and what is not caught; docs/security.md says why this is our own list
rather than a scanner library.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

import attrs

from waybook._redact._keywords import STEMS, keyword_spans
from waybook._redact._literals import Literal, Scanner, best_scanner
from waybook._redact._rules import AWS_PAIR_RULE, KEYWORD_RULE, RULES, Before, Rule

MASK: Final = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
"""What a masked secret becomes; never matched again."""
KINDS: Final = tuple(dict.fromkeys([*(rule.name for rule in RULES), AWS_PAIR_RULE, KEYWORD_RULE]))
"""Every kind of secret the built-in detector names, in priority order."""

_AWS_SECRET: Final = re.compile(
    r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
)
_AWS_REACH: Final = 100
"""How far (in characters, either side) an AWS secret key may be from its key id to be found bare."""


def _by_literal() -> tuple[tuple[bytes, bool, tuple[int, ...], bool], ...]:
    grouped: dict[tuple[str, bool], list[int]] = {}
    for index, rule in enumerate(RULES):
        for literal in rule.starts:
            grouped.setdefault((literal, rule.lowered), []).append(index)
    return tuple(
        (literal.encode("latin-1"), lowered, tuple(found), all(RULES[i].token for i in found))
        for (literal, lowered), found in grouped.items()
    )


_LITERALS: Final = _by_literal()
"""Each literal a rule's match starts with, the rules that start with it, and whether they are all token
rules (a match is a run of token characters)."""
_GATED: Final = tuple((i, rule.needle.encode()) for i, rule in enumerate(RULES) if rule.needle)
"""The rules with no literal of their own, run where the lower-cased text holds their word."""
_MASK_START: Final = b"[REDACTED:"
SCANNED: Final = (
    *(Literal(literal, lowered, token=token) for literal, lowered, _, token in _LITERALS),
    *(Literal(needle, caseless=True) for _, needle in _GATED),
    *(Literal(stem, caseless=True) for stem, _ in STEMS),
    Literal(_MASK_START, caseless=False),
)
"""Every literal the detector starts from: the rules', the gated rules' words, the keywords, a mask's."""
SCANNER: Final[Scanner] = best_scanner(SCANNED)
"""What finds where each literal first occurs (waybook._redact._literals): Hyperscan with the `redact`
extra, else Python's finds; the spans found are the same."""
_GATED_AT: Final = len(_LITERALS)
_STEMS_AT: Final = _GATED_AT + len(_GATED)
_MASK_AT: Final = _STEMS_AT + len(STEMS)
_AWS_ID_INDEX: Final = next(i for i, rule in enumerate(RULES) if rule.name == "aws-access-key")


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


Span = tuple[int, int, int]
"""start, end, and the priority of the rule that found it (its index in the detector's rules)."""


def _views(text: str) -> tuple[bytes, bytes]:
    """`text` as bytes, one a character (beyond Latin-1 a `?`), and the same lower-cased (ASCII only):
    every position stays where it was, and `bytes.find` is as fast on every text."""
    raw = text.encode("latin-1", "replace")
    return raw, raw.lower()


def _left_ok(before: Before, text: str, start: int) -> bool:
    if before == "any" or start == 0:
        return True
    char = text[start - 1]
    if before == "word" and char == "_":
        return False
    return not (char.isascii() and char.isalnum())


class _Masks:
    """The masks already in a text: a match overlapping one is no secret (it would mask a mask)."""

    def __init__(self, text: str, *, held: bool) -> None:
        spans = [m.span() for m in MASK.finditer(text)] if held else []
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]

    def overlap(self, start: int, end: int) -> bool:
        if not self.starts:
            return False
        index = bisect.bisect_left(self.ends, start + 1)  # the first mask ending after `start`
        return index < len(self.starts) and self.starts[index] < end


def _rule_spans(
    rule: Rule,
    priority: int,
    text: str,
    lowered: bytes,
    masks: _Masks,
    where: Sequence[int] | None,
) -> Iterator[Span]:
    """The rule's matches at each of `where` (where its literal occurs, in order), or, with None (a
    rule with no literal), searched for through the text."""
    if where is None:
        at = 0
        while (match := _match(rule, text, lowered, at, anchored=False)) is not None:
            span, at = _judged(rule, priority, text, masks, match)
            if span is not None:
                yield span
        return
    after = 0
    for at in where:
        if at < after:
            continue  # inside the previous match
        match = _match(rule, text, lowered, at, anchored=True)
        if match is not None:
            span, after = _judged(rule, priority, text, masks, match)
            if span is not None:
                yield span


def _judged(
    rule: Rule, priority: int, text: str, masks: _Masks, match: re.Match[str] | re.Match[bytes]
) -> tuple[Span | None, int]:
    """A match as the span to mask (None: its lead or left boundary fails, or it overlaps a mask), and
    where to look on from."""
    start = match.start()
    after = max(match.end(), start + 1)
    secret = "secret" in match.re.groupindex
    begin, end = match.span("secret") if secret else (start, match.end())
    if rule.lead is not None:
        width = rule.lead_width
        if start < width or rule.lead.fullmatch(text, start - width, start) is None:
            begin = -1
        else:
            start -= width
            begin = begin if secret else start
    if begin < 0 or begin == end or not _left_ok(rule.left, text, start) or masks.overlap(begin, end):
        return None, match.start() + 1
    return (begin, end, priority), after


def _match(
    rule: Rule, text: str, lowered: bytes, at: int, *, anchored: bool
) -> re.Match[str] | re.Match[bytes] | None:
    """The rule's pattern at `at` (anchored) or from `at` on: on the lower-cased bytes for a `lowered`
    rule, on the text for the others (the positions are the same)."""
    if rule.bytes_pattern is not None:
        return rule.bytes_pattern.match(lowered, at) if anchored else rule.bytes_pattern.search(lowered, at)
    return rule.pattern.match(text, at) if anchored else rule.pattern.search(text, at)


def _aws_pairs(text: str, keys: list[Span], masks: _Masks, priority: int) -> Iterator[Span]:
    """A bare 40-character AWS secret key within reach of an access key id (either side): the pair is
    how credentials are pasted (`AKIA... wJalr...`)."""
    for begin, end, _ in keys:
        low, high = max(0, begin - _AWS_REACH - 40), min(len(text), end + _AWS_REACH + 40)
        low = text.rfind("\x00", low, begin) + 1 or low  # never across texts masked together
        cut = text.find("\x00", end, high)
        high = high if cut < 0 else cut
        for match in _AWS_SECRET.finditer(text, low, high):
            if not masks.overlap(*match.span()):
                yield match.start(), match.end(), priority


@attrs.frozen
class Detector:
    """The rules, tried on a text; `extra` (user patterns) after the built-in ones."""

    extra: tuple[tuple[str, re.Pattern[str]], ...] = ()
    scanner: Scanner = attrs.field(default=SCANNER, kw_only=True, eq=False, repr=False)
    """What finds the literals (the default: the best installed; both give the same spans)."""
    names: tuple[str, ...] = attrs.field(init=False)

    @names.default
    def _names(self) -> tuple[str, ...]:
        return (*(r.name for r in RULES), AWS_PAIR_RULE, KEYWORD_RULE, *(name for name, _ in self.extra))

    def spans(self, text: str) -> list[Span]:
        """The secrets in `text` (none overlapping a mask), merged where they overlap, in order; each
        names the earliest rule among those that found it."""
        if not text:
            return []
        views = _views(text)
        raw, lowered = views
        where = self.scanner.where(raw, lowered)  # the one pass over the whole text
        masks = _Masks(text, held=bool(where[_MASK_AT]))
        found: list[Span] = []
        for (_, _, priorities, _), at in zip(_LITERALS, where, strict=False):
            if at:
                for priority in priorities:
                    found.extend(_rule_spans(RULES[priority], priority, text, lowered, masks, at))
        for (priority, _), at in zip(_GATED, where[_GATED_AT:_STEMS_AT], strict=True):
            if at:
                found.extend(_rule_spans(RULES[priority], priority, text, lowered, masks, None))
        keys = [span for span in found if span[2] == _AWS_ID_INDEX]
        if keys:
            found.extend(_aws_pairs(text, keys, masks, len(RULES)))
        keyword = len(RULES) + 1
        stems = where[_STEMS_AT:_MASK_AT]
        found.extend(
            (s, e, keyword) for s, e in keyword_spans(text, lowered, stems) if not masks.overlap(s, e)
        )
        for offset, (name, pattern) in enumerate(self.extra):
            rule = Rule(name, pattern, "your pattern", left="any")
            found.extend(_rule_spans(rule, keyword + 1 + offset, text, lowered, masks, None))
        return _merged(found)

    def mask_many(self, texts: Sequence[str]) -> list[tuple[str, dict[str, int]]]:
        """`mask` of each text, the detection run once over them all joined (a rule's match never
        spans two texts; one that would is masked alone): what keeps a row of many short texts cheap."""
        if len(texts) < 2:
            return [self.mask(text) for text in texts]
        joined = SEPARATOR.join(texts)
        starts: list[int] = []
        at = 0
        for text in texts:
            starts.append(at)
            at += len(text) + len(SEPARATOR)
        per_text: dict[int, list[Span]] = {}
        alone: set[int] = set()
        for start, end, priority in self.spans(joined):
            index = bisect.bisect_right(starts, start) - 1
            base = starts[index]
            if end > base + len(texts[index]):  # it runs on into the next texts: mask each alone
                alone.update(range(index, bisect.bisect_left(starts, end)))
            else:
                per_text.setdefault(index, []).append((start - base, end - base, priority))
        results: list[tuple[str, dict[str, int]]] = []
        # a text holding the separator's NUL is masked alone (one count of the joined text says none does)
        nul_held = joined.count("\x00") != len(texts) - 1
        for index, text in enumerate(texts):
            if index in alone or (nul_held and SEPARATOR in text):
                results.append(self.mask(text))
            elif index in per_text:
                masked, counts = self._apply(text, per_text[index], {})
                again, more = self.mask(masked)  # on to the fixed point, as `mask` goes
                for name, count in more.items():
                    counts[name] = counts.get(name, 0) + count
                results.append((again, counts))
            else:
                results.append((text, {}))
        return results

    def _apply(self, text: str, spans: list[Span], counts: dict[str, int]) -> tuple[str, dict[str, int]]:
        pieces: list[str] = []
        last = 0
        for start, end, priority in spans:
            name = self.names[priority]
            pieces += (text[last:start], f"[REDACTED:{name}]")
            counts[name] = counts.get(name, 0) + 1
            last = end
        pieces.append(text[last:])
        return "".join(pieces), counts

    def mask(self, text: str) -> tuple[str, dict[str, int]]:
        """`text` with every secret masked, and how many of each kind; a fixed point (masking it again
        finds nothing), since masking repeats until a pass finds nothing new."""
        counts: dict[str, int] = {}
        while spans := self.spans(text):
            text, counts = self._apply(text, spans, counts)
        return text, counts


def _merged(found: list[Span]) -> list[Span]:
    if len(found) <= 1:
        return found
    found.sort()
    merged = [found[0]]
    for start, end, priority in found[1:]:
        top_start, top_end, top_priority = merged[-1]
        if start < top_end:
            merged[-1] = (top_start, max(end, top_end), min(priority, top_priority))
        else:
            merged.append((start, end, priority))
    return merged


_BUILT_IN: Final = Detector()
SEPARATOR: Final = "\n\x00\n"
"""What joins the texts one detection pass masks together: a line break no rule reads across."""
MEMO_CHARS: Final = 64 << 20
"""How much text (in characters) one Redactor remembers the masking of."""


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """Where the built-in detector finds secrets in `text`: (start, end, kind), in order."""
    return [(s, e, _BUILT_IN.names[p]) for s, e, p in _BUILT_IN.spans(text)]


@attrs.define
class Redactor:
    """Masks secrets in strings and nested JSON values, counting what it masked by kind.

    `extra` holds user patterns (`compile_patterns`), tried after the built-in ones on every text. A
    Redactor remembers each distinct text it masked (up to MEMO_CHARS), so a text shown again costs a
    look-up; the counts still count every occurrence."""

    counts: dict[str, int] = attrs.Factory(dict)
    extra: tuple[tuple[str, re.Pattern[str]], ...] = ()
    scanner: Scanner | None = attrs.field(default=None, kw_only=True, repr=False)
    """What finds the detector's literals; None: the best installed (SCANNER). The same masks either way."""
    _detector: Detector = attrs.field(init=False, repr=False)
    _memo: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = attrs.field(
        init=False, factory=dict, repr=False
    )
    _memo_chars: int = attrs.field(init=False, default=0, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.scanner is not None:
            self._detector = Detector(self.extra, scanner=self.scanner)
        else:
            self._detector = Detector(self.extra) if self.extra else _BUILT_IN

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def text(self, value: str) -> str:
        known = self._memo.get(value)
        if known is None:
            masked, found = self._detector.mask(value)
            known = (value if masked == value else masked, tuple(found.items()))
            if self._memo_chars + len(value) <= MEMO_CHARS:
                self._memo[value] = known
                self._memo_chars += len(value)
        for name, count in known[1]:
            self.counts[name] = self.counts.get(name, 0) + count
        return known[0]

    def unchanged(self, values: Iterable[str]) -> bool:
        """Whether masking leaves every one of `values` as it is, each known to (remembered by) `prepare`
        or `text`: then the caller may keep what holds them as it is, without asking `text` for each."""
        memo = self._memo
        for value in values:
            known = memo.get(value)
            if known is None or (known[0] is not value and known[0] != value):
                return False
        return True

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

    def kinds_in(self, texts: Sequence[str]) -> list[str]:
        """The kinds of secret the detector finds in `texts`, in order (nothing masked, counted or
        remembered): one detection pass over the texts joined, skipping those remembered as texts
        masking leaves as they are. What a writer checks the bytes it is about to store with."""
        memo = self._memo
        unknown = [
            text
            for text in dict.fromkeys(texts)
            if (known := memo.get(text)) is None or (known[0] is not text and known[0] != text)
        ]
        if not unknown:
            return []
        names = self._detector.names
        return list(dict.fromkeys(names[p] for _, _, p in self._detector.spans(SEPARATOR.join(unknown))))

    def prepare(self, values: Iterable[str]) -> None:
        """Mask the texts not yet remembered in one detection pass, and remember them (counted when
        `text` is asked for them): an export prepares a row's texts, then asks for each."""
        unknown = [v for v in dict.fromkeys(values) if v not in self._memo]
        if not unknown:
            return
        for value, (masked, found) in zip(unknown, self._detector.mask_many(unknown), strict=True):
            if self._memo_chars + len(value) > MEMO_CHARS:
                return
            self._memo[value] = (masked if masked != value else value, tuple(found.items()))
            self._memo_chars += len(value)


__all__ = [
    "KINDS",
    "MASK",
    "Detector",
    "SCANNED",
    "SCANNER",
    "RedactPatternError",
    "Redactor",
    "compile_patterns",
    "find_secrets",
    "read_patterns",
]
