#!/usr/bin/env bash
# README command 1: install everything, then run the main job on the bundled example contracts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export AIRFLOW_HOME="${AIRFLOW_HOME:-$PWD/.airflow}"
.venv/bin/contract-gate lint contracts/
for contract in contracts/*.yaml; do
  .venv/bin/contract-gate plan "$contract" | head -n 5
done
