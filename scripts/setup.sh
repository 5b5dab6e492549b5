#!/usr/bin/env bash
# Create .venv with the locked dependency set and install grounded-rag into it (editable).
# Idempotent: a second run only checks. The llama.cpp build (~7 min on 2 cores, once; cached
# afterwards) uses -DGGML_NATIVE=OFF: the native build crashes on CPUs that advertise
# instructions the VM does not allow (AMX needs a permission the process never asks for).
# Where /proc/cpuinfo lists AVX-512 with VNNI, VBMI and BF16, those kernels are switched on
# (prompt evaluation ~1.5x faster: docs/performance.md); set CMAKE_ARGS to choose yourself.
# The flags also go to uv as per-package build settings, so each set of flags has its own
# cached wheel.
#
# Needs Python >= 3.11 ($PYTHON, default python3) and uv. Without uv on PATH, uv is installed
# into its own virtual environment under ~/.cache/grounded-rag/tools (never into the system
# Python); nothing outside this folder and that cache is changed.
set -euo pipefail
cd "$(dirname "$0")/.."
LLAMA_FLAGS=(GGML_NATIVE=OFF)
if [ -z "${CMAKE_ARGS:-}" ] && [ -r /proc/cpuinfo ]; then
  cpu_flags=""
  while IFS= read -r line; do  # bash only: no grep on a bare machine
    case "$line" in flags*) cpu_flags=" ${line#*:} "; break ;; esac
  done < /proc/cpuinfo
  avx512=yes
  for f in avx512f avx512cd avx512vl avx512dq avx512bw avx512_vnni avx512vbmi avx512_bf16; do
    [[ "$cpu_flags" == *" $f "* ]] || avx512=no
  done
  if [ "$avx512" = yes ]; then
    LLAMA_FLAGS+=(GGML_AVX512=ON GGML_AVX512_VNNI=ON GGML_AVX512_VBMI=ON GGML_AVX512_BF16=ON)
  fi
fi
if [ -z "${CMAKE_ARGS:-}" ]; then
  CMAKE_ARGS="$(printf -- '-D%s ' "${LLAMA_FLAGS[@]}")"
fi
export CMAKE_ARGS="${CMAKE_ARGS% }"
BUILD_KEY=(--config-settings-package "llama-cpp-python:cmake.args=${CMAKE_ARGS// /;}")
echo "setup: llama.cpp build flags: $CMAKE_ARGS" >&2
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
"$UV" pip sync --quiet --python .venv/bin/python "${BUILD_KEY[@]}" requirements.lock
"$UV" pip install --quiet --python .venv/bin/python --no-deps -e .
echo "setup: done (.venv)" >&2
