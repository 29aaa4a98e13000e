# Sourced by the runtime suites whose runtime ships no storage tests in its sdist (pydantic_ai.sh,
# agent_framework.sh, llama_index.sh). The caller sets LABEL (the closing line's name), EXTRA (waybook's
# extra), DIST (the runtime's distribution), MODULE (its import name), CONTRACT (the contract suite, a
# tests/integrations/ file), TESTS (waybook's own tests of the integration) and EXAMPLE_TEST (its example's
# test, a -k expression over tests/integrations/test_runtime_examples_34.py).
#
# In its own venv: waybook with the extra; the sdist of exactly the installed runtime, to show it ships no
# storage tests; waybook's tests of the integration and its example (these must pass); then the contract
# suite twice with the same test names, on the runtime's own reference implementation (WAYBOOK_CONTRACT=
# reference) and on waybook's (WAYBOOK_CONTRACT=waybook), compared by compare.py, whose closing line is
# "LABEL: N passed, M failed".
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${WORK:-${TMPDIR:-/tmp}/waybook-suites/$LABEL}"
PYTHON="${PYTHON:-python3}"
rm -rf "$WORK" && mkdir -p "$WORK/tmp"
"$PYTHON" -m venv "$WORK/venv"
PIP=("$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" -e "$ROOT[$EXTRA]" pytest pytest-xdist hypothesis
VERSION="$("$WORK/venv/bin/python" -c "import importlib.metadata as m; print(m.version('$DIST'))")"
"$WORK/venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    "$DIST==$VERSION" -d "$WORK/sdist"
SHIPPED="$(tar -tzf "$WORK"/sdist/*.tar.gz | grep -c '/tests\?/.*\.py$' || true)"
echo "$DIST $VERSION: its sdist ships $SHIPPED test files; the contract suite $CONTRACT runs on its reference"
echo "implementation, then on waybook's"

cd "$ROOT"
export TMPDIR="$WORK/tmp"  # the stores the tests open go with the suite's work directory
# A test skipped for want of this suite's runtime fails the run (tests/helpers/runtimes.py).
export WAYBOOK_SUITE="$(basename "$0" .sh)"
venv() { "$WORK/venv/bin/python" "$@"; }
venv -c "import $MODULE"
# waybook's own tests of the integration, its offline example, its doc page and its module's public names
# (waybook.integrations.$EXAMPLE_TEST; the other extras are not installed here): these must pass (set -e).
venv -m pytest -q -p no:cacheprovider -m "slow or not slow" $TESTS \
    tests/integrations/test_runtime_examples_34.py tests/integrations/test_missing_extras.py \
    tests/test_docs.py tests/test_public_api.py -W "ignore::DeprecationWarning" \
    -k "not (test_docs.py or test_public_api.py or example) or $EXAMPLE_TEST or $LABEL.md"
# `|| true`: failing tests must not stop the script before the comparison, which decides.
WAYBOOK_CONTRACT=reference venv -m pytest -q -p no:cacheprovider "$CONTRACT" \
    --junitxml="$WORK/without.xml" > "$WORK/without.log" 2>&1 || true
WAYBOOK_CONTRACT=waybook venv -m pytest -q -p no:cacheprovider "$CONTRACT" \
    --junitxml="$WORK/with.xml" > "$WORK/with.log" 2>&1 || true
venv "$ROOT/scripts/runtime_suites/compare.py" "$WORK/without.xml" "$WORK/with.xml" "$LABEL"
