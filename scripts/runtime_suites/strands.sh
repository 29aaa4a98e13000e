#!/usr/bin/env bash
# Strands Agents' own session tests, from the sdist of the version `waybook[strands]` installs, run twice:
# as they are, then with waybook's WaybookSessionRepository (a directory store per repository) in place
# of the SDK's test repository (tests/fixtures/mock_session_repository.py). The tests are the session
# tests of every test file that uses that repository (`-k session`: all of
# test_repository_session_manager.py, and the session tests of the agent, delegation and router tests).
# Before that, waybook's own Strands tests and example run in the same venv and must pass. Every test
# that passes without waybook must pass with it; the closing line is "strands: N passed, M failed".
#
# Usage: bash scripts/runtime_suites/strands.sh
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/strands),
#              STRANDS_VERSION (default: what pip resolves), WAYBOOK_STORE=file|memory (default file).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${WORK:-${TMPDIR:-/tmp}/waybook-suites/strands}"
PYTHON="${PYTHON:-python3}"
rm -rf "$WORK" && mkdir -p "$WORK/tmp"
cd "$WORK"

"$PYTHON" -m venv venv
PIP=(venv/bin/python -m pip install --quiet --disable-pip-version-check)
SDK="strands-agents${STRANDS_VERSION:+==$STRANDS_VERSION}"
"${PIP[@]}" -e "$ROOT[strands]" "$SDK"
VERSION="$(venv/bin/python -c 'import importlib.metadata as m; print(m.version("strands-agents"))')"
# What the SDK's dev dependencies provide to these tests (pytest-timeout: a hung test fails, not the run),
# and hypothesis for waybook's test configuration.
"${PIP[@]}" "pytest>=9,<10" "pytest-asyncio>=1.0,<1.5" "pytest-timeout>=2,<3" moto hypothesis pytest-xdist

venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    "strands-agents==$VERSION" -d sdist
tar -xzf "sdist/strands_agents-$VERSION.tar.gz"
export TMPDIR="$WORK/tmp"  # the stores the swapped-in repository opens go with the suite's work directory
venv() { "$WORK/venv/bin/python" "$@"; }

echo "Strands Agents $VERSION: waybook's own tests, example, doc page and waybook.integrations.strands' names"
# A test skipped for want of Strands fails the run (tests/helpers/runtimes.py).
(cd "$ROOT" && WAYBOOK_SUITE=strands venv -m pytest -q -p no:cacheprovider -m "slow or not slow" \
    tests/integrations/test_strands.py tests/integrations/test_strands_redact.py tests/integrations/test_strands_erased.py \
    tests/integrations/test_runtime_examples_34.py \
    tests/integrations/test_missing_extras.py tests/test_docs.py tests/test_public_api.py \
    -k "not (test_docs.py or test_public_api.py or example) or strands")

cd "strands_agents-$VERSION"
echo "Strands Agents $VERSION: its own session tests, without and with waybook"
FILES=(
  tests/strands/session/test_repository_session_manager.py
  tests/strands/agent/test_agent.py
  tests/strands/agent/test_agent_delegation.py
  tests/strands/models/routing/test_router.py
)
# `|| true`: failing tests must not stop the script before the comparison, which decides.
venv -m pytest "${FILES[@]}" -k session -q -p no:cacheprovider --timeout=120 \
    --junitxml="$WORK/without.xml" > "$WORK/without.log" 2>&1 || true
cp "$ROOT/scripts/runtime_suites/strands_mock_session_repository.py" tests/fixtures/mock_session_repository.py
venv -c 'from tests.fixtures.mock_session_repository import MockedSessionRepository as M
from waybook.integrations.strands import WaybookSessionRepository
assert issubclass(M, WaybookSessionRepository), "the swap did not take"'
venv -m pytest "${FILES[@]}" -k session -q -p no:cacheprovider --timeout=120 \
    --junitxml="$WORK/with.xml" > "$WORK/with.log" 2>&1 || true
venv "$ROOT/scripts/runtime_suites/compare.py" "$WORK/without.xml" "$WORK/with.xml" strands
