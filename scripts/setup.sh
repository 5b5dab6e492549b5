#!/usr/bin/env bash
# Create .venv with the locked dependency set and install grounded-rag into it (editable).
# Idempotent: a second run only checks. The llama.cpp build (~7 min on 2 cores, once; cached
# afterwards) uses -DGGML_NATIVE=OFF: the native build crashes on CPUs that advertise
# instructions the VM does not allow.
set -euo pipefail
cd "$(dirname "$0")/.."
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
PY="${PYTHON:-python3}"
if ! command -v uv >/dev/null 2>&1; then
  echo "setup: installing uv" >&2
  "$PY" -m pip install --quiet uv
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  uv venv --quiet .venv --python "$("$PY" -c 'import sys; print(sys.executable)')"
fi
echo "setup: syncing locked dependencies (first run builds llama-cpp-python: several minutes)" >&2
uv pip sync --quiet --python .venv/bin/python requirements.lock
uv pip install --quiet --python .venv/bin/python --no-deps -e .
echo "setup: done (.venv)" >&2
