#!/usr/bin/env bash
# Training rows through the trainers' own code (issue 45): transformers' apply_chat_template with a
# tokenizer built offline, and TRL's data utilities (trl.data_utils, what its SFT, DPO and KTO trainers call
# on each example). Not in the default test run: transformers is large, and TRL's requirements pull in torch
# through accelerate, while trl.data_utils itself imports without it, so TRL is installed with --no-deps.
# A venv that sees the test environment's packages (waybook, pytest, datasets) runs
# tests/export/test_trainer_code.py, where a missing package fails rather than skips.
#
# Usage: bash scripts/trainer_suite.sh
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/trainers).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${WORK:-${TMPDIR:-/tmp}/waybook-suites/trainers}"
PYTHON="${PYTHON:-python3}"
rm -rf "$WORK" && mkdir -p "$WORK"

"$PYTHON" -m venv --system-site-packages "$WORK/venv"
PIP=("$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" "transformers>=4.56" "tokenizers>=0.22" "jinja2>=3.1"
"${PIP[@]}" --no-deps "trl>=0.24"
"$WORK/venv/bin/python" -c 'import transformers, trl; print(f"transformers {transformers.__version__}, trl {trl.__version__}")'
cd "$ROOT"
WAYBOOK_TRAINER_SUITE=1 "$WORK/venv/bin/python" -m pytest tests/export/test_trainer_code.py -q -p no:cacheprovider
