"""Side by side with ccusage (issue 47): `ccusage daily --json --offline` and `waybook stats --by day --json`
on the same Claude Code and Codex folders must agree, per day and model, on tokens exactly and on cost
within 1%, or each difference must be one of the rules below (docs/cost.md cites each one's source).

Two cases: the shared fixtures (/work/shared/fixtures, arranged as ccusage finds them:
CLAUDE_CONFIG_DIR/projects/<project>/..., CODEX_HOME/sessions/YYYY/MM/DD/...) and sessions this script
generates (seeded, so every run writes the same bytes): Claude Code sessions streamed as Claude Code
writes them (several lines a message, sharing its id and request id), with 5-minute and 1-hour cache
writes, a sub-agent transcript, three models over three days, a message streamed without request ids and
a request past 200,000 input tokens; and Codex rollouts with two models, a repeated token count (both
tools count no request) and a task answered the next day.

Each rule's difference is computed from the source files on their own (never from either tool's output),
then the check is exact: ccusage's tokens = waybook's tokens + the rules' tokens, and ccusage's cost is
within 1% of waybook's cost + the rules' cost (each rule's requests priced one by one). A model waybook
has no price for is listed and left out of the cost check (rule unknown-model). Exit 1 on any difference
no rule explains; the table says which rules applied where.

Usage: python scripts/ccusage_compare.py --ccusage PATH/TO/ccusage --work DIR [--fixtures DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from waybook.prices import GenaiPrices  # noqa: E402
from waybook.projections import Tokens, price  # noqa: E402
from waybook.projections._cost import instant  # noqa: E402

TOLERANCE = Decimal("0.01")
RULES = {
    "no-request-id": "ccusage counts every streamed line of a message without a requestId; waybook the "
    "message once",
    "max-not-last": "ccusage keeps a message's line with the most tokens; waybook the last line (the final "
    "counts)",
    "progress-relay": "ccusage counts sub-agent messages relayed in the parent's progress lines; waybook "
    "counts a sub-agent from its own transcript",
    "long-context": "ccusage charges the tokens of a category above 200,000 at the long-context rate; "
    "genai-prices (waybook) every token of a request whose whole input exceeds 200,000",
    "unknown-model": "genai-prices has no price for the model: waybook lists it unpriced, ccusage prices it",
}
CATEGORIES = ("input", "output", "cache_write", "cache_read")


# --- one cell: a day and a model --------------------------------------------------------------------------


@dataclass
class Cell:
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    cost: Decimal | None = Decimal(0)

    def add(self, tokens: Tokens, cost: Decimal | None) -> None:
        for key in CATEGORIES:
            self.tokens[key] += getattr(tokens, key)
        self.cost = None if cost is None or self.cost is None else self.cost + cost


Cells = dict[tuple[str, str], Cell]


@dataclass
class Delta:
    rule: str
    day: str
    model: str
    tokens: Tokens
    cost: Decimal


# --- the folders ---------------------------------------------------------------------------------------


@dataclass
class Folders:
    name: str
    claude: Path  # CLAUDE_CONFIG_DIR (projects/ inside)
    codex: Path  # CODEX_HOME (sessions/ inside)


def arrange_fixtures(fixtures: Path, work: Path) -> Folders:
    folders = Folders("fixtures", work / "fixtures/claude", work / "fixtures/codex")
    projects = folders.claude / "projects"
    for project in ("spotter", "codemie"):
        source = fixtures / "claude-code" / project
        target = projects / f"-fixtures-{project}"
        for path in sorted(source.rglob("*.jsonl")):
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / path.relative_to(source))
    for path in sorted((fixtures / "codex").glob("rollout-*.jsonl")):
        stamp = path.name.removeprefix("rollout-")[:10].split("-")
        day = folders.codex / "sessions" / stamp[0] / stamp[1] / stamp[2]
        day.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, day / path.name)
    return folders


# --- generated sessions --------------------------------------------------------------------------------


def _compact(line: dict[str, Any]) -> str:
    """One line as the agents write it: compact JSON (ccusage finds usage lines by `"usage":{`)."""
    return json.dumps(line, separators=(",", ":")) + "\n"


def _iso(day: int, seconds: float) -> str:
    whole, millis = int(seconds), int(seconds * 1000) % 1000
    return f"2026-03-{day:02d}T{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}.{millis:03d}Z"


class ClaudeSession:
    """Lines as Claude Code writes them: a user line, then each assistant message streamed as several
    lines (one content block each) sharing the message id and request id, the usage repeated on each
    and the output growing to its final count on the last."""

    def __init__(self, rng: random.Random, session: str, cwd: str, *, agent: str | None = None) -> None:
        self.rng, self.session, self.cwd, self.agent = rng, session, cwd, agent
        self.lines: list[dict[str, Any]] = []
        self.last: str | None = None
        self.count = 0

    def _uuid(self) -> str:
        self.count += 1
        return f"{self.session[:8]}-{self.count:04d}-4000-8000-{self.rng.getrandbits(48):012x}"

    def _line(self, kind: str, at: str, **fields: Any) -> None:
        uuid = self._uuid()
        self.lines.append(
            {
                "parentUuid": self.last,
                "isSidechain": self.agent is not None,
                "userType": "external",
                "cwd": self.cwd,
                "sessionId": self.session,
                "version": "2.1.38",
                "gitBranch": "main",
                **({} if self.agent is None else {"agentId": self.agent}),
                "type": kind,
                "uuid": uuid,
                "timestamp": at,
                **fields,
            }
        )
        self.last = uuid

    def user(self, at: str, text: str) -> None:
        self._line("user", at, message={"role": "user", "content": text})

    def reply(
        self,
        at: tuple[int, float],
        model: str,
        usage: dict[str, int],
        *,
        lines: int,
        request_id: bool = True,
    ) -> None:
        message_id = f"msg_{self.rng.getrandbits(64):016x}"
        request = f"req_{self.rng.getrandbits(64):016x}"
        day, seconds = at
        for n in range(lines):
            final = n == lines - 1
            counts = {
                "input_tokens": usage["input"],
                "cache_creation_input_tokens": usage["write_5m"] + usage["write_1h"],
                "cache_read_input_tokens": usage["read"],
                "cache_creation": {
                    "ephemeral_5m_input_tokens": usage["write_5m"],
                    "ephemeral_1h_input_tokens": usage["write_1h"],
                },
                "output_tokens": usage["output"] if final else self.rng.randint(1, 12),
                "service_tier": "standard",
            }
            message = {
                "model": model,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": f"part {n + 1} of the answer"}],
                "stop_reason": "end_turn" if final else None,
                "stop_sequence": None,
                "usage": counts,
            }
            fields: dict[str, Any] = {"message": message}
            if request_id:
                fields["requestId"] = request
            self._line("assistant", _iso(day, seconds + n * 0.7), **fields)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(_compact(line) for line in self.lines))


def _usage(rng: random.Random, *, read: int | None = None) -> dict[str, int]:
    hour = rng.random() < 0.5
    write = rng.randint(200, 30_000)
    return {
        "input": rng.randint(1, 40),
        "output": rng.randint(20, 4_000),
        "read": rng.randint(1_000, 150_000) if read is None else read,
        "write_5m": 0 if hour else write,
        "write_1h": write if hour else 0,
    }


CLAUDE_MODELS = ("claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001")


def generate_claude(rng: random.Random, projects: Path) -> None:
    for project, sessions in (("-work-gen-alpha", 2), ("-work-gen-beta", 1)):
        for number in range(sessions):
            session_id = f"{rng.getrandbits(32):08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
            cwd = "/work/gen-" + project.rsplit("-", 1)[1]
            session = ClaudeSession(rng, session_id, cwd)
            for day in (9, 10, 11):
                clock = 3600.0 * (8 + 4 * number)
                for turn in range(rng.randint(3, 6)):
                    session.user(_iso(day, clock), f"question {turn} of day {day}")
                    model = rng.choice(CLAUDE_MODELS)
                    session.reply((day, clock + 2), model, _usage(rng), lines=rng.randint(1, 4))
                    clock += 120
            if project.endswith("alpha") and number == 0:
                # one message streamed without request ids, one request past 200,000 input tokens
                session.user(_iso(11, 80_000), "and without a request id?")
                session.reply((11, 80_002), CLAUDE_MODELS[1], _usage(rng), lines=3, request_id=False)
                session.user(_iso(11, 80_100), "read the whole repository")
                session.reply((11, 80_102), CLAUDE_MODELS[1], _usage(rng, read=230_000), lines=2)
                agent = ClaudeSession(rng, session_id, cwd, agent="a1b2c3d")
                agent.user(_iso(10, 50_000), "explore the tests")
                for step in range(3):
                    agent.reply((10, 50_002 + 60 * step), CLAUDE_MODELS[2], _usage(rng), lines=2)
                agent.write(projects / project / session_id / "subagents" / "agent-a1b2c3d.jsonl")
            session.write(projects / project / f"{session_id}.jsonl")


def _codex_line(at: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "payload": payload}


def generate_codex(rng: random.Random, sessions: Path) -> None:
    for number, (day, model) in enumerate(((9, "gpt-5.5"), (10, "gpt-5-codex"), (10, "gpt-5.5"))):
        session_id = f"019e{rng.getrandbits(28):07x}-0000-7000-8000-{rng.getrandbits(48):012x}"
        clock = 3600.0 * (9 + 3 * number)
        started = _iso(day, clock)
        lines = [
            _codex_line(
                _iso(day, clock),
                "session_meta",
                {
                    "id": session_id,
                    "timestamp": _iso(day, clock),
                    "cwd": "/work/gen-codex",
                    "originator": "codex_cli_rs",
                    "cli_version": "0.125.0",
                    "source": "cli",
                    "model_provider": "openai",
                },
            ),
            _codex_line(_iso(day, clock + 1), "turn_context", {"cwd": "/work/gen-codex", "model": model}),
            _codex_line(
                _iso(day, clock + 2),
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "fix the failing test"}],
                },
            ),
        ]
        total = dict.fromkeys(
            (
                "input_tokens",
                "cached_input_tokens",
                "output_tokens",
                "reasoning_output_tokens",
                "total_tokens",
            ),
            0,
        )
        for step in range(rng.randint(4, 8)):
            clock += 30
            call = f"call_{rng.getrandbits(40):010x}"
            lines.append(
                _codex_line(
                    _iso(day, clock),
                    "response_item",
                    {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "x"},
                )
            )
            lines.append(
                _codex_line(
                    _iso(day, clock + 1),
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "exec_command",
                        "arguments": json.dumps({"cmd": f"ls {step}"}),
                        "call_id": call,
                    },
                )
            )
            prompt = rng.randint(10_000, 120_000)
            reasoning = rng.randint(0, 300)
            last = {
                "input_tokens": prompt,
                "cached_input_tokens": rng.randint(0, prompt) // 128 * 128,
                "output_tokens": reasoning + rng.randint(20, 400),
                "reasoning_output_tokens": reasoning,
            }
            last["total_tokens"] = last["input_tokens"] + last["output_tokens"]
            total = {key: total[key] + last[key] for key in total}
            count = {
                "type": "token_count",
                "info": {
                    "total_token_usage": dict(total),
                    "last_token_usage": last,
                    "model_context_window": 258_400,
                },
                "rate_limits": None,
            }
            lines.append(_codex_line(_iso(day, clock + 2), "event_msg", count))
            if number == 0 and step == 1:  # the same count again: a repeat, no new request
                lines.append(_codex_line(_iso(day, clock + 3), "event_msg", count))
            lines.append(
                _codex_line(
                    _iso(day, clock + 4),
                    "response_item",
                    {"type": "function_call_output", "call_id": call, "output": "ok"},
                )
            )
            if number == 0 and step == 2:
                # the task ends; the next prompt comes the next day (the turn before it keeps its own day)
                day, clock = day + 1, 3600.0
                lines.append(
                    _codex_line(
                        _iso(day, clock),
                        "response_item",
                        {
                            "type": "message",
                            "role": "user",
                            "content": [{"type": "input_text", "text": "and now?"}],
                        },
                    )
                )
        stamp = started.replace(":", "-")[:19]  # Codex names a rollout by the time it started
        path = sessions / "2026" / "03" / stamp[8:10] / f"rollout-{stamp}-{session_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(_compact(line) for line in lines))


def generate(work: Path, seed: int) -> Folders:
    folders = Folders("generated", work / "generated/claude", work / "generated/codex")
    rng = random.Random(seed)
    generate_claude(rng, folders.claude / "projects")
    generate_codex(rng, folders.codex / "sessions")
    return folders


# --- the two tools -------------------------------------------------------------------------------------


def _env(folders: Folders, home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)  # an empty home: ccusage finds no other agent's data
    return os.environ | {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(folders.claude),
        "CODEX_HOME": str(folders.codex),
        "TZ": "UTC",
        "NO_COLOR": "1",
    }


def run_ccusage(ccusage: str, folders: Folders, home: Path) -> tuple[Cells, dict[str, Any]]:
    env = _env(folders, home)
    daily = subprocess.run(
        [ccusage, "daily", "--json", "--offline", "--timezone", "UTC", "--by-agent"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    cells: Cells = defaultdict(Cell)
    for row in json.loads(daily.stdout)["daily"]:
        for agent in row["agents"]:
            for model in agent["modelBreakdowns"]:
                cell = cells[(row["period"], model["modelName"])]
                tokens = Tokens(
                    input=model["inputTokens"],
                    output=model["outputTokens"],
                    cache_write=model["cacheCreationTokens"],
                    cache_read=model["cacheReadTokens"],
                )
                cell.add(tokens, Decimal(repr(model["cost"])))
    codex = subprocess.run(
        [ccusage, "codex", "daily", "--json", "--offline", "--timezone", "UTC"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return cells, json.loads(codex.stdout)


def run_waybook(folders: Folders, work: Path) -> Cells:
    store = f"file:{work / 'store'}"
    waybook = [sys.executable, "-m", "waybook"]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    for fmt, folder in (("claude-code", folders.claude / "projects"), ("codex", folders.codex / "sessions")):
        ran = subprocess.run(
            [*waybook, "import", fmt, str(folder), "--store", store], env=env, capture_output=True, text=True
        )
        if ran.returncode:
            msg = f"waybook import {fmt} {folder} failed:\n{ran.stderr}"
            raise SystemExit(msg)
    ran = subprocess.run(
        [*waybook, "stats", "--store", store, "--by", "day", "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    cells: Cells = defaultdict(Cell)
    for row in json.loads(ran.stdout)["rows"]:
        for model in row["models"]:
            t = model["tokens"]
            tokens = Tokens(
                input=t["input"], output=t["output"], cache_write=t["cache_write"], cache_read=t["cache_read"]
            )
            cost = model["cost_usd"]
            cells[(row["day"], model["model"])].add(
                tokens, None if cost is None else Decimal(repr(cost["total"]))
            )
    return cells


# --- the rules, from the source files alone -------------------------------------------------------------


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    for text in path.read_text().splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if isinstance(line, dict):
            yield line


def _claude_tokens(usage: dict[str, Any]) -> Tokens:
    split = usage.get("cache_creation")
    if isinstance(split, dict):
        hour = split.get("ephemeral_1h_input_tokens", 0)
        write = split.get("ephemeral_5m_input_tokens", 0) + hour
    else:
        hour, write = 0, usage.get("cache_creation_input_tokens", 0)
    return Tokens(
        input=usage.get("input_tokens", 0),
        output=usage.get("output_tokens", 0),
        cache_read=usage.get("cache_read_input_tokens", 0),
        cache_write=write,
        cache_write_1h=hour,
    )


@dataclass
class Use:
    at: str
    model: str
    tokens: Tokens


def _minus(a: Tokens, b: Tokens) -> Tokens:
    return Tokens(
        a.input - b.input,
        a.output - b.output,
        a.cache_read - b.cache_read,
        a.cache_write - b.cache_write,
        a.cache_write_1h - b.cache_write_1h,
    )


class RuleBook:
    def __init__(self, prices: GenaiPrices) -> None:
        self.prices = prices
        self.deltas: list[Delta] = []

    def cost(self, use: Use) -> Decimal:
        rates = self.prices.rates(use.model, instant(use.at))
        return Decimal(0) if rates is None else price(use.tokens, rates).total

    def add(self, rule: str, use: Use, cost: Decimal | None = None) -> None:
        self.deltas.append(
            Delta(rule, use.at[:10], use.model, use.tokens, self.cost(use) if cost is None else cost)
        )

    def claude(self, projects: Path) -> None:
        direct: dict[tuple[str, str], list[Use]] = defaultdict(list)  # (message id, request id) -> lines
        relayed: dict[tuple[str, str], list[Use]] = defaultdict(list)
        for path in sorted(projects.rglob("*.jsonl")):
            no_request: dict[str, list[Use]] = defaultdict(list)
            for line in _jsonl(path):
                message, relay = line.get("message"), False
                if line.get("type") == "progress":
                    inner = (line.get("data") or {}).get("message") or {}
                    line, message, relay = inner, inner.get("message"), True
                if not isinstance(message, dict) or not isinstance(message.get("usage"), dict):
                    continue
                if line.get("type") != "assistant" and not relay:
                    continue
                use = Use(line["timestamp"], message.get("model", ""), _claude_tokens(message["usage"]))
                if message.get("id") and line.get("requestId"):
                    (relayed if relay else direct)[(message["id"], line["requestId"])].append(use)
                elif not relay and message.get("id"):
                    no_request[message["id"]].append(use)
            for uses in no_request.values():
                for use in uses[:-1]:  # waybook counts the message once, its last line
                    self.add("no-request-id", use)
        for key, uses in relayed.items():
            if key not in direct:
                self.add("progress-relay", max(uses, key=lambda u: u.tokens.total))
        for uses in direct.values():
            kept, last = max(uses, key=lambda u: u.tokens.total), uses[-1]
            if kept.tokens != last.tokens:
                self.add("max-not-last", Use(kept.at, kept.model, _minus(kept.tokens, last.tokens)))
            self.long_context(kept)

    def long_context(self, use: Use) -> None:
        rates = self.prices.rates(use.model, instant(use.at))
        if rates is None or use.tokens.input_with_cache <= 200_000:
            return
        t = use.tokens

        def per_category(tokens: int, rate: Any, scale: int = 1) -> Decimal:
            if rate is None or not rate.tiers or tokens <= 200_000:
                return tokens * rate.base * scale if rate is not None else Decimal(0)
            return (200_000 * rate.base + (tokens - 200_000) * rate.tiers[0][1]) * scale

        ccusage = (
            per_category(t.input, rates.input)
            + per_category(t.output, rates.output)
            + per_category(t.cache_write - t.cache_write_1h, rates.cache_write)
            + per_category(t.cache_write_1h, rates.input, 2)  # ccusage: 1-hour writes at twice the input rate
            + per_category(t.cache_read, rates.cache_read)
        ) / 1_000_000
        self.add("long-context", Use(use.at, use.model, Tokens()), ccusage - price(t, rates).total)


# --- the comparison -----------------------------------------------------------------------------------


def compare(
    name: str, ccusage: Cells, waybook: Cells, deltas: list[Delta], codex_daily: dict[str, Any]
) -> bool:
    explained: dict[tuple[str, str], Cell] = defaultdict(Cell)
    rules: dict[tuple[str, str], set[str]] = defaultdict(set)
    for delta in deltas:
        explained[(delta.day, delta.model)].add(delta.tokens, delta.cost)
        if delta.tokens.total or delta.cost:
            rules[(delta.day, delta.model)].add(delta.rule)
    ok = True
    print(f"\n== {name}: ccusage daily --json --offline vs waybook stats --by day --json")
    print(f"{'day':<10}  {'model':<34} {'tokens':>13}  {'ccusage $':>10} {'waybook $':>10}  rules")
    for key in sorted(set(ccusage) | set(waybook)):
        theirs, ours, extra = ccusage.get(key, Cell()), waybook.get(key, Cell()), explained.get(key, Cell())
        expected = {c: ours.tokens[c] + extra.tokens[c] for c in CATEGORIES}
        tokens_ok = expected == theirs.tokens
        used = set(rules.get(key, ()))
        if ours.cost is None:
            used.add("unknown-model")
            cost_ok = True
        else:
            target = ours.cost + (extra.cost or 0)
            cost_ok = abs((theirs.cost or Decimal(0)) - target) <= TOLERANCE * max(
                theirs.cost or Decimal(0), target
            )
        ok &= tokens_ok and cost_ok
        shown = sum(theirs.tokens.values())
        mark = (
            ""
            if tokens_ok and cost_ok
            else "  <-- DIFFERS: "
            + ("" if tokens_ok else f"tokens {theirs.tokens} vs {expected} ")
            + ("" if cost_ok else "cost")
        )
        ours_cost = "-" if ours.cost is None else f"{ours.cost:.4f}"
        print(
            f"{key[0]:<10}  {key[1][:34]:<34} {shown:>13,}  {theirs.cost or 0:>10.4f} {ours_cost:>10}  "
            f"{', '.join(sorted(used)) or '='}{mark}"
        )
    # `ccusage codex daily` (the Codex command) reports the same Codex days as `ccusage daily`.
    for row in codex_daily.get("daily", []):
        found = [
            cell for (day, _model), cell in ccusage.items() if day == row["date"] and _model in row["models"]
        ]
        same = (
            sum(c.tokens["input"] for c in found) == row["inputTokens"]
            and sum(c.tokens["cache_read"] for c in found) == row["cacheReadTokens"]
        )
        print(
            f"ccusage codex daily {row['date']}: "
            + ("same as" if same else "DIFFERS from")
            + " ccusage daily"
        )
        ok &= same
    used_rules = sorted(
        {d.rule for d in deltas if d.tokens.total or d.cost}
        | ({"unknown-model"} if any(c.cost is None for c in waybook.values()) else set())
    )
    for rule in used_rules:
        mine = [d for d in deltas if d.rule == rule]
        tokens, cost = sum(d.tokens.total for d in mine), sum(d.cost for d in mine)
        effect = f" ({len(mine)} requests, {tokens:,} tokens, ${cost:+.4f})"
        print(f"  rule {rule}{effect if mine else ''}: {RULES[rule]}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ccusage", required=True, help="the ccusage executable")
    parser.add_argument("--work", type=Path, required=True, help="a scratch folder (emptied first)")
    parser.add_argument("--fixtures", type=Path, default=Path("/work/shared/fixtures"))
    parser.add_argument("--seed", type=int, default=47)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    prices = GenaiPrices()
    cases = [generate(args.work, args.seed)]
    if (args.fixtures / "claude-code").is_dir():
        cases.insert(0, arrange_fixtures(args.fixtures, args.work))
    else:
        print(f"(no shared fixtures at {args.fixtures}: the generated sessions only)")
    ok = True
    for folders in cases:
        theirs, codex_daily = run_ccusage(args.ccusage, folders, args.work / folders.name / "home")
        ours = run_waybook(folders, args.work / folders.name)
        rules = RuleBook(prices)
        rules.claude(folders.claude / "projects")
        ok &= compare(folders.name, theirs, ours, rules.deltas, codex_daily)
    print("\nccusage comparison: " + ("every difference is a documented rule" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
