"""`waybook verify --store` linear in the store's records (issue 50), paired in one run.

Two `file:` stores of bench/home.py's real-shaped sessions, S and 4S sessions (generated and imported
once; `--keep DIR` keeps them for the next run), then `waybook verify --store URL --json` of each, in its
own process, alternately, `--rounds` times. Each process's CPU time (user + system, from `wait4`: the
work whatever the machine's load) less the start-up's (`waybook verify --help` in the same round), per
record verified; the row is the median over the rounds of (per record at 4S / per record at S), goal at
most 2. Wall seconds and peak RSS are reported beside it.

Run: `python -m bench.verify_store [--sessions 200 800] [--rounds 3] [--keep DIR]`; writes
bench/verify_store.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from pathlib import Path

from bench.home import CATALOG, generate, run_waybook

OUT = Path(__file__).with_name("verify_store.json")


def imported(base: Path, sessions: int) -> str:
    """The URL of a store of `sessions` generated sessions (made once under `base`)."""
    store, done = base / f"store-{sessions}", base / f"store-{sessions}.done"
    if not done.exists():
        home = base / f"home-{sessions}"
        if not home.exists():
            generate(home, sessions)
        shutil.rmtree(store, ignore_errors=True)
        for folder in (home / ".claude" / "projects", home / ".codex" / "sessions"):
            run_waybook(["import", "auto", str(folder), "--store", f"file:{store}", "--json"], cwd=base)
        done.write_text("")
    return f"file:{store}"


def verified(url: str, scratch: Path) -> dict[str, float]:
    # status 1: the fixture's spotter session names a sub-agent transcript the fixtures lack (a missing
    # link, as in the real session); every journal must still prove
    seconds, cpu, rss, out = run_waybook(["verify", "--store", url, "--json"], cwd=scratch, ok=(0, 1))
    reports = json.loads(out)
    bad = [r["path"] for r in reports if not r["ok"]]
    if bad:
        msg = f"{url} does not verify: {', '.join(bad[:10])}"
        raise SystemExit(msg)
    records = sum(int(r["records"]) for r in reports if r["path"] != CATALOG)
    return {"seconds": seconds, "cpu": cpu, "peak_mib": rss, "records": records}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs=2, default=[200, 800], metavar=("S", "LARGE"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="make the stores here and keep them")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="waybook-verify-"))
    small, large = sorted(args.sessions)
    ratios: list[float] = []
    runs: dict[int, list[dict[str, float]]] = {small: [], large: []}
    try:
        urls = {n: imported(base, n) for n in (small, large)}
        print(
            f"{'round':>6}{'sessions':>10}{'records':>10}{'cpu s':>8}{'start s':>9}{'us/rec':>8}"
            f"{'wall s':>8}{'MiB':>6}"
        )
        for round_ in range(args.rounds):
            order = (small, large) if round_ % 2 == 0 else (large, small)
            _, start, _, _ = run_waybook(["verify", "--help"], cwd=base)
            per_record = {}
            for n in order:
                got = verified(urls[n], base)
                runs[n].append(got)
                per_record[n] = (got["cpu"] - start) / got["records"]
                print(
                    f"{round_:>6}{n:>10}{got['records']:>10.0f}{got['cpu']:>8.2f}{start:>9.2f}"
                    f"{per_record[n] * 1e6:>8.1f}{got['seconds']:>8.2f}{got['peak_mib']:>6.0f}",
                    flush=True,
                )
            ratios.append(per_record[large] / per_record[small])
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    ratio = statistics.median(ratios)
    peaks = {n: statistics.median(r["peak_mib"] for r in runs[n]) for n in runs}
    rows = [
        {
            "name": f"verify --store: CPU per record at {large} / at {small} sessions",
            "value": ratio,
            "ratios": ratios,
            "records": {n: runs[n][0]["records"] for n in runs},
            "goal": "at most 2 (linear in the store's records)",
            "passed": ratio <= 2,
        },
        {
            "name": f"verify --store: peak RSS at {large} / at {small} sessions",
            "value": peaks[large] / peaks[small],
            "peak_mib": peaks,
            "note": "the directory store's feed index grows with the store's records (bench/README.md, home)",
        },
    ]
    for row in rows:
        print(f"{row['name']}: {row['value']:.2f}")
    args.out.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
