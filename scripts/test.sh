#!/usr/bin/env bash
# The test command: set up (idempotent), then run the whole suite, slow tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export ORT_DISABLE_TELEMETRY=1 ANONYMIZED_TELEMETRY=False
export LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true
exec .venv/bin/python -m pytest "$@"
