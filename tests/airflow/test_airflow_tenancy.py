"""What a team's gate may read, in Airflow. Under ``[contract_gate] tenants`` the DAG factory
refuses a contract that reads another team's landing, or whose file no team's pattern matches, as
it refuses any broken contract: its DAG files fail to import with the reason, every other
contract's DAGs load. And whoever may trigger a gate cannot point its run's ``landing`` param at a
file the contract's own landing could not be."""

from __future__ import annotations

import json
import shutil

from _airflow_gate import REPO


def test_a_contract_outside_its_tenant_does_not_load_and_the_others_do(tmp_path, monkeypatch):
    from airflow.dag_processing.dagbag import DagBag

    from contract_gate.dag_factory import sync_dag_files

    contracts, dags = tmp_path / "contracts", tmp_path / "dags"
    shutil.copytree(REPO / "contracts", contracts)
    # the meter team's contract names the orders team's landing as its own
    meters = contracts / "meter_readings.yaml"
    meters.write_text(meters.read_text().replace("path: landing/meter_readings", "path: landing/orders"))
    dags.mkdir()
    shutil.copy(REPO / "dags" / "contract_gates.py", dags / "contract_gates.py")
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__TENANTS", json.dumps(
        {"orders*.yaml": {"reads": ["lakehouse/landing/orders"]},
         "meter_*.yaml": {"reads": ["lakehouse/landing/meter_readings"]}}))
    sync_dag_files(dags / "contract_gates.py", contracts)

    bag = DagBag(str(dags))

    assert sorted(bag.dags) == ["orders", "orders__freshness", "orders__retention"]
    errors = {path.rsplit("/", 1)[1]: text for path, text in bag.import_errors.items()}
    assert sorted(errors) == ["meter_readings.py", "regional_daily_cases.py"]
    assert "customProperties[0].value.landing.path" in errors["meter_readings.py"]
    assert "is not where the contract's tenant (meter_*.yaml in [contract_gate] tenants" in errors["meter_readings.py"]
    assert "matches the contract file name 'regional_daily_cases.yaml'" in errors["regional_daily_cases.py"]


def test_a_run_whose_landing_param_leaves_the_contracts_bounds_reads_nothing(gate, tmp_path):
    secret = tmp_path / "worker_secrets.csv"
    secret.write_text("order_id,customer_id,order_total,currency,order_timestamp\nS3CRET,C-1,1.0,EUR,2025-01-01\n")
    candidates = gate.home / "lakehouse" / "_contract_gate_candidates"
    before = (gate.version("lakehouse/orders_quarantine"), gate.version("lakehouse/orders"),
              sorted(candidates.glob("orders*")))

    run = gate.run("orders", landing=str(secret), landing_format="csv")

    assert run.states["submission"] == "failed" and run.states["stage_validate"] == "upstream_failed"
    assert run.decision is None
    assert (gate.version("lakehouse/orders_quarantine"), gate.version("lakehouse/orders"),
            sorted(candidates.glob("orders*"))) == before  # nothing was staged, published or quarantined
