#!/usr/bin/env bash
# Type-check the package as it is installed (`grounded_rag`, mapped from graph/ and prompts/).
# mypy cannot follow the package-dir mapping, so it reads a shadow tree of symlinks under
# .typecheck/ that lays the sources out under their import names.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
rm -rf .typecheck && mkdir -p .typecheck/grounded_rag
for entry in graph/*; do
  ln -s "../../$entry" ".typecheck/grounded_rag/$(basename "$entry")"
done
ln -s ../../prompts .typecheck/grounded_rag/prompts
exec "$PY" -m mypy "$@" -p grounded_rag
