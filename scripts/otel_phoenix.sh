#!/usr/bin/env bash
# `waybook otel send` proven by a real backend (issue 49): Arize Phoenix, from PyPI, in a venv of its own,
# on 127.0.0.1 with no network of its own (PHOENIX_ALLOW_EXTERNAL_RESOURCES=false, telemetry off). The
# shared Claude Code fixture session (with its sub-agents) and a `waybook demo` session are sent, read
# back through Phoenix's own client, and checked against `waybook stats --json` for the same journals:
# span count, parent links, model names, token counts, tool names; content only where --content said so.
# The run ends with a screenshot of the sub-agent's trace in Phoenix's UI (headless Chromium), kept as
# docs/images/otel-phoenix-trace.png. The closing line is "otel_phoenix: N passed, M failed".
#
# Usage: bash scripts/otel_phoenix.sh
# Environment: PYTHON (default python3), WORK (default ${TMPDIR:-/tmp}/waybook-suites/otel_phoenix),
#              PHOENIX_VERSION (default 20.26.1, the release this suite was written against),
#              SHARED_FIXTURES (default: shared/fixtures beside this checkout),
#              SCREENSHOT (default docs/images/otel-phoenix-trace.png in this checkout; "none": skip it),
#              VENV (default $WORK/venv, made anew; an existing one given here is reused).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${WORK:-${TMPDIR:-/tmp}/waybook-suites/otel_phoenix}"
PYTHON="${PYTHON:-python3}"
PHOENIX_VERSION="${PHOENIX_VERSION:-20.26.1}"
SHARED_FIXTURES="${SHARED_FIXTURES:-$(dirname "$ROOT")/shared/fixtures}"
SCREENSHOT="${SCREENSHOT:-$ROOT/docs/images/otel-phoenix-trace.png}"
VENV="${VENV:-$WORK/venv}"
case "$VENV" in "$WORK"/*) rm -rf "$WORK" ;; *) rm -rf "${WORK:?}/phoenix" "$WORK/store" "$WORK/demo" ;; esac
mkdir -p "$WORK/phoenix"
cd "$WORK"

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "arize-phoenix==$PHOENIX_VERSION" -e "$ROOT[otel]"

# Two free ports on 127.0.0.1: Phoenix's HTTP (UI, REST, OTLP/HTTP) and its gRPC receiver.
read -r PORT GRPC_PORT < <("$VENV/bin/python" - <<'EOF'
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))
EOF
)
PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$PORT" PHOENIX_GRPC_PORT="$GRPC_PORT" \
    PHOENIX_WORKING_DIR="$WORK/phoenix" PHOENIX_TELEMETRY_ENABLED=false \
    PHOENIX_ALLOW_EXTERNAL_RESOURCES=false \
    "$VENV/bin/python" -m phoenix.server.main serve > "$WORK/phoenix.log" 2>&1 &
PHOENIX_PID=$!
stop() {
    kill "$PHOENIX_PID" 2>/dev/null || true
    wait "$PHOENIX_PID" 2>/dev/null || true
}
trap stop EXIT

echo "Phoenix $PHOENIX_VERSION on http://127.0.0.1:$PORT (log: $WORK/phoenix.log)"
"$VENV/bin/python" "$ROOT/scripts/otel_phoenix_check.py" \
    --phoenix "http://127.0.0.1:$PORT" --pid "$PHOENIX_PID" --work "$WORK" \
    --fixtures "$SHARED_FIXTURES/claude-code" --screenshot "$SCREENSHOT"
