"""The gate on whichever Airflow is installed, from 3.1 on: scripts/ci_airflow_matrix.sh runs this
file against the installed wheel beside the lowest and the newest Airflow in range."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from datetime import timedelta

import pytest
import yaml
from _airflow_gate import REPO

from contract_gate import airflow_compat
from contract_gate.contract.compiler import compile_plan
from contract_gate.notifications.deadline import decision_deadline

# In a process of its own, as some modules load pyspark: every module of the provider (the one
# package that imports Airflow) imports, and every Airflow name a module imports, inside functions
# too, exists in this Airflow; only airflow_compat may try a name that one Airflow lacks.
CHECK_IMPORTS = """
import ast, importlib, importlib.util, json, pkgutil
from pathlib import Path

failed, missing = {}, []
provider = importlib.import_module("contract_gate")
for module in pkgutil.walk_packages(provider.__path__, "contract_gate."):
    try:
        importlib.import_module(module.name)
    except ImportError as error:
        failed[module.name] = str(error)


class AirflowImports(ast.NodeVisitor):
    def __init__(self):
        self.names = []

    def visit_If(self, node):  # names only type checkers read are not imported
        if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.module and node.module.split(".")[0] == "airflow":
            self.names += [(node.lineno, node.module, alias.name) for alias in node.names]


for path in sorted(Path(provider.__file__).parent.rglob("*.py")):
    if path.name == "airflow_compat.py":
        continue
    visitor = AirflowImports()
    visitor.visit(ast.parse(path.read_text()))
    for line, module, name in visitor.names:
        try:
            found = hasattr(importlib.import_module(module), name) or importlib.util.find_spec(f"{module}.{name}")
        except ImportError:
            found = False
        if not found:
            missing.append(f"{path.name}:{line} {module}.{name}")
print(json.dumps({"failed": failed, "missing": missing}))
"""


def test_every_module_and_airflow_name_imports_on_this_airflow():
    done = subprocess.run([sys.executable, "-c", CHECK_IMPORTS], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"failed": {}, "missing": []}


@pytest.fixture
def deadline_plan(tmp_path):
    """An example contract whose gate settings ask for a 30-minute decision deadline."""
    document = yaml.safe_load((REPO / "contracts" / "regional_daily_cases.yaml").read_text())
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    gate["alerts"] = {"decisionDeadlineMinutes": 30,
                      "notifiers": [{"class": "contract_gate.notifications.file.FileNotifier",
                                     "arguments": {"path": "alerts.jsonl"}}]}
    contract = tmp_path / "regional_daily_cases.yaml"
    contract.write_text(yaml.safe_dump(document, sort_keys=False))
    return compile_plan(contract)


@pytest.mark.skipif(not airflow_compat.DEADLINE_ALERTS, reason="Airflow 3.1: no deadline callback on the executor")
def test_the_gate_dag_has_its_decision_deadline(deadline_plan):
    deadline = decision_deadline(deadline_plan)
    assert deadline.interval == timedelta(minutes=30)


@pytest.mark.skipif(airflow_compat.DEADLINE_ALERTS, reason="Airflow 3.2+ sets the deadline")
def test_on_airflow_3_1_the_gate_dag_runs_without_a_deadline_and_the_log_says_why(deadline_plan, caplog):
    with caplog.at_level(logging.WARNING, logger="contract_gate.notifications.deadline"):
        assert decision_deadline(deadline_plan) is None
    assert "alerts.decisionDeadlineMinutes needs Airflow 3.2 or later" in caplog.text
    assert repr(deadline_plan.contract_id) in caplog.text
