#!/usr/bin/env bash
# Run the layer contracts, the type checker and the test suite; bootstraps .venv on a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
echo "== lint-imports"
PYTHONPATH=src .venv/bin/lint-imports --no-cache
echo "== mypy (strict: domain, ports, application)"
.venv/bin/mypy
echo "== pytest"
.venv/bin/python -m pytest "${@:-tests}" -q
