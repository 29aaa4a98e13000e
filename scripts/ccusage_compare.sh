#!/usr/bin/env bash
# Side by side with ccusage (issue 47): ccusage's daily report and `waybook stats --by day` on the same
# Claude Code and Codex folders (the shared fixtures, and sessions scripts/ccusage_compare.py generates)
# agree on tokens exactly and on cost within 1%, or each difference is a rule docs/cost.md documents.
# ccusage 20.0.24 is installed with npm into a scratch prefix (its linux-x64 binary runs offline with its
# own LiteLLM prices; 20.0.26's native binary is not published for linux-x64). Node and npm come from
# Debian (.ci/run installs them when missing).
#
# Usage: bash scripts/ccusage_compare.sh
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/ccusage),
#              CCUSAGE_VERSION (default 20.0.24), FIXTURES (default /work/shared/fixtures).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${WORK:-${TMPDIR:-/tmp}/waybook-suites/ccusage}"
PYTHON="${PYTHON:-python3}"
VERSION="${CCUSAGE_VERSION:-20.0.24}"
for tool in node npm; do
    command -v "$tool" >/dev/null 2>&1 || { echo "ccusage_compare: $tool is missing (Debian: apt-get install nodejs npm)"; exit 1; }
done
rm -rf "$WORK" && mkdir -p "$WORK/npm"
npm install --prefix "$WORK/npm" --no-audit --no-fund --loglevel=error "ccusage@$VERSION"
CCUSAGE="$WORK/npm/node_modules/.bin/ccusage"
echo "$("$CCUSAGE" --version), node $(node --version)"
"$PYTHON" -c 'import genai_prices; print(f"genai-prices {genai_prices.__version__}")' \
    || { echo "ccusage_compare: waybook's prices need genai-prices: pip install -e '.[prices]'"; exit 1; }
cd "$ROOT"
"$PYTHON" scripts/ccusage_compare.py --ccusage "$CCUSAGE" --work "$WORK/runs" --fixtures "${FIXTURES:-/work/shared/fixtures}"
