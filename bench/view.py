"""The viewer's first screen in headless Chromium: a 10,000-record session against a 100-record one.

Both pages are written by `waybook view`; each round loads one then the other (alternating which goes
first) and reads the page's own performance marks, from navigation start: `waybook-first-screen` (the
first screen's entries of the active branch laid out from the page's first-screen data, issue 48) and
`waybook-whole-session` (the whole session's JSON parsed and the page laid out from it again: what a
permalink waits for). The ratio is the median of the per-round ratios. Goals (issues 30 and 48): the
first screen of 10,000 records under 2 s and at most 3x the 100-record page's. The sessions are shaped
as Claude Code's are: a harness progress line each turn, and answers in Markdown with a code block.
Run: `python bench/view.py [--rounds N]`; writes bench/view.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from waybook import JsonlJournal, Session, ToolOutcome
from waybook.cli import main as waybook
from waybook.model import ToolCallBlock

OUT = Path(__file__).with_name("view.json")


def write_session(path: Path, records: int) -> None:
    """A coding session of about `records` records: questions, tool calls, results and answers."""
    session = Session.create(JsonlJournal(path, durability="none"), journal_id=path.stem)
    written = 1
    turn = 0
    while written < records:
        turn += 1
        session.user(f"Step {turn}: look at module {turn % 40} and say what it does.")
        session.turn(
            [ToolCallBlock(call_id=f"c{turn}", name="read", arguments={"path": f"src/m{turn % 40}.py"})],
            [ToolOutcome(f"c{turn}", "def f(x):\n    return x * 2\n" * 20)],
            usage={"input_tokens": 1200 + turn, "output_tokens": 40},
            model="bench-model",
        )
        session.custom("claude_code.progress", {"type": "hook_progress", "turn": turn})
        session.assistant(
            f"Module {turn % 40} **doubles** its input:\n\n```python\ndef f(x):\n    return x * 2\n```\n",
            model="bench-model",
        )
        written += 5
    session.journal.close()


def browser() -> object:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1200,900",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver") or "chromedriver"))


def page_marks_ms(driver: object, page: Path) -> tuple[float, float]:
    """The first screen's and the whole session's marks of one load of `page`."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get(page.as_uri())
    WebDriverWait(driver, 120).until(
        lambda d: d.execute_script("return performance.getEntriesByName('waybook-whole-session').length")
    )
    first, whole = driver.execute_script(
        "return ['waybook-first-screen', 'waybook-whole-session']"
        ".map((name) => performance.getEntriesByName(name)[0].startTime)"
    )
    return float(first), float(whole)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="waybook-bench-view-"))
    try:
        pages = {}
        for size in (100, 10_000):
            write_session(work / f"s{size}.jsonl", size)
            pages[size] = work / f"s{size}.html"
            waybook(["view", str(work / f"s{size}.jsonl"), "-o", str(pages[size])])
        driver = browser()
        try:
            page_marks_ms(driver, pages[100])  # warm the browser up once
            small, large, ratios, whole = [], [], [], []
            for round_ in range(args.rounds):
                order = (100, 10_000) if round_ % 2 == 0 else (10_000, 100)
                got = {size: page_marks_ms(driver, pages[size]) for size in order}
                small.append(got[100][0])
                large.append(got[10_000][0])
                ratios.append(got[10_000][0] / got[100][0])
                whole.append(got[10_000][1])
        finally:
            driver.quit()
        rows = [
            {"name": "view.first_screen_ms.100_records", "value": statistics.median(small), "unit": "ms"},
            {
                "name": "view.first_screen_ms.10000_records",
                "value": statistics.median(large),
                "unit": "ms",
                "goal": "< 2000",
                "passed": statistics.median(large) < 2000,
            },
            {"name": "view.whole_session_ms.10000_records", "value": statistics.median(whole), "unit": "ms"},
            {
                "name": "view.first_screen.10000_vs_100_records",
                "value": statistics.median(ratios),
                "unit": "x",
                "goal": "<= 3",
                "passed": statistics.median(ratios) <= 3,
            },
        ]
        for row in rows:
            print(
                f"{row['name']:42} {row['value']:10.2f} {row['unit']:3} {row.get('goal', ''):8} "
                f"{ {True: 'yes', False: 'NO', None: ''}[row.get('passed')] }"
            )
        OUT.write_text(json.dumps({"rounds": args.rounds, "rows": rows}, indent=2) + "\n")
        print(f"wrote {OUT}")
        return 0 if all(row.get("passed", True) for row in rows) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
