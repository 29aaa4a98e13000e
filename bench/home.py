"""A whole home (issue 50): `waybook import auto` of 2,000 real-shaped Claude Code and Codex sessions.

The home is generated from the real sessions of the shared fixtures (/work/shared/fixtures): each
session is a copy of one of them (Claude Code: the long spotter session with its `subagents/` folder,
the three short spotter sessions, the codemie session with its sub-agents beside it, the older layout;
Codex: the rollout) with fresh ids (every UUID, and each sub-agent's id, mapped to a new one), its times
moved by a whole number of minutes, and a prefix of its lines kept (30-100 %, so lengths vary; a sub-agent
file is copied whole). A session file is named by a UUID, as Claude Code names them (a fixture named for
its shape, `short.jsonl`, gets a fresh one: copies named alike replaced each other, and a home of 2,000
sessions held 1,529). Claude Code sessions go to `HOME/.claude/projects/<project>/` (25 sessions a
project), Codex rollouts to `HOME/.codex/sessions/YYYY/MM/DD/`, half each. The seed makes the folder
byte-identical from run to run.

Each size runs, in its own process each (CPU time from `wait4`, peak RSS the process's own VmHWM),
`waybook import auto` of the Claude Code projects folder and of the Codex sessions folder into one new
`file:` store, then `waybook verify --store`
of every journal (the full proof, as a check that the import is sound: a failure stops the bench).
Rows, per size: `import auto at S sessions: records/s` (records written, over both imports' wall time
including start-up; goal at least 5,000), `records per CPU second` (over their user + system time: what
an idle core gives, on a machine whose load moves the wall time) and `import auto at S sessions: peak
RSS` (the larger of the two imports'); then `peak RSS at the largest / at the smallest size` (goal at
most 1.25: independent of the folder's size). `--rounds` repeats each size (alternating the sizes) and
reports the medians.

`--against DIR` runs another checkout's code (the code before a change) alternately with this one, on
the same homes: its rows again, marked `(against)`, and per size the paired ratios (median over rounds)
`records per CPU second, this / against`, `records/s (wall), this / against` and `peak RSS, this /
against`, and whether every journal file is byte-identical between the two stores.

Run: `python -m bench.home [--sessions 500 2000] [--rounds 1] [--keep DIR] [--against DIR]`; writes
bench/home.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import filecmp
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).with_name("home.json")
FIXTURES = Path(os.environ.get("WAYBOOK_FIXTURES", "/work/shared/fixtures"))
SESSIONS_PER_PROJECT = 25
SEED = 50
CATALOG = "_catalog"


@attrs.frozen
class Template:
    """A real session to copy: its file, its sub-agents' files (and whether they lie beside it)."""

    format: str
    session: Path
    subagents: tuple[Path, ...] = ()
    beside: bool = False


def templates() -> list[Template]:
    cc = FIXTURES / "claude-code"
    spotter, codemie = cc / "spotter", cc / "codemie"
    long_id = "258c7280-ae70-4798-800f-63464d01a85d"
    return [
        Template(
            "claude-code",
            spotter / f"{long_id}.jsonl",
            tuple(sorted((spotter / long_id / "subagents").glob("agent-*.jsonl"))),
        ),
        Template("claude-code", spotter / "short.jsonl"),
        Template("claude-code", spotter / "tool_heavy.jsonl"),
        Template("claude-code", spotter / "subagent.jsonl"),
        Template(
            "claude-code",
            codemie / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
            tuple(sorted(codemie.glob("agent-*.jsonl"))),
            beside=True,
        ),
        Template("codex", next((FIXTURES / "codex").glob("rollout-*.jsonl"))),
    ]


UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(rb"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
AGENT = re.compile(r"agent-(.+)\.jsonl")


class Copier:
    """One copy of a template: every UUID and sub-agent id mapped to a fresh one, times shifted."""

    def __init__(self, rng: random.Random, shift: dt.timedelta, agent_ids: list[str]) -> None:
        self.rng, self.shift = rng, shift
        self.ids: dict[bytes, bytes] = {}
        self.agents = {old.encode(): self._agent_id(old).encode() for old in agent_ids}

    def _agent_id(self, old: str) -> str:
        prefix = "acompact-" if old.startswith("acompact-") else ("a" if old.startswith("a") else "")
        size = len(old) - len(prefix)
        return prefix + f"{self.rng.getrandbits(4 * size):0{size}x}"

    def _uuid(self, match: re.Match[bytes]) -> bytes:
        old = match.group()
        if old not in self.ids:
            self.ids[old] = str(uuid.UUID(int=self.rng.getrandbits(128), version=4)).encode()
        return self.ids[old]

    def _time(self, match: re.Match[bytes]) -> bytes:
        at = dt.datetime.strptime(match.group().decode(), "%Y-%m-%dT%H:%M:%S.%fZ") + self.shift
        return (at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z").encode()

    def text(self, data: bytes) -> bytes:
        data = TIME.sub(self._time, UUID.sub(self._uuid, data))
        for old, new in self.agents.items():
            data = data.replace(old, new)
        return data

    def name(self, old: str) -> str:
        return self.text(old.encode()).decode()


def prefix(data: bytes, fraction: float) -> bytes:
    """The first `fraction` of the lines (at least 10, or all), each whole."""
    lines = data.splitlines(keepends=True)
    keep = max(min(10, len(lines)), round(len(lines) * fraction))
    return b"".join(lines[:keep])


def generate(home: Path, sessions: int, *, seed: int = SEED) -> dict[str, Path]:
    """`sessions` sessions under `home` (half Claude Code, half Codex); the two folders to import."""
    rng = random.Random(seed)
    cc_templates = [t for t in templates() if t.format == "claude-code"]
    codex_template = next(t for t in templates() if t.format == "codex")
    reads = {p: p.read_bytes() for t in templates() for p in (t.session, *t.subagents)}
    projects, codex_root = home / ".claude" / "projects", home / ".codex" / "sessions"
    for i in range(sessions):
        template = cc_templates[rng.randrange(len(cc_templates))] if i % 2 == 0 else codex_template
        shift = dt.timedelta(minutes=rng.randrange(0, 60 * 24 * 365))
        agents = [m.group(1) for p in template.subagents if (m := AGENT.fullmatch(p.name))]
        copier = Copier(rng, shift, agents)
        data = copier.text(prefix(reads[template.session], rng.uniform(0.3, 1.0)))
        if template.format == "codex":
            at = TIME.search(data)
            assert at is not None
            day = at.group()[:10].decode().split("-")
            folder = codex_root.joinpath(*day)
            target = folder / copier.name(template.session.name)
        else:
            folder = projects / f"-home-user-project-{i // 2 // SESSIONS_PER_PROJECT:03d}"
            target = folder / copier.name(template.session.name)
            if not UUID.fullmatch(template.session.stem.encode()):  # (a fixture named for its shape)
                target = folder / f"{uuid.uuid5(uuid.NAMESPACE_URL, f'waybook-home-{seed}-{i}')}.jsonl"
        folder.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        for agent in template.subagents:
            where = folder if template.beside else folder / target.stem / "subagents"
            where.mkdir(parents=True, exist_ok=True)
            (where / copier.name(agent.name)).write_bytes(copier.text(reads[agent]))
    return {"claude-code": projects, "codex": codex_root}


PEAK_PROBE = """\
import os, runpy, sys
peak_file = os.environ.pop("WAYBOOK_BENCH_PEAK_FILE")
try:
    runpy.run_module("waybook", run_name="__main__", alter_sys=True)
finally:
    with open("/proc/self/status") as status, open(peak_file, "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
"""
"""`python -m waybook` that writes, as it exits, its own peak RSS (VmHWM, in KiB) to a file. Not the
child's `ru_maxrss` from `wait4`: Linux carries the parent's high-water mark across the (v)fork and
exec into the child's, so a bench that once held 500 MiB reports every later child at 500 MiB or more
(this bench's `--against` comparison read both stores whole, and the 2,000-session rows showed it)."""


def run_waybook(
    args: list[str], *, cwd: Path, ok: tuple[int, ...] = (0,), code: Path = ROOT
) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS in MiB and stdout of `python -m waybook ARGS`
    (the code of the checkout `code`, by default this one); an exit status not in `ok` stops the bench.
    The peak is the process's own (`PEAK_PROBE`), whatever this process holds."""
    cwd.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as tmp,
    ):
        peak_file = Path(tmp) / "peak"
        env = {
            **os.environ,
            "PYTHONPATH": str(code),
            "COLUMNS": "120",
            "WAYBOOK_BENCH_PEAK_FILE": str(peak_file),
        }
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-c", PEAK_PROBE, *args], stdout=out, stderr=err, env=env, cwd=cwd
        )
        _, status, usage = os.wait4(process.pid, 0)  # not process.wait(): wait4 gives its CPU time
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode not in ok:
            msg = f"waybook {' '.join(args)} failed ({process.returncode}): {err.read().decode()[-2000:]}"
            raise SystemExit(msg)
        cpu = usage.ru_utime + usage.ru_stime
        return seconds, cpu, int(peak_file.read_text()) / 1024, out.read().decode()


def one_run(
    folders: dict[str, Path], scratch: Path, *, code: Path = ROOT, verify: bool = True
) -> dict[str, float]:
    """Import both folders into a new store with the code of `code`; with `verify`, prove every journal
    (this checkout's `verify --store`: a failure stops the bench); the figures."""
    store = scratch / "store"
    shutil.rmtree(store, ignore_errors=True)
    url = f"file:{store}"
    seconds, cpu, peak = 0.0, 0.0, 0.0
    for folder in folders.values():
        import_args = ["import", "auto", str(folder), "--store", url, "--json"]
        s, c, rss, _ = run_waybook(import_args, cwd=scratch, code=code)
        seconds, cpu, peak = seconds + s, cpu + c, max(peak, rss)
    records = sum(p.read_bytes().count(b"\n") for p in (store / "journals").glob("*.jsonl"))
    got = {"seconds": seconds, "cpu_seconds": cpu, "peak_mib": peak, "records": records}
    if verify:
        # status 1: a problem reported; the spotter session that names a sub-agent transcript its fixture
        # lacks is reported as a missing link (as the real session is); every journal must still prove
        verify_args = ["verify", "--store", url, "--json"]
        verify_s, _, verify_rss, out = run_waybook(verify_args, cwd=scratch, ok=(0, 1))
        reports = [r for r in json.loads(out) if r["path"] != CATALOG]
        bad = [r["path"] for r in reports if not r["ok"]]
        if bad:
            msg = f"the imported store does not verify: {', '.join(bad[:10])}"
            raise SystemExit(msg)
        if sum(int(r["records"]) for r in reports) != records:
            raise SystemExit("the store's proof counts other records than its journal files hold")
        got |= {"verify_seconds": verify_s, "verify_peak_mib": verify_rss}
    return got


def same_journals(one: Path, other: Path) -> bool:
    """Whether the two scratch folders' stores hold the same journal files, byte for byte (compared a
    file at a time: this process's memory stays small, whatever the stores' size)."""
    names = sorted(p.name for p in (one / "store" / "journals").glob("*.jsonl"))
    if names != sorted(p.name for p in (other / "store" / "journals").glob("*.jsonl")):
        return False
    return all(
        filecmp.cmp(one / "store" / "journals" / name, other / "store" / "journals" / name, shallow=False)
        for name in names
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--keep", type=Path, help="generate the homes here and keep them")
    parser.add_argument(
        "--against", type=Path, help="another checkout (the code before a change), run alternately with this"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="waybook-home-"))
    codes = {"this": ROOT} | ({"against": args.against.resolve()} if args.against else {})
    results: dict[tuple[str, int], list[dict[str, float]]] = {
        (c, n): [] for c in codes for n in args.sessions
    }
    identical: dict[int, bool] = {}
    try:
        homes = {}
        for n in args.sessions:
            home = base / f"home-{n}"
            if not home.exists():
                generate(home, n, seed=args.seed)
            homes[n] = {"claude-code": home / ".claude" / "projects", "codex": home / ".codex" / "sessions"}
        print(
            f"{'code':>8}{'sessions':>9}{'records':>10}{'import s':>10}{'records/s':>11}{'rec/cpu-s':>11}"
            f"{'peak MiB':>10}{'verify s':>10}"
        )
        for round_ in range(args.rounds):
            order = args.sessions if round_ % 2 == 0 else list(reversed(args.sessions))
            for n in order:
                names = list(codes) if (round_ + n) % 2 == 0 else list(reversed(codes))
                for name in names:
                    scratch = base / f"scratch-{name}-{n}"
                    got = one_run(homes[n], scratch, code=codes[name], verify=name == "this")
                    results[name, n].append(got)
                    print(
                        f"{name:>8}{n:>9}{got['records']:>10.0f}{got['seconds']:>10.2f}"
                        f"{got['records'] / got['seconds']:>11.0f}"
                        f"{got['records'] / got['cpu_seconds']:>11.0f}"
                        f"{got['peak_mib']:>10.0f}{got.get('verify_seconds', float('nan')):>10.2f}",
                        flush=True,
                    )
                if "against" in codes:
                    same = same_journals(base / f"scratch-this-{n}", base / f"scratch-against-{n}")
                    identical[n] = identical.get(n, True) and same
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    rows: list[dict[str, object]] = []
    peaks = {}
    for name in codes:
        label = "" if name == "this" else " (against)"
        for n in args.sessions:
            runs = results[name, n]
            rate = statistics.median(r["records"] / r["seconds"] for r in runs)
            cpu_rate = statistics.median(r["records"] / r["cpu_seconds"] for r in runs)
            peaks[name, n] = statistics.median(r["peak_mib"] for r in runs)
            rows.append(
                {
                    "name": f"import auto at {n} sessions: records/s{label}",
                    "sessions": n,
                    "records": runs[0]["records"],
                    "seconds": statistics.median(r["seconds"] for r in runs),
                    "value": rate,
                    "goal": "at least 5000",
                    "passed": rate >= 5000,
                }
            )
            rows.append(
                {
                    "name": f"import auto at {n} sessions: records per CPU second{label}",
                    "sessions": n,
                    "value": cpu_rate,
                    "note": "user + system time of both imports: the rate on an idle core, whatever the load",
                }
            )
            row: dict[str, object] = {
                "name": f"import auto at {n} sessions: peak RSS{label}",
                "sessions": n,
                "value": peaks[name, n],
                "unit": "MiB",
            }
            if name == "this":
                row["verify_seconds"] = statistics.median(r["verify_seconds"] for r in runs)
            rows.append(row)
        if len(args.sessions) > 1:
            small, large = min(args.sessions), max(args.sessions)
            growth = peaks[name, large] / peaks[name, small]
            print(f"{name}: peak RSS at {large} / at {small} sessions: {growth:.2f}")
            rows.append(
                {
                    "name": f"peak RSS at {large} / at {small} sessions{label}",
                    "value": growth,
                    "goal": "at most 1.25 (independent of the folder's size)",
                    "passed": growth <= 1.25,
                }
            )
    if "against" in codes:
        for n in args.sessions:
            pairs = list(zip(results["this", n], results["against", n], strict=True))
            for what, key in (("records per CPU second", "cpu_seconds"), ("records/s (wall)", "seconds")):
                ratio = statistics.median(b[key] / a[key] for a, b in pairs)
                print(f"import auto at {n} sessions: {what}, this / against: {ratio:.2f}")
                rows.append({"name": f"import auto at {n} sessions: {what}, this / against", "value": ratio})
            rss = statistics.median(a["peak_mib"] / b["peak_mib"] for a, b in pairs)
            rows.append({"name": f"import auto at {n} sessions: peak RSS, this / against", "value": rss})
            rows.append(
                {
                    "name": f"import auto at {n} sessions: journals byte-identical to against's",
                    "value": identical[n],
                    "passed": identical[n],
                }
            )
            print(f"import auto at {n} sessions: peak RSS this / against {rss:.2f}; identical {identical[n]}")
    against = str(args.against) if args.against else None
    args.out.write_text(json.dumps({"seed": args.seed, "against": against, "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
