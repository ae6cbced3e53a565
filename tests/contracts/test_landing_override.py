"""A run's landing override (the DAG's ``landing`` param, ``run --landing``) is read only where the
contract's own landing could be (contract.landing_override): whoever may trigger a team's gate
cannot read the worker's files or another team's landing into that team's quarantine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract_gate.contract.landing_override import landing_override_problem

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def contract(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    monkeypatch.delenv("AIRFLOW__CONTRACT_GATE__LANDING_ROOTS", raising=False)
    monkeypatch.delenv("AIRFLOW__CONTRACT_GATE__TENANTS", raising=False)
    path = tmp_path / "orders.yaml"
    path.write_text((ROOT / "contracts" / "orders.yaml").read_text())
    return path


def test_an_override_under_the_servers_root_or_a_listed_landing_root_is_read(contract, tmp_path, monkeypatch):
    assert landing_override_problem(contract, None, "lakehouse/landing/orders_fixed") is None
    assert landing_override_problem(contract, None, str(tmp_path / "lakehouse" / "landing" / "x.json")) is None
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__LANDING_ROOTS", str(tmp_path / "drops"))
    assert landing_override_problem(contract, "dev", str(tmp_path / "drops" / "orders" / "fixed.json")) is None


@pytest.mark.parametrize("given", ["/etc/hostname", "../secrets", "lakehouse/../../etc", "lakehouse/landing/{orders,billing}",
                                   "lakehouse/landing/*"])
def test_an_override_anywhere_else_is_refused(contract, given):
    problem = landing_override_problem(contract, None, given)
    assert problem is not None and repr(given) in problem


def test_an_override_through_a_link_out_of_the_root_is_refused(contract, tmp_path):
    (tmp_path / "lakehouse" / "landing").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "lakehouse" / "landing" / "fixed").symlink_to(tmp_path / "elsewhere")
    assert "is outside" in landing_override_problem(contract, None, "lakehouse/landing/fixed")


def test_where_teams_share_the_gate_an_override_stays_in_its_teams_reads(contract, monkeypatch):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__TENANTS", json.dumps(
        {"orders*.yaml": {"reads": ["lakehouse/landing/orders"]}, "billing*.yaml": {"reads": ["lakehouse/landing/billing"]}}))
    assert landing_override_problem(contract, None, "lakehouse/landing/orders/fixed.json") is None
    problem = landing_override_problem(contract, None, "lakehouse/landing/billing/invoices.json")
    assert "is not where the contract's tenant (orders*.yaml in [contract_gate] tenants" in problem
