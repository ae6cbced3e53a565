"""The gate settings ``limits`` (time budgets): defaults in every plan, a contract may ask for less
or for more up to the deployment's ceiling (``[contract_gate] max_validation_seconds`` /
``max_query_seconds``), and lint refuses more, naming the ceiling and the YAML path."""

from __future__ import annotations

import pytest
from budget_contracts import slow_contract

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError

CEILING = "AIRFLOW__CONTRACT_GATE__MAX_QUERY_SECONDS"


@pytest.fixture(autouse=True)
def no_deployment_ceilings(monkeypatch):
    for name in (CEILING, "AIRFLOW__CONTRACT_GATE__MAX_VALIDATION_SECONDS", "CONTRACT_GATE_MAX_QUERY_SECONDS",
                 "CONTRACT_GATE_MAX_VALIDATION_SECONDS"):
        monkeypatch.delenv(name, raising=False)


def contract(tmp_path, **limits) -> str:
    path = tmp_path / "slow.yaml"
    path.write_text(slow_contract("slow", "local", **limits))
    return str(path)


def test_the_plan_carries_the_limits_asked_for(tmp_path):
    plan = compile_plan(contract(tmp_path, query_seconds=5, validation_seconds=60))
    assert plan.document["gate"]["limits"] == {"validationSeconds": 60, "querySeconds": 5}


def test_a_limit_above_the_built_in_ceiling_is_refused_naming_it(tmp_path):
    with pytest.raises(ContractError) as refused:
        compile_plan(contract(tmp_path, query_seconds=1801))
    (issue,) = refused.value.issues
    assert issue.path == "customProperties[0].value.limits.querySeconds"
    assert issue.message == ("1801 s is above the deployment's ceiling of 1800 s (built in; "
                             f"[contract_gate] max_query_seconds ({CEILING}) sets the deployment's own)")


def test_the_deployment_sets_the_ceiling_and_a_default_above_it_becomes_it(tmp_path, monkeypatch):
    monkeypatch.setenv(CEILING, "120")
    with pytest.raises(ContractError, match=r"300 s is above the deployment's ceiling of 120 s "
                                            r"\(\[contract_gate\] max_query_seconds"):
        compile_plan(contract(tmp_path, query_seconds=300))
    text = (tmp_path / "slow.yaml").read_text().replace("        querySeconds: 300\n", "")
    (tmp_path / "slow.yaml").write_text(text)
    assert compile_plan(str(tmp_path / "slow.yaml")).document["gate"]["limits"]["querySeconds"] == 120


@pytest.mark.parametrize("seconds", [0, -5, "soon"])
def test_a_limit_must_be_whole_seconds_above_zero(tmp_path, seconds):
    text = slow_contract("slow", "local", query_seconds=5).replace("querySeconds: 5", f"querySeconds: {seconds}")
    (tmp_path / "slow.yaml").write_text(text)
    with pytest.raises(ContractError, match="limits.querySeconds"):
        compile_plan(str(tmp_path / "slow.yaml"))
