"""Compare two JUnit XML reports of the same tests: the runtime's own run and the run on waybook.

Usage: python compare.py BASELINE.xml WAYBOOK.xml LABEL
Prints both runs' counts and every test that passed without waybook but not with it, then a closing
"N passed, M failed" line for the waybook run over the tests that passed without it. Exits 1 if any
such test did not pass with waybook, or if either run is empty.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def outcomes(path: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            result[name] = "failed"
        elif "skipped" in tags:
            result[name] = "skipped"
        else:
            result[name] = "passed"
    return result


def count(results: dict[str, str], outcome: str) -> int:
    return sum(1 for value in results.values() if value == outcome)


def main() -> int:
    baseline_path, waybook_path, label = sys.argv[1:4]
    baseline, waybook = outcomes(baseline_path), outcomes(waybook_path)
    for name, results in (("without waybook", baseline), ("with waybook", waybook)):
        print(
            f"{label} {name}: {len(results)} tests, {count(results, 'passed')} passed, "
            f"{count(results, 'failed')} failed, {count(results, 'skipped')} skipped"
        )
    must_pass = [test for test, outcome in baseline.items() if outcome == "passed"]
    regressions = [test for test in must_pass if waybook.get(test) != "passed"]
    for test in regressions:
        print(f"REGRESSION {test}: passed without waybook, {waybook.get(test, 'missing')} with it")
    if not baseline or not waybook:
        print(f"{label}: a run collected no tests")
        return 1
    print(f"{label}: {len(must_pass) - len(regressions)} passed, {len(regressions)} failed")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
