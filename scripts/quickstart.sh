#!/usr/bin/env bash
# README command 1: install everything, then run the main job: a good and a bad sample batch for
# each example contract, gated through its generated DAG, then the decision table. The demo gates
# through one local Spark Connect server, so the class archive that local-mode gate jobs start
# from is built after it, once the table is out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --class-archive-later
export AIRFLOW_HOME="${AIRFLOW_HOME:-$PWD/.airflow}"
.venv/bin/contract-gate lint contracts/
.venv/bin/python scripts/demo.py
echo "install: the class archive for local gate jobs (built once, about a minute)"
.venv/bin/python -m contract_gate.local_spark.class_archive --if-missing
