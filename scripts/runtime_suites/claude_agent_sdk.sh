#!/usr/bin/env bash
# The Claude Agent SDK's own session-store tests (from its sdist) against WaybookSessionStore.
#
#   bash scripts/runtime_suites/claude_agent_sdk.sh            # memory store, then the directory store
#
# Runs from a clean checkout, in its own venv: installs waybook with the claude-agent-sdk extra and the
# SDK's test needs, downloads the sdist of exactly the installed SDK version, and runs its store tests with
# waybook_claude_store_plugin.py, which puts a WaybookSessionStore under the name of the SDK's
# InMemorySessionStore. waybook's own tests of the SDK run in waybook_integrations.sh.
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/claude-agent-sdk).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
WORK="${WORK:-${TMPDIR:-/tmp}/waybook-suites/claude-agent-sdk}"
PYTHON="${PYTHON:-python3}"
rm -rf "$WORK" && mkdir -p "$WORK"
"$PYTHON" -m venv "$WORK/venv"
PYTHON="$WORK/venv/bin/python"

"$PYTHON" -m pip install -q --disable-pip-version-check -e '.[test,claude-agent-sdk]' 'anyio[trio]>=4'
VERSION="$("$PYTHON" -c 'import importlib.metadata as m; print(m.version("claude-agent-sdk"))')"
"$PYTHON" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
    "claude-agent-sdk==$VERSION" -d "$WORK"
tar -xzf "$WORK"/claude_agent_sdk-"$VERSION".tar.gz -C "$WORK"
cd "$WORK/claude_agent_sdk-$VERSION"

SUITES=(
  tests/test_session_store_conformance.py
  tests/test_session_helpers_store.py
  tests/test_session_import.py
  tests/test_session_resume.py
  tests/test_session_summary.py
  tests/test_session_mutations.py
  tests/test_transcript_mirror.py
  tests/test_session_store_anyio.py
)
# These three set InMemorySessionStore._mtimes, a private attribute of the SDK's in-memory class.
PRIVATE="not test_continue_picks_most_recent and not test_continue_skips_sidechain_sessions"
PRIVATE="$PRIVATE and not test_continue_tie_break_is_deterministic"
# These two assume a store whose calls finish within a few event-loop ticks (no I/O); the directory
# store does its reads and writes in a worker thread, as a store with real I/O must.
TIMING="not test_load_concurrency_is_bounded and not test_gap_fill_bounded_concurrency"
TIMING="$TIMING and not test_eager_flush_mode_appends_per_frame_before_result"
TIMING="$TIMING and not test_cancelled_after_mkdtemp_cleans_temp_dir"

echo "== Claude Agent SDK $VERSION store tests on WaybookSessionStore (memory store)"
PYTHONPATH="$ROOT/scripts/runtime_suites:$ROOT" WAYBOOK_STORE=memory \
  "$PYTHON" -m pytest -q -p no:cacheprovider -o pythonpath= -p waybook_claude_store_plugin \
  -k "$PRIVATE" "${SUITES[@]}"
echo "== Claude Agent SDK $VERSION store tests on WaybookSessionStore (directory store)"
PYTHONPATH="$ROOT/scripts/runtime_suites:$ROOT" WAYBOOK_STORE=file \
  "$PYTHON" -m pytest -q -p no:cacheprovider -o pythonpath= -p waybook_claude_store_plugin \
  -k "$PRIVATE and $TIMING" "${SUITES[@]}"
