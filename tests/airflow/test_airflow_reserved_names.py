"""The DAG factory refuses a contract whose tables would sit where the gate keeps its own folders
(``contract_gate_plan.reserved``), as lint does, and the other contracts' DAGs still load."""

from __future__ import annotations

import shutil

from _airflow_gate import REPO

HOSTILE = REPO / "tests" / "contracts_hostile"
RESERVED = {"own_object_named_status": "is named '_contract_gate_status', a name the gate keeps for itself",
            "own_target_inside_runs": "lies inside '_runs', a name the gate keeps for itself"}


def test_a_contract_with_a_reserved_target_breaks_only_its_own_dag(tmp_path):
    from airflow.dag_processing.dagbag import DagBag

    from contract_gate.dag_factory import sync_dag_files

    contracts, dags = tmp_path / "contracts", tmp_path / "dags"
    shutil.copytree(REPO / "contracts", contracts)
    for name in RESERVED:
        shutil.copy(HOSTILE / f"{name}.yaml", contracts / f"{name}.yaml")
    dags.mkdir()
    shutil.copy(REPO / "dags" / "contract_gates.py", dags / "contract_gates.py")
    sync_dag_files(dags / "contract_gates.py", contracts)
    bag = DagBag(str(dags))

    assert {"meter_readings", "orders", "regional_daily_cases"} <= set(bag.dags)
    errors = {file.rsplit("/", 1)[-1]: error for file, error in bag.import_errors.items()}
    assert sorted(errors) == sorted(f"{name}.py" for name in RESERVED)
    for name, message in RESERVED.items():
        assert f"{name}.yaml" in errors[f"{name}.py"] and message in errors[f"{name}.py"]
    assert not any(dag.fileloc.endswith(tuple(f"{name}.py" for name in RESERVED)) for dag in bag.dags.values())
