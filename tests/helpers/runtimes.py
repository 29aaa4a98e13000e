"""The runtimes the `test` extra leaves out, and the suite (scripts/runtime_suites/<name>.sh) whose own venv
installs each and runs waybook's tests of it.

In the default run (the README's test command) a test of one of these runtimes skips with the reason
pytest gives (`could not import 'langgraph'`, ...). It does not vanish from CI: .ci/run runs every suite,
tests/test_suites.py proves each file that skips for one of these modules is run by its suite, and inside
a suite (WAYBOOK_SUITE=<name>) a skip for one of the suite's own runtimes fails the run
(`pytest_sessionfinish` below, a plugin of tests/conftest.py).
"""

from __future__ import annotations

import importlib.util
import os
import re

import pytest

SUITES: dict[str, str] = {
    "langgraph": "waybook_integrations",
    "agents": "waybook_integrations",  # the OpenAI Agents SDK
    "claude_agent_sdk": "waybook_integrations",
    "google.adk": "waybook_integrations",
    "pydantic_ai": "pydantic_ai",
    "strands": "strands",
    "agent_framework": "agent_framework",
    "llama_index": "llama_index",
}
"""Each runtime's import name (a test importorskips it or a submodule of it) -> the suite that runs it."""

SUITE_VARIABLE = "WAYBOOK_SUITE"


def installed(module: str) -> bool:
    """Whether `module` can be imported here (a dotted name whose parent package is missing is not)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def suite_of(module: str) -> str | None:
    """The suite that runs the tests needing `module` (or a submodule), or None for what `test` installs."""
    for runtime, suite in SUITES.items():
        if module == runtime or module.startswith(f"{runtime}."):
            return suite
    return None


def runtime_named(reason: str, suite: str) -> str | None:
    """The first of `suite`'s runtimes that a skip's reason names, or None."""
    for runtime, owner in SUITES.items():
        if owner == suite and re.search(rf"(?<![\w.-]){re.escape(runtime)}(?![\w-])", reason):
            return runtime
    return None


_missing: list[str] = []


def _skip_reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # (path, line, "Skipped: reason")
        return str(longrepr[2])
    return str(longrepr)


def _note(report: pytest.CollectReport | pytest.TestReport) -> None:
    suite = os.environ.get(SUITE_VARIABLE)
    if not suite or not report.skipped:
        return
    reason = _skip_reason(report)
    runtime = runtime_named(reason, suite)
    if runtime is not None:
        _missing.append(f"{report.nodeid}: {' '.join(reason.split())}")


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _note(report)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _note(report)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a runtime suite, a test skipped for want of the suite's own runtime fails the run (decided by
    the controlling process, which sees every worker's reports under pytest-xdist)."""
    if not _missing or hasattr(session.config, "workerinput"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        suite = os.environ.get(SUITE_VARIABLE)
        reporter.write_line(f"{SUITE_VARIABLE}={suite}: skipped, yet this suite installs their runtime:")
        for line in _missing:
            reporter.write_line(f"  {line}")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
