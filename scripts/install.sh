#!/usr/bin/env bash
# Install contract-gate and everything it needs into ./.venv on a fresh machine:
# Python packages (Airflow, pyspark + delta-spark, the providers), the Delta Lake jars
# (Ivy from Maven Central, falling back to `mvn dependency:copy` into .jars/), the JVM class
# archive that shortens every local gate job's start, and an Airflow home with a SQLite
# metadata database under ./.airflow. What only the tests need (PostgreSQL, Chromium) is
# installed by scripts/test_services.sh (run by scripts/test.sh), so the quick start does not wait for it.
#
#   bash scripts/install.sh [--class-archive-later]
#
# --class-archive-later leaves the class archive out (the quick start builds it after its demo,
# which gates over Spark Connect and so starts no local gate job).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! command -v java >/dev/null 2>&1; then
  echo "install: Java 17+ is required for Spark; installing openjdk-17-jre-headless" >&2
  apt-get -o DPkg::Lock::Timeout=600 update -qq \
    && apt-get -o DPkg::Lock::Timeout=600 install -y -qq openjdk-17-jre-headless >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# uv resolves and downloads in parallel: the same packages as pip (same index, same pins) in about
# half pip's time on a fresh machine.
# uv does not read pip's settings: the CA bundle pip is told to trust is handed over, and should uv
# fail all the same, pip installs the same pins.
if [ -n "${PIP_CERT:-}" ] && [ -z "${SSL_CERT_FILE:-}" ]; then
  export SSL_CERT_FILE="$PIP_CERT"
fi
.venv/bin/python -m pip install --quiet "uv==0.13.9"
# pyproject.toml holds ranges; the exact versions tested live in constraints/ (one file per Python).
python_version=$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
constraints=()
if [ -f "constraints/constraints-$python_version.txt" ]; then
  constraints=(-c "constraints/constraints-$python_version.txt")
else
  echo "install: no constraints/constraints-$python_version.txt; installing the newest versions in range" >&2
fi
if ! .venv/bin/uv pip install --quiet --python .venv/bin/python "${constraints[@]}" -e ".[all]"; then
  echo "install: uv pip install failed; installing with pip instead" >&2
  .venv/bin/python -m pip install --quiet "${constraints[@]}" -e ".[all]"
fi

export AIRFLOW_HOME="${AIRFLOW_HOME:-$PWD/.airflow}"
mkdir -p "$AIRFLOW_HOME"
# The metadata database is migrated while the jars download and the class archive builds: one is
# mostly Python on one core, the others wait on the network or leave some of the second core idle.
AIRFLOW__CORE__LOAD_EXAMPLES=False .venv/bin/airflow db migrate >/dev/null &
migrate=$!

echo "install: fetching the Delta Lake jars"
# Fetched only: the class archive build runs a miniature gate on Delta tables, which proves they
# load (a separate Delta round trip here took another minute on a small machine).
.venv/bin/python -m contract_gate_spark.runtime.jars --resolve-only
# Hadoop's S3A connector for gates whose tables are in S3: about 690 MB (the AWS SDK bundle), cached
# in ~/.ivy2.5.2 like Delta's jars, so only the first install pays (docs/object-storage.md).
echo "install: fetching Hadoop's S3A connector"
.venv/bin/python -m contract_gate_spark.runtime.jars --s3a

if [ "${1:-}" != "--class-archive-later" ]; then
  echo "install: building the class archive for local gate jobs (about a minute)"
  .venv/bin/python -m contract_gate.local_spark.class_archive
fi
wait "$migrate"
echo "install: done (.venv, Delta jars, Airflow home $AIRFLOW_HOME)"
