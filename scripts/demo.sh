#!/usr/bin/env bash
# The main job, offline: set up, assemble + verify the local model, ingest the bundled
# sample corpus, answer sample questions with verified citations (or abstain).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export ORT_DISABLE_TELEMETRY=1 ANONYMIZED_TELEMETRY=False
.venv/bin/grounded-rag model fetch
exec .venv/bin/grounded-rag demo "$@"
