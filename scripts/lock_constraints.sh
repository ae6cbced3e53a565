#!/usr/bin/env bash
# Write constraints/constraints-<python X.Y>.txt: the exact versions scripts/install.sh and CI
# install, resolved by uv from pyproject.toml's ranges (extras spark, airflow, test) for .venv's
# Python. A version already in the file is kept while it fits; pass --upgrade (or
# --upgrade-package NAME) to move to newer ones.
#
#   bash scripts/lock_constraints.sh [--upgrade]
set -euo pipefail
cd "$(dirname "$0")/.."
python_version=$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
mkdir -p constraints
.venv/bin/uv pip compile pyproject.toml --quiet --annotation-style line --extra spark --extra airflow --extra test \
  --python .venv/bin/python --custom-compile-command "bash scripts/lock_constraints.sh" \
  --output-file "constraints/constraints-$python_version.txt" "$@"
