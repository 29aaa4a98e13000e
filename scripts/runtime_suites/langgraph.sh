#!/usr/bin/env bash
# LangGraph's own test suite, from the sdist of the LangGraph version that `waybook[langgraph]` installs,
# run twice over the same tests: with LangGraph's in-memory checkpointer, then with waybook's
# WaybookSaver swapped in for it (on a directory store: JSONL files on disk). Every test that passes
# without waybook must pass with it; the closing line is "langgraph: N passed, M failed".
#
# The tests are those of the suite's checkpointer fixtures' "memory" parameter (the ones the swap
# changes); LangGraph's Postgres and Redis tests are left out (NO_DOCKER=true, as LangGraph's own
# Makefile does without Docker).
#
# Usage: bash scripts/runtime_suites/langgraph.sh
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/langgraph),
#              LANGGRAPH_VERSION (default: what pip resolves), WAYBOOK_SAVER=file|memory (default file).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${WORK:-${TMPDIR:-/tmp}/waybook-suites/langgraph}"
PYTHON="${PYTHON:-python3}"
rm -rf "$WORK" && mkdir -p "$WORK"
cd "$WORK"

"$PYTHON" -m venv venv
PIP=(venv/bin/python -m pip install --quiet --disable-pip-version-check)
LANGGRAPH="langgraph${LANGGRAPH_VERSION:+==$LANGGRAPH_VERSION}"
"${PIP[@]}" -e "$ROOT[langgraph]" "$LANGGRAPH"
VERSION="$(venv/bin/python -c 'import importlib.metadata as m; print(m.version("langgraph"))')"
# What LangGraph's test dependency group needs to import its tests (NO_DOCKER: no servers are started).
"${PIP[@]}" pytest pytest-mock syrupy pytest-dotenv httpx langgraph-checkpoint-sqlite \
    langgraph-checkpoint-postgres "psycopg[binary]" psycopg-pool redis pycryptodome

venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    "langgraph==$VERSION" -d sdist
tar -xzf "sdist/langgraph-$VERSION.tar.gz"
cd "langgraph-$VERSION"
echo "LangGraph $VERSION: its own tests, without and with waybook"

export NO_DOCKER=true
venv() { "$WORK/venv/bin/python" "$@"; }
venv -m pytest tests --collect-only -q -p no:cacheprovider 2>/dev/null \
    | grep -E '\[(.*-)?memory(-.*)?\]$' > "$WORK/tests.txt" || true
echo "$(wc -l < "$WORK/tests.txt") tests use the in-memory checkpointer"

# `|| true`: a failing test must not stop the script before the comparison, which decides.
venv -m pytest $(cat "$WORK/tests.txt") -q -p no:cacheprovider --junitxml="$WORK/without.xml" \
    > "$WORK/without.log" 2>&1 || true
cat "$ROOT/scripts/runtime_suites/langgraph_swap.py" >> tests/conftest_checkpointer.py
WAYBOOK_SAVER=file venv -c 'import tests.conftest as c
with c._checkpointer_memory() as saver:
    assert type(saver).__name__ == "WaybookSaver", f"the swap did not take: {type(saver)}"'
WAYBOOK_SAVER="${WAYBOOK_SAVER:-file}" venv -m pytest $(cat "$WORK/tests.txt") -q -p no:cacheprovider \
    --junitxml="$WORK/with.xml" > "$WORK/with.log" 2>&1 || true
venv "$ROOT/scripts/runtime_suites/compare.py" "$WORK/without.xml" "$WORK/with.xml" langgraph
