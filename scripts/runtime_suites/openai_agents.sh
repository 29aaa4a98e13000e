#!/usr/bin/env bash
# The OpenAI Agents SDK's own tests, from the sdist of the SDK version that `waybook[openai-agents]`
# installs, run twice over the same tests: as they are, then with waybook's WaybookSession (a directory
# store per session) in place of the SDK's test session helper (tests/utils/simple_session.py). The
# tests are every test file that uses the helper. Every test that passes without waybook must pass with
# it; the closing line is "openai-agents: N passed, M failed".
#
# Usage: bash scripts/runtime_suites/openai_agents.sh
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/openai-agents),
#              OPENAI_AGENTS_VERSION (default: what pip resolves), WAYBOOK_SESSION=file|memory (default
#              file), WAYBOOK_SESSION_HOOKS=1 to keep waybook's compaction hooks on (the helper has none).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${WORK:-${TMPDIR:-/tmp}/waybook-suites/openai-agents}"
PYTHON="${PYTHON:-python3}"
rm -rf "$WORK" && mkdir -p "$WORK"
cd "$WORK"

"$PYTHON" -m venv venv
PIP=(venv/bin/python -m pip install --quiet --disable-pip-version-check)
SDK="openai-agents${OPENAI_AGENTS_VERSION:+==$OPENAI_AGENTS_VERSION}"
"${PIP[@]}" -e "$ROOT[openai-agents]" "$SDK"
VERSION="$(venv/bin/python -c 'import importlib.metadata as m; print(m.version("openai-agents"))')"
# What the SDK's dev dependencies provide to these tests (pytest-timeout: a hung test fails, not the run).
"${PIP[@]}" pytest pytest-asyncio pytest-mock inline-snapshot httpx pytest-timeout

venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    "openai-agents==$VERSION" -d sdist
tar -xzf "sdist/openai_agents-$VERSION.tar.gz"
cd "openai_agents-$VERSION"
echo "OpenAI Agents SDK $VERSION: its own tests, without and with waybook"

grep -rl --include='*.py' 'simple_session' tests | grep -v 'tests/utils/simple_session.py' | sort > "$WORK/files.txt"
echo "$(wc -l < "$WORK/files.txt") test files use the SDK's test session helper"
venv() { "$WORK/venv/bin/python" "$@"; }

# `|| true`: failing tests must not stop the script before the comparison, which decides.
venv -m pytest $(cat "$WORK/files.txt") -q -p no:cacheprovider --timeout=120 \
    --junitxml="$WORK/without.xml" > "$WORK/without.log" 2>&1 || true
cp "$ROOT/scripts/runtime_suites/openai_agents_simple_session.py" tests/utils/simple_session.py
venv -c 'from tests.utils.simple_session import SimpleListSession as S
from waybook.integrations.openai_agents import WaybookSession
assert issubclass(S, WaybookSession), "the swap did not take"'
venv -m pytest $(cat "$WORK/files.txt") -q -p no:cacheprovider --timeout=120 \
    --junitxml="$WORK/with.xml" > "$WORK/with.log" 2>&1 || true
venv "$ROOT/scripts/runtime_suites/compare.py" "$WORK/without.xml" "$WORK/with.xml" openai-agents
