#!/usr/bin/env bash
# Create .venv with the locked dependency set and install grounded-rag into it (editable).
# Idempotent: a second run only checks. The llama.cpp build (~7 min on 2 cores, once; cached
# afterwards) uses -DGGML_NATIVE=OFF: the native build crashes on CPUs that advertise
# instructions the VM does not allow.
#
# Needs Python >= 3.11 ($PYTHON, default python3) and uv. Without uv on PATH, uv is installed
# into its own virtual environment under ~/.cache/grounded-rag/tools (never into the system
# Python); nothing outside this folder and that cache is changed.
set -euo pipefail
cd "$(dirname "$0")/.."
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
PY="${PYTHON:-python3}"
UV="$(command -v uv || true)"
if [ -z "$UV" ]; then
  TOOLS="${GROUNDED_RAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/grounded-rag}/tools"
  if [ ! -x "$TOOLS/bin/uv" ]; then
    echo "setup: uv not found; installing it into $TOOLS (its own environment)" >&2
    "$PY" -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install --quiet uv
  fi
  UV="$TOOLS/bin/uv"
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$UV" venv --quiet .venv --python "$("$PY" -c 'import sys; print(sys.executable)')"
fi
echo "setup: syncing locked dependencies (first run builds llama-cpp-python: several minutes)" >&2
"$UV" pip sync --quiet --python .venv/bin/python requirements.lock
"$UV" pip install --quiet --python .venv/bin/python --no-deps -e .
echo "setup: done (.venv)" >&2
