"""The checks of scripts/otel_phoenix.sh, run in its venv (Arize Phoenix and waybook[otel]) against its
Phoenix: send real sessions with `waybook otel send`, read the spans back with Phoenix's own client,
compare them with `waybook stats --json`, and take a screenshot of a trace in Phoenix's UI.

Every check is named and counted; the last line is "otel_phoenix: N passed, M failed" (exit 1 on a
failure). Nothing here sleeps to wait: each wait polls a state (Phoenix's health, its span count) until
it holds or a deadline passes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

SESSION = "258c7280-ae70-4798-800f-63464d01a85d"
SUBAGENTS = (f"{SESSION}.agent-a881341", f"{SESSION}.agent-acompact-fffbd0")
SECRET = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"  # in the demo session's first tool result
DEADLINE = 120.0


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed: list[str] = []

    def check(self, name: str, ok: bool, detail: Any = "") -> None:
        print(f"{'PASS' if ok else 'FAIL'} {name}" + ("" if ok else f": {detail}"), flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed.append(name)


def waybook(*args: Any) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "waybook", *map(str, args)], capture_output=True, text=True, check=False
    )
    if run.returncode != 0:
        msg = f"waybook {' '.join(map(str, args))} failed ({run.returncode}):\n{run.stderr}"
        raise SystemExit(msg)
    return run.stdout


def until(what: str, probe: Callable[[], Any], done: Callable[[Any], bool]) -> Any:
    """Poll `probe` until `done(value)` or the deadline; the last value either way."""
    end = time.monotonic() + DEADLINE
    while True:
        try:
            value = probe()
        except OSError:
            value = None
        if (value is not None and done(value)) or time.monotonic() > end:
            if value is None:
                msg = f"gave up waiting for {what}"
                raise SystemExit(msg)
            return value
        time.sleep(0.25)  # a poll interval, not a wait for an outcome


def healthy(url: str, pid: int) -> bool:
    if not Path(f"/proc/{pid}").exists():
        msg = "Phoenix exited before it was up (see phoenix.log)"
        raise SystemExit(msg)
    with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
        return bool(answer.status == 200)


def expected_spans(tally: dict[str, Any], *, nested: bool) -> int:
    """What `waybook otel send` makes of a journal `waybook stats` counted: an invoke_agent span per
    turn, a chat span per reply, an execute_tool span per tool call; a sub-agent adds its own root."""
    return tally["turns"] + tally["replies"] + sum(tally["tool_calls"].values()) + (1 if nested else 0)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phoenix", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--fixtures", type=Path, required=True)
    parser.add_argument("--screenshot", required=True)
    args = parser.parse_args()
    from phoenix.client import Client

    checks = Checks()
    until("Phoenix to be up", lambda: healthy(args.phoenix, args.pid), bool)
    store = f"file:{args.work / 'store'}"
    waybook("import", "claude-code", args.fixtures, "--store", store)
    demo = args.work / "demo"
    waybook("demo", demo)
    stats = json.loads(waybook("stats", "--store", store, "--json"))
    stats["demo-session"] = json.loads(waybook("stats", demo / "session.jsonl", "--json"))[
        str(demo / "session.jsonl")
    ]
    sent = json.loads(
        waybook("otel", "send", "--store", store, SESSION, "--endpoint", args.phoenix, "--json")
    )
    checks.check(
        "the session is sent with both sub-agents",
        sorted(sent["journals"][0]["subagents"]) == sorted(SUBAGENTS),  # in link order, which imports decide
        sent["journals"][0]["subagents"],
    )
    demo_sent = json.loads(
        waybook(
            "otel", "send", demo / "session.jsonl", "--endpoint", args.phoenix, "--content", "full", "--json"
        )
    )
    journals = {SESSION: False, **dict.fromkeys(SUBAGENTS, True), "demo-session": False}
    expected = {j: expected_spans(stats[j]["total"], nested=nested) for j, nested in journals.items()}
    total = sum(expected.values())
    checks.check("waybook reports the spans stats counts", sent["spans"] + demo_sent["spans"] == total)

    client = Client(base_url=args.phoenix)

    def spans() -> Any:
        return client.spans.get_spans_dataframe(project_identifier="default", limit=total + 1000)

    frame = until("Phoenix to store every span", spans, lambda f: len(f) >= total)
    rows = frame.to_dict("records")  # context.span_id is a column too
    print(f"Phoenix holds {len(rows)} spans; {total} were sent")
    checks.check("Phoenix holds exactly the spans sent", len(rows) == total, len(rows))

    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_session.setdefault(row.get("attributes.session.id"), []).append(row)
    ids = {row["context.span_id"]: row for row in rows}
    for journal, count in expected.items():
        mine = by_session.get(journal, [])
        checks.check(
            f"{journal}: span count is stats' turns + replies + tool calls",
            len(mine) == count,
            (len(mine), count),
        )
        tally = stats[journal]["total"]
        tools = Counter(r["attributes.tool.name"] for r in mine if r["span_kind"] == "TOOL")
        checks.check(
            f"{journal}: tool names and counts are stats'",
            dict(tools) == tally["tool_calls"],
            (dict(tools), tally["tool_calls"]),
        )
        models: dict[str, Counter[str]] = {}
        for row in mine:
            if row["span_kind"] == "LLM" and _number(row.get("attributes.llm.token_count.completion")):
                counts = models.setdefault(row["attributes.llm.model_name"], Counter())
                counts["output"] += _number(row["attributes.llm.token_count.completion"])
                counts["prompt"] += _number(row.get("attributes.llm.token_count.prompt"))
                counts["cache_read"] += _number(
                    row.get("attributes.llm.token_count.prompt_details.cache_read")
                )
        wanted = {
            model: Counter(
                output=c.get("output_tokens", 0),
                prompt=c.get("input_tokens", 0)
                + c.get("cache_read_input_tokens", 0)
                + c.get("cache_creation_input_tokens", 0),
                cache_read=c.get("cache_read_input_tokens", 0),
            )
            for model, c in tally["tokens"].items()
        }
        checks.check(
            f"{journal}: model names are stats'", set(models) == set(wanted), (set(models), set(wanted))
        )
        checks.check(f"{journal}: token counts per model are stats'", models == wanted, (models, wanted))
        for row in mine:
            parent = ids.get(row["parent_id"]) if isinstance(row["parent_id"], str) else None
            if row["span_kind"] in ("LLM", "TOOL") and (parent is None or parent["span_kind"] != "AGENT"):
                checks.check(f"{journal}: every model and tool span is under its turn", False, row["name"])
                break
        else:
            checks.check(f"{journal}: every model and tool span is under its turn", bool(mine))
    for journal in SUBAGENTS:
        roots = [
            r
            for r in by_session.get(journal, [])
            if ids.get(r["parent_id"], {}).get("attributes.session.id") == SESSION
        ]
        spawner = ids[roots[0]["parent_id"]] if len(roots) == 1 else None
        checks.check(
            f"{journal}: its root is a child of a tool call of the session, in that call's trace",
            spawner is not None
            and spawner["span_kind"] == "TOOL"
            and spawner["context.trace_id"] == roots[0]["context.trace_id"],
            [r["name"] for r in roots],
        )
    dangling = [r["name"] for r in rows if isinstance(r["parent_id"], str) and r["parent_id"] not in ids]
    checks.check("every parent id names a span Phoenix holds", not dangling, dangling[:5])

    def content(row: dict[str, Any]) -> bool:
        return any(
            key.startswith(("attributes.llm.input_messages", "attributes.llm.output_messages"))
            and row[key] is not None
            and row[key] == row[key]
            for key in row
        ) or isinstance(row.get("attributes.tool.parameters"), str)

    claude = [r for j in (SESSION, *SUBAGENTS) for r in by_session.get(j, [])]
    checks.check("without --content no span carries messages", not any(content(r) for r in claude))
    demo_llm = [r for r in by_session.get("demo-session", []) if r["span_kind"] == "LLM"]
    checks.check(
        "with --content full every model call carries its messages", all(content(r) for r in demo_llm)
    )
    dump = frame.to_json(default_handler=str, date_format="iso")
    checks.check(
        "the secret in the demo session reached Phoenix masked",
        SECRET not in dump and "[REDACTED:stripe-key]" in dump,
    )

    # The demo again (the same ids), then once more as one session trace (new ids: a session root, its
    # turns and calls): when the second lot is in, the first was taken too, and added nothing.
    waybook("otel", "send", demo / "session.jsonl", "--endpoint", args.phoenix, "--content", "full")
    marker = json.loads(
        waybook(
            "otel",
            "send",
            demo / "session.jsonl",
            "--endpoint",
            args.phoenix,
            "--traces",
            "session",
            "--json",
        )
    )["spans"]
    again = until("Phoenix to take the later sends", spans, lambda f: len(f) >= total + marker)
    checks.check(
        "sending again adds no span (the same ids)", len(again) == total + marker, (len(again), marker)
    )

    if args.screenshot != "none":
        checks.check("a screenshot of the sub-agent's trace", _screenshot(args, rows))
    print(f"otel_phoenix: {checks.passed} passed, {len(checks.failed)} failed")
    return 1 if checks.failed else 0


def _number(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and value == value else 0


def _screenshot(args: argparse.Namespace, rows: list[dict[str, Any]]) -> bool:
    """Phoenix's trace page for the session's sub-agent span (its trace, with that span open), taken
    by Debian's headless Chromium with the flags the viewer's tests use."""
    chromium = shutil.which("chromium")
    if chromium is None:
        print("chromium is not installed: apt-get install chromium")
        return False
    (agent,) = [
        r
        for r in rows
        if r.get("attributes.session.id") == SUBAGENTS[0]
        and r["parent_id"]
        in {x["context.span_id"] for x in rows if x.get("attributes.session.id") == SESSION}
    ]
    target = Path(args.screenshot)
    target.parent.mkdir(parents=True, exist_ok=True)
    profile = args.work / "chromium"
    run = subprocess.run(
        [
            chromium,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--window-size=1600,1000",
            "--virtual-time-budget=20000",
            f"--screenshot={target}",
            f"{args.phoenix}/redirects/spans/{agent['context.span_id']}",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, "HOME": str(profile)},
    )
    ok = run.returncode == 0 and target.is_file() and target.stat().st_size > 20_000
    print(f"screenshot: {target} ({target.stat().st_size if target.is_file() else 0} bytes)")
    return ok


if __name__ == "__main__":
    sys.exit(main())
