#!/usr/bin/env bash
# Pydantic AI's message-history contract on WaybookMessageHistory. pydantic-ai-slim ships no tests in its
# sdist, so tests/integrations/test_pydantic_ai_contract.py, written from its documented way to keep a
# history (ModelMessagesTypeAdapter JSON passed back as message_history=), runs first on that reference,
# then on waybook's. The closing line is "pydantic-ai: N passed, M failed".
#
# Usage: bash scripts/runtime_suites/pydantic_ai.sh
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/pydantic-ai).
LABEL=pydantic-ai EXTRA=pydantic-ai DIST=pydantic-ai-slim MODULE=pydantic_ai
CONTRACT=tests/integrations/test_pydantic_ai_contract.py
TESTS="tests/integrations/test_pydantic_ai.py tests/integrations/test_pydantic_ai_redact.py tests/integrations/test_pydantic_ai_erased.py" EXAMPLE_TEST=pydantic_ai
source "$(dirname "$0")/contract_suite.sh"
