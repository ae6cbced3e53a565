#!/usr/bin/env bash
# The test suite: real local Spark, real Delta tables, real Airflow on SQLite.
# Extra arguments go to pytest (e.g. scripts/test.sh tests/contracts -q).
set -uo pipefail
cd "$(dirname "$0")/.."
export AIRFLOW__CORE__LOAD_EXAMPLES=False
# PostgreSQL (the Debian package) for the tests that run Airflow on a real PostgreSQL metadata
# database, as the compose stack does. Installed here, not by the quick start, which needs none.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  echo "test: PostgreSQL server programs not found; installing the postgresql package" >&2
  apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
fi
# Chromium (the Debian package) for the browser tests of the gate's pages, driven by Playwright.
if ! command -v chromium >/dev/null 2>&1; then
  echo "test: chromium not found; installing it for the browser tests of the report pages" >&2
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
.venv/bin/python -m pytest "$@"
status=$?
if [ "$status" -eq 5 ]; then
  echo "scripts/test.sh: pytest collected no tests" >&2
fi
exit "$status"
