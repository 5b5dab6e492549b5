#!/usr/bin/env bash
# The test command: set up (idempotent), install what the tests need when this machine allows
# it (Debian's Chromium for the page tests; GROUNDED_RAG_REQUIRE_BROWSER=1 makes a failed
# install an error), then run the whole suite, slow tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${GROUNDED_RAG_REQUIRE_BROWSER:-0}" = 1 ]; then
  bash scripts/install-browser.sh
else
  bash scripts/install-browser.sh --if-possible
fi
export ORT_DISABLE_TELEMETRY=1 ANONYMIZED_TELEMETRY=False
export LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true
exec .venv/bin/python -m pytest "$@"
