#!/usr/bin/env bash
# The test suite: real local Spark, real Delta tables, real Airflow on SQLite.
# Extra arguments go to pytest (e.g. scripts/test.sh tests/contracts -q; -n 0 runs in one process).
# Two pytest-xdist workers share the two cores: most of a multi-process test is spent waiting on
# the processes it started (three workers were slower). Grouping and order in tests/conftest.py.
set -uo pipefail
cd "$(dirname "$0")/.."
export AIRFLOW__CORE__LOAD_EXAMPLES=False
bash scripts/test_services.sh || exit $?  # PostgreSQL and Chromium, when missing
# --durations: every full run ends with where its time went (the files ranked first in
# tests/conftest.py should be the ones at the top)
.venv/bin/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=30 "$@"
status=$?
if [ "$status" -eq 5 ]; then
  echo "scripts/test.sh: pytest collected no tests" >&2
fi
exit "$status"
