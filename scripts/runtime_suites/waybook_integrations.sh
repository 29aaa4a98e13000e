#!/usr/bin/env bash
# waybook's own tests of the runtimes the `test` extra leaves out: LangGraph (the checkpointer, its
# conformance suite, and the importer fed databases LangGraph's own saver writes, hostile and fuzzed), the
# OpenAI Agents SDK, the Claude Agent SDK and Google ADK. In the default run these tests skip (`could not
# import ...`); here, in one venv with `waybook[integrations-test]`, they run, slow ones included, and a
# skip for one of these runtimes fails the run (WAYBOOK_SUITE, tests/helpers/runtimes.py).
# tests/test_suites.py checks that every test file that importorskips one of them is listed below.
#
# Usage: bash scripts/runtime_suites/waybook_integrations.sh [PYTEST OPTIONS]
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/waybook-integrations).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${WORK:-${TMPDIR:-/tmp}/waybook-suites/waybook-integrations}"
PYTHON="${PYTHON:-python3}"
rm -rf "$WORK" && mkdir -p "$WORK/tmp"
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[integrations-test]"
venv() { "$WORK/venv/bin/python" "$@"; }
venv -c 'import agents, claude_agent_sdk, google.adk, langgraph.checkpoint.conformance, langgraph.checkpoint.sqlite'

FILES=(
  tests/integrations/test_adk_contract.py
  tests/integrations/test_adk_erased.py
  tests/integrations/test_adk_redact.py
  tests/integrations/test_adk_state_machine.py
  tests/integrations/test_adk_waybook.py
  tests/integrations/test_claude_agent_sdk.py
  tests/integrations/test_claude_agent_sdk_erased.py
  tests/integrations/test_claude_agent_sdk_redact.py
  tests/integrations/test_claude_agent_sdk_state_machine.py
  tests/integrations/test_examples.py
  tests/integrations/test_integration_docs.py
  tests/integrations/test_langgraph_conformance.py
  tests/integrations/test_langgraph_erased.py
  tests/integrations/test_langgraph_hostile_state.py
  tests/integrations/test_langgraph_redact.py
  tests/integrations/test_langgraph_saver.py
  tests/integrations/test_langgraph_sessions.py
  tests/integrations/test_missing_extras.py
  tests/integrations/test_openai_agents_crash.py
  tests/integrations/test_openai_agents_erased.py
  tests/integrations/test_openai_agents_redact.py
  tests/integrations/test_openai_agents_session.py
  tests/integrations/test_provider_contexts.py
  tests/integrations/test_runtime_docs.py
  tests/formats/test_every_fixture_gives_a_row.py
  tests/formats/test_langgraph_hostile.py
  tests/formats/test_openai_agents_import.py
  tests/fuzz/test_langgraph_databases.py
  tests/test_docs.py
  tests/test_public_api.py
)
# Of test_docs.py, only the pages of these runtimes: the rest of it runs in the default run.
PAGES="not test_docs.py or adk.md or claude-agent-sdk.md or langgraph.md or openai-agents.md"

cd "$ROOT"
export TMPDIR="$WORK/tmp"  # the stores the tests open go with the suite's work directory
export WAYBOOK_SUITE=waybook_integrations
echo "waybook's tests of LangGraph, the OpenAI Agents SDK, the Claude Agent SDK and Google ADK"
venv -m pytest -p no:cacheprovider -q -m "slow or not slow" -k "$PAGES" "${FILES[@]}" "$@"
