"""CI runs every test somewhere: what the default run leaves out (`slow` tests, tests of the runtimes the
`test` extra does not install) runs in a later step of .ci/run (README, "Run the tests")."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.runtimes import SUITE_VARIABLE, SUITES, suite_of

CI = (ROOT / ".ci" / "run").read_text()
SCRIPTS = ROOT / "scripts" / "runtime_suites"
IMPORTORSKIP = re.compile(r"importorskip\(\s*[\"']([\w.]+)[\"']")
FROM_THE_TEST_EXTRA = {
    "anthropic",
    "datasets",
    "genai_prices",
    "hyperscan",
    "mcp",
    "ormsgpack",
    "selenium",
    "watchfiles",
}
"""What tests importorskip that the `test` extra installs: they run in the default run."""


def runtime_needs() -> dict[str, set[str]]:
    """Each test module (its path in the checkout) -> the modules it importorskips."""
    needs: dict[str, set[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        found = set(IMPORTORSKIP.findall(path.read_text()))
        if found:
            needs[str(path.relative_to(ROOT))] = found
    return needs


def script(suite: str) -> str:
    """A suite's script with the scripts it sources."""
    text = (SCRIPTS / f"{suite}.sh").read_text()
    for sourced in re.findall(r'^source "\$\(dirname "\$0"\)/(\w+\.sh)"', text, flags=re.M):
        text += (SCRIPTS / sourced).read_text()
    return text


def test_every_module_a_test_skips_without_is_the_test_extras_or_has_a_suite() -> None:
    unknown = [
        f"{path}: {module}"
        for path, modules in runtime_needs().items()
        for module in sorted(modules)
        if suite_of(module) is None
        and module.partition(".")[0] not in FROM_THE_TEST_EXTRA
        and module not in sys.stdlib_module_names  # `resource`: POSIX only, never a runtime
    ]
    assert unknown == [], "add the module to tests/helpers/runtimes.py's SUITES (or to the test extra)"


def test_every_test_file_that_skips_without_a_runtime_is_run_by_that_runtimes_suite() -> None:
    runtime_files = [(p, m, suite_of(m)) for p, ms in runtime_needs().items() for m in sorted(ms)]
    assert len(runtime_files) > 20  # the scan found the runtimes' tests
    not_run = [
        f"{path} ({module}): scripts/runtime_suites/{suite}.sh does not run it"
        for path, module, suite in runtime_files
        if suite is not None and path not in script(suite)
    ]
    assert not_run == []


@pytest.mark.parametrize("suite", sorted(set(SUITES.values())))
def test_ci_runs_every_runtimes_suite_and_the_suite_requires_its_runtimes(suite: str) -> None:
    lanes = [line for line in CI.splitlines() if line.startswith("lane ")]
    assert any(suite in line.split() for line in lanes), f".ci/run runs no lane with {suite}"
    assert f"{SUITE_VARIABLE}=" in script(suite), f"{suite}.sh lets the tests of its runtime skip"


def test_the_default_run_leaves_the_slow_tests_out_and_ci_runs_them_after_it() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert '-m "not slow"' in options["addopts"]
    lines = CI.splitlines()
    assert lines.index("python -m pytest -m slow") > lines.index(
        "python -m pip install -e '.[test]' && python -m pytest"
    )


def test_the_readmes_two_test_commands_are_what_ci_runs_first_in_that_order() -> None:
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^    ((?:python -m pip install .*&& )?python -m pytest.*)$", readme, flags=re.M)
    assert commands == ["python -m pip install -e '.[test]' && python -m pytest", "python -m pytest -m slow"]
    pytest_lines = [line for line in CI.splitlines() if "python -m pytest" in line]
    assert pytest_lines[:2] == commands


def test_the_testing_doc_shows_the_default_runs_options_as_pyproject_sets_them() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    doc = (ROOT / "docs" / "testing.md").read_text()
    assert f"\n    {options['addopts']}\n" in doc


SKIPPED_FOR_A_RUNTIME = """
import pytest

pytest.importorskip("langgraph.a_module_no_release_has")


def test_never_reached() -> None:
    pass
"""


@pytest.mark.parametrize(("suite", "exit_code"), [(None, 0), ("waybook_integrations", 1), ("strands", 0)])
def test_in_a_suite_a_skip_for_its_own_runtime_fails_the_run(
    tmp_path: Path, suite: str | None, exit_code: int
) -> None:
    (tmp_path / "test_needs_langgraph.py").write_text(SKIPPED_FOR_A_RUNTIME)
    (tmp_path / "test_plain.py").write_text("def test_passes() -> None:\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k != SUITE_VARIABLE}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only the plugin under test
    if suite is not None:
        env[SUITE_VARIABLE] = suite
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.helpers.runtimes", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == exit_code, run.stdout + run.stderr
    if exit_code:
        assert "test_needs_langgraph.py: Skipped: could not import 'langgraph.a_module_no" in run.stdout
