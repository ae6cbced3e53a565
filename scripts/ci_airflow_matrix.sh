#!/usr/bin/env bash
# The provider installed as a user with an Airflow of their own installs it: build the wheel, make
# a fresh virtualenv holding only Airflow (the lowest version pyproject.toml allows, then the newest),
# install the wheel with its extras into it, check that Airflow's version did not move, and run the
# quick subset of the tests against the installed wheel (not the source tree).
#
#   bash scripts/ci_airflow_matrix.sh [lowest] [newest]     (default: both)
#
# Beside the lowest Airflow the providers are installed at the floors pyproject.toml names, so
# those floors are tested too; beside the newest, uv picks the newest versions in range. Airflow's
# own constraints files are not on the package index: the lowest Airflow is resolved from the
# index as it stood the day after its release, as those files pin it (Airflow 3.1 and 3.2 do not
# cap structlog, and a later structlog broke Airflow 3.1).
set -euo pipefail
cd "$(dirname "$0")/.."

LOWEST_AIRFLOW=3.1.0  # pyproject.toml's floor for apache-airflow
LOWEST_AIRFLOW_INDEX_DATE=2025-09-26  # the day after it was published
QUICK_TESTS=(tests/contracts tests/airflow/test_provider_faces.py tests/airflow/test_airflow_dag_factory.py
             tests/airflow/test_dags_first_parse.py tests/airflow/test_airflow_versions.py)
legs=("$@")
[ ${#legs[@]} -gt 0 ] || legs=(lowest newest)
if [ -n "${PIP_CERT:-}" ] && [ -z "${SSL_CERT_FILE:-}" ]; then
  export SSL_CERT_FILE="$PIP_CERT"  # uv does not read pip's settings
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The wheel is built from the sdist, as an index user gets it: a wheel built straight from the tree
# also ships whatever a stale build/lib still holds (modules since moved or deleted).
.venv/bin/uv build --quiet --out-dir "$work/dist" .
wheel=$(ls "$work"/dist/*.whl)
mkdir "$work/tests_only" && ln -s "$PWD/tests" "$work/tests_only/tests"
# The providers' floors, as exact pins: "apache-airflow-providers-x>=1.2,<2" -> "apache-airflow-providers-x==1.2".
.venv/bin/python - "$work/floors.txt" <<'EOF'
import sys, tomllib
from packaging.requirements import Requirement

extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]
floors = []
for text in extras["airflow"]:
    requirement = Requirement(text)
    lowest = [spec.version for spec in requirement.specifier if spec.operator == ">="]
    if requirement.name.startswith("apache-airflow-providers-") and lowest:
        floors.append(f"{requirement.name}=={lowest[0]}")
open(sys.argv[1], "w").write("\n".join(floors) + "\n")
EOF

airflow_versions() {
  "$1/bin/python" -c 'from importlib.metadata import version as v
print(*(f"{n}=={v(n)}" for n in ("apache-airflow", "apache-airflow-core", "apache-airflow-task-sdk")))'
}

for leg in "${legs[@]}"; do
  venv="$work/venv-$leg"
  case "$leg" in
    lowest) airflow=("apache-airflow==$LOWEST_AIRFLOW" --exclude-newer "$LOWEST_AIRFLOW_INDEX_DATE")
            floors=(-c "$work/floors.txt") ;;
    newest) airflow=("apache-airflow>=$LOWEST_AIRFLOW,<4"); floors=() ;;
    *) echo "ci_airflow_matrix: unknown leg $leg (lowest or newest)" >&2; exit 2 ;;
  esac
  started=$SECONDS
  .venv/bin/uv venv --quiet --python .venv/bin/python "$venv"
  .venv/bin/uv pip install --quiet --python "$venv/bin/python" "${airflow[@]}"
  before=$(airflow_versions "$venv")
  .venv/bin/uv pip install --quiet --python "$venv/bin/python" "${floors[@]}" "$wheel[spark,airflow,test]"
  after=$(airflow_versions "$venv")
  echo "ci_airflow_matrix: $leg: $before; wheel installed in $((SECONDS - started)) s"
  if [ "$before" != "$after" ]; then
    echo "ci_airflow_matrix: $leg: installing the wheel changed Airflow: $before -> $after" >&2
    exit 1
  fi
  # PYTHONSAFEPATH keeps the working directory off sys.path, so the packages come from the wheel;
  # the tests' own helpers (tests.contracts._contract_texts) through a folder holding only tests/.
  export PYTHONSAFEPATH=1 PYTHONPATH="$work/tests_only"
  "$venv/bin/python" -c 'import sys, contract_gate, contract_gate_plan, contract_gate_spark
stray = [m.__name__ for m in (contract_gate, contract_gate_plan, contract_gate_spark) if not m.__file__.startswith(sys.prefix)]
sys.exit(f"imported from the source tree, not the wheel: {stray}" if stray else 0)'
  AIRFLOW__CORE__LOAD_EXAMPLES=False "$venv/bin/python" -m pytest -p no:cacheprovider -q -n 2 --dist loadfile \
    -m "not slow" "${QUICK_TESTS[@]}"
  unset PYTHONSAFEPATH PYTHONPATH
  echo "ci_airflow_matrix: $leg: passed in $((SECONDS - started)) s"
  rm -rf "$venv"
done
