"""The contract side (load, compile, lint, plan, DDL text) imports neither pyspark nor Airflow,
so it runs where neither is installed and a DAG file that compiles a plan never starts a JVM."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pyspark", "py4j", "delta", "airflow")

PROGRAM = """
import contextlib, io, json, sys
from contract_gate.contract.loader import load_contract
from contract_gate.contract.compiler import compile_plan
from contract_gate_plan.document import render_plan
from contract_gate_plan.table_ddl import render_ddl, compatibility_differences
from contract_gate.cli.main import main
for name in ("regional_daily_cases", "orders", "meter_readings"):
    plan = compile_plan(load_contract(f"contracts/{name}.yaml"))
    render_plan(plan.document), render_ddl(plan), compatibility_differences(plan, [], {})
with contextlib.redirect_stdout(io.StringIO()):
    codes = [main(["lint", "contracts"]), main(["lint", "tests/contracts_bad"]),
             main(["plan", "contracts/orders.yaml"]), main(["plan", "contracts/orders.yaml", "--ddl"])]
print(json.dumps({"codes": codes, "modules": sorted(sys.modules)}))
"""


def test_load_compile_lint_and_plan_never_import_pyspark_or_airflow():
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["codes"] == [0, 1, 0, 0]
    heavy = sorted(m for m in report["modules"] if m.split(".")[0] in HEAVY)
    assert heavy == []


IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
names = [m.name for m in pkgutil.walk_packages(package.__path__, sys.argv[1] + ".")]
for name in names:
    importlib.import_module(name)
print(json.dumps({"imported": names, "modules": sorted(sys.modules)}))
"""


def _import_every_module(package: str) -> dict:
    """Import every module of ``package`` in a fresh interpreter: what it imported, and what
    ``sys.modules`` then holds."""
    result = subprocess.run([sys.executable, "-c", IMPORT_EVERY_MODULE, package],
                            capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_the_spark_side_never_imports_airflow_or_the_provider():
    """``contract_gate_spark`` is shipped to clusters as files (pyspark, delta-spark, sqlglot, stdlib):
    importing every module of it pulls in neither Airflow nor ``contract_gate``."""
    report = _import_every_module("contract_gate_spark")
    assert "contract_gate_spark.validation.engine" in report["imported"] and "contract_gate_spark.commands.publish" in report["imported"]
    leaked = sorted(m for m in report["modules"] if m.split(".")[0] in ("airflow", "contract_gate"))
    assert leaked == []


def test_the_shared_plan_package_is_import_light():
    """``contract_gate_plan`` is imported by both sides, the DAG-parse path included: importing every
    module of it loads neither pyspark, py4j, delta, Airflow nor ``contract_gate``."""
    report = _import_every_module("contract_gate_plan")
    assert "contract_gate_plan.model" in report["imported"] and "contract_gate_plan.sql_allowlist" in report["imported"]
    leaked = sorted(m for m in report["modules"]
                    if m.split(".")[0] in ("pyspark", "py4j", "delta", "airflow", "contract_gate", "contract_gate_spark"))
    assert leaked == []
