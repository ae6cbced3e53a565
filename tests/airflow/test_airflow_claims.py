"""The DAG factory refuses two contracts that claim one table: neither gate of the pair loads (an
import error of each one's own DAG file, naming the other file), every other contract's DAGs do."""

from __future__ import annotations

import shutil

from _airflow_gate import REPO


def test_neither_gate_of_a_claiming_pair_loads_and_the_others_do(tmp_path):
    from airflow.dag_processing.dagbag import DagBag

    from contract_gate.dag_factory import sync_dag_files

    contracts, dags = tmp_path / "contracts", tmp_path / "dags"
    shutil.copytree(REPO / "contracts", contracts)
    hostile = REPO / "tests" / "contracts_hostile" / "own_claims_orders_quarantine.yaml"
    shutil.copy(hostile, contracts / hostile.name)
    dags.mkdir()
    shutil.copy(REPO / "dags" / "contract_gates.py", dags / "contract_gates.py")
    sync_dag_files(dags / "contract_gates.py", contracts)

    bag = DagBag(str(dags))

    assert sorted(bag.dags) == ["meter_readings", "meter_readings__retention", "regional_daily_cases",
                                "regional_daily_cases__freshness", "regional_daily_cases__retention"]
    errors = {path.rsplit("/", 1)[1]: text for path, text in bag.import_errors.items()}
    assert sorted(errors) == ["orders.py", "own_claims_orders_quarantine.py"]
    assert f"is also claimed by {contracts / hostile.name} (customProperties[0].value.quarantine.table" \
        in errors["orders.py"]
    assert f"is also claimed by {contracts / 'orders.yaml'} (schema[0].name, line 19) as its target" \
        in errors["own_claims_orders_quarantine.py"]

    (contracts / hostile.name).unlink()  # the clash resolved: orders loads again, nothing else needed
    sync_dag_files(dags / "contract_gates.py", contracts)
    assert {"orders", "orders__retention", "orders__freshness"} <= set(DagBag(str(dags)).dags)
