#!/usr/bin/env bash
# README command 1: install everything, then run the main job: a good and a bad sample batch for
# each example contract, gated through its generated DAG on local Spark, then the decision table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export AIRFLOW_HOME="${AIRFLOW_HOME:-$PWD/.airflow}"
.venv/bin/contract-gate lint contracts/
.venv/bin/python scripts/demo.py
