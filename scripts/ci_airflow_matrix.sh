#!/usr/bin/env bash
# The provider installed as a user with an Airflow of their own installs it: build the sdist and the
# wheel (twine checks both), make a fresh virtualenv holding only Airflow (the lowest version
# pyproject.toml allows, then the newest), install the wheel with its extras into it, fail if that
# moved Airflow or any of its providers, and run the quick subset of the tests against the
# installed wheel (not the source tree).
#
#   bash scripts/ci_airflow_matrix.sh [lowest] [newest]     (default: both)
#
# The lowest leg is an existing Airflow 3.1.0 with the providers of that release. Airflow's
# constraints files are not on the package index, so Airflow and the providers the gate uses are
# resolved from the index as it stood the day after the release, which is what constraints-3.1.0
# pins (a later structlog, which Airflow 3.1 does not cap, breaks it). Those provider versions must
# be pyproject.toml's floors, so the floors are what CI tests. The newest leg takes the newest
# Airflow; the wheel brings the providers it lacks at the newest versions in range.
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
# Each leg builds pyspark from its sdist (PyPI has no wheel of it), and uv keeps every build (about
# 4 GB a run): prune what no install reaches any more, or a working machine's disk fills up.
trap 'rm -rf "$work"; .venv/bin/uv cache prune --quiet' EXIT
# The wheel is built from the sdist, as an index user gets it: a wheel built straight from the tree
# also ships whatever a stale build/lib still holds (modules since moved or deleted).
.venv/bin/uv build --quiet --out-dir "$work/dist" .
wheel=$(ls "$work"/dist/*.whl)
.venv/bin/uv tool run --quiet --from "twine>=6,<7" twine check --strict "$work"/dist/*
mkdir "$work/tests_only" && ln -s "$PWD/tests" "$work/tests_only/tests"
# The Spark side stays the pair CI tests (its Delta jars are fetched once, for that delta-spark):
# this matrix is about Airflow. The wheel's own ranges allow later patch releases of both.
grep -E '^(pyspark|delta-spark)==' constraints/constraints-3.11.txt > "$work/spark_pair.txt"

# The providers the gate requires, without versions: "apache-airflow-providers-x[e]>=1.2,<2" -> "...-x[e]".
mapfile -t providers < <(.venv/bin/python -c '
import tomllib
from packaging.requirements import Requirement

for text in tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["airflow"]:
    requirement = Requirement(text)
    if requirement.name.startswith("apache-airflow-providers-"):
        print(requirement.name + ("[" + ",".join(sorted(requirement.extras)) + "]" if requirement.extras else ""))')

# Every installed distribution of Airflow and its providers, one "name==version" a line.
airflow_versions() {
  "$1/bin/python" -c '
from importlib.metadata import distributions
names = {d.metadata["Name"].lower(): d.version for d in distributions()}
print("\n".join(sorted(f"{n}=={v}" for n, v in names.items() if n.startswith("apache-airflow"))))'
}

# pyproject.toml's floors of Airflow and the providers must be the versions installed beside Airflow 3.1.0.
check_floors() {
  "$1/bin/python" -c '
import sys, tomllib
from importlib.metadata import version
from packaging.requirements import Requirement

wrong = []
for text in tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["airflow"]:
    requirement = Requirement(text)
    floors = [spec.version for spec in requirement.specifier if spec.operator == ">="]
    if requirement.name.startswith("apache-airflow") and floors and floors[0] != version(requirement.name):
        wrong.append(f"{requirement.name}: floor {floors[0]}, installed {version(requirement.name)}")
if wrong:
    sys.exit("ci_airflow_matrix: pyproject.toml floors that are not the versions tested:\n  " + "\n  ".join(wrong))'
}

for leg in "${legs[@]}"; do
  venv="$work/venv-$leg"
  case "$leg" in
    lowest) airflow=("apache-airflow==$LOWEST_AIRFLOW" "${providers[@]}" --exclude-newer "$LOWEST_AIRFLOW_INDEX_DATE") ;;
    newest) airflow=("apache-airflow>=$LOWEST_AIRFLOW,<4") ;;
    *) echo "ci_airflow_matrix: unknown leg $leg (lowest or newest)" >&2; exit 2 ;;
  esac
  started=$SECONDS
  .venv/bin/uv venv --quiet --python .venv/bin/python "$venv"
  .venv/bin/uv pip install --quiet --python "$venv/bin/python" "${airflow[@]}"
  before=$(airflow_versions "$venv")
  [ "$leg" != lowest ] || check_floors "$venv"
  # Nothing constrains Airflow or its providers: the wheel's own ranges must accept what is installed.
  .venv/bin/uv pip install --quiet --python "$venv/bin/python" -c "$work/spark_pair.txt" "$wheel[spark,airflow,test]"
  after=$(airflow_versions "$venv")
  moved=$(comm -23 <(echo "$before") <(echo "$after"))
  if [ -n "$moved" ]; then
    echo "ci_airflow_matrix: $leg: installing the wheel moved Airflow or its providers:" >&2
    echo "$moved" | sed 's/^/  was /' >&2
    comm -13 <(echo "$before") <(echo "$after") | sed 's/^/  now /' >&2
    exit 1
  fi
  echo "ci_airflow_matrix: $leg: the wheel installed in $((SECONDS - started)) s and changed none of these:"
  echo "$before" | sed 's/^/  /'
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
