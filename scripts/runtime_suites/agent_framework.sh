#!/usr/bin/env bash
# Microsoft Agent Framework's HistoryProvider contract on WaybookHistoryProvider. agent-framework-core
# ships no tests in its sdist, so tests/integrations/test_agent_framework_contract.py, written from
# HistoryProvider's documented methods, runs first on the framework's InMemoryHistoryProvider, then on
# waybook's. Its own venv: agent-framework-core pins msgspec below the version waybook's test
# environment has. The closing line is "agent-framework: N passed, M failed".
#
# Usage: bash scripts/runtime_suites/agent_framework.sh
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/agent-framework).
LABEL=agent-framework EXTRA=agent-framework DIST=agent-framework-core MODULE=agent_framework
CONTRACT=tests/integrations/test_agent_framework_contract.py
TESTS="tests/integrations/test_agent_framework.py tests/integrations/test_agent_framework_redact.py tests/integrations/test_agent_framework_erased.py" EXAMPLE_TEST=agent_framework
source "$(dirname "$0")/contract_suite.sh"
