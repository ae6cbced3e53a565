"""``[contract_gate] execution_mode``: the deployment's one switch for where every gate's Spark runs.

The compose stack sets it to point every generated gate at its Spark Connect server or its
standalone cluster without editing a contract. A task's own ``execution_mode`` still wins; the
contract's ``execution`` settings apply only when neither is given, and the contract's
connection only travels with the contract's own mode. The runners built here are the real ones.
"""

from __future__ import annotations

import re

import pytest
from _airflow_gate import REPO

from contract_gate import config
from contract_gate.contract.compiler import compile_plan
from contract_gate.operators.base import pick_execution
from contract_gate.operators.validate import GateValidateOperator
from contract_gate.runners.local import LocalRunner
from contract_gate.runners.spark_submit import SparkSubmitRunner
from contract_gate_plan.model import Plan, load_plan

CONTRACT = str(REPO / "contracts" / "regional_daily_cases.yaml")  # execution.mode: local
EXECUTION_MODE_ENV = config.environment_variable("execution_mode")


def plan_with(execution: dict) -> Plan:
    document = compile_plan(CONTRACT).document
    document = {**document, "gate": {**document["gate"], "execution": execution}}
    document.pop("fingerprint")
    return load_plan(document)


def operator(**kwargs) -> GateValidateOperator:
    return GateValidateOperator(task_id="validate", contract=CONTRACT, submission_id="s1", **kwargs)


def test_the_switch_points_a_local_contract_at_the_cluster(monkeypatch):
    monkeypatch.setenv(EXECUTION_MODE_ENV, "spark_submit")
    plan = compile_plan(CONTRACT)
    assert plan.execution["mode"] == "local"
    runner = operator().make_runner(plan)
    assert isinstance(runner, SparkSubmitRunner)
    assert runner.conn_id == "spark_default"


def test_without_the_switch_the_contract_decides(monkeypatch):
    monkeypatch.delenv(EXECUTION_MODE_ENV, raising=False)
    assert isinstance(operator().make_runner(compile_plan(CONTRACT)), LocalRunner)
    plan = plan_with({"mode": "spark_submit", "connectionId": "team_cluster"})
    runner = operator().make_runner(plan)
    assert isinstance(runner, SparkSubmitRunner) and runner.conn_id == "team_cluster"


def test_a_task_argument_wins_over_the_switch(monkeypatch):
    monkeypatch.setenv(EXECUTION_MODE_ENV, "spark_submit")
    assert isinstance(operator(execution_mode="local").make_runner(compile_plan(CONTRACT)), LocalRunner)


def test_the_contract_connection_travels_only_with_the_contract_mode(monkeypatch):
    plan = plan_with({"mode": "databricks", "connectionId": "team_workspace"})
    monkeypatch.setenv(EXECUTION_MODE_ENV, "spark_submit")
    assert pick_execution(None, None, plan) == ("spark_submit", None)  # the runner's default
    assert pick_execution(None, "ops_cluster", plan) == ("spark_submit", "ops_cluster")
    monkeypatch.setenv(EXECUTION_MODE_ENV, "databricks")
    assert pick_execution(None, None, plan) == ("databricks", "team_workspace")


@pytest.mark.parametrize("value", ["sparkconnect", "local; rm -rf /", "LOCAL"])
def test_an_unknown_switch_value_is_an_error_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(EXECUTION_MODE_ENV, value)
    with pytest.raises(ValueError, match=rf"^{re.escape(config.describe('execution_mode'))}=.* is not an execution mode; "
                                         r"use one of .*local"):
        operator().make_runner(compile_plan(CONTRACT))


def test_a_blank_switch_is_unset(monkeypatch):
    monkeypatch.setenv(EXECUTION_MODE_ENV, "  ")
    assert pick_execution(None, None, compile_plan(CONTRACT))[0] == "local"
