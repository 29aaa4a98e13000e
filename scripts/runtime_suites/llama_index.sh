#!/usr/bin/env bash
# LlamaIndex's BaseChatStore contract on WaybookChatStore. llama-index-core ships no chat-store tests in
# its sdist, so tests/integrations/test_llama_index_contract.py, written from BaseChatStore's documented
# methods, runs first on LlamaIndex's SimpleChatStore, then on waybook's. The closing line is
# "llama-index: N passed, M failed".
#
# Usage: bash scripts/runtime_suites/llama_index.sh
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/llama-index).
LABEL=llama-index EXTRA=llama-index DIST=llama-index-core MODULE=llama_index.core
CONTRACT=tests/integrations/test_llama_index_contract.py
TESTS="tests/integrations/test_llama_index.py tests/integrations/test_llama_index_redact.py tests/integrations/test_llama_index_erased.py" EXAMPLE_TEST=llama_index
source "$(dirname "$0")/contract_suite.sh"
