"""Run as a child process: the generated gate DAGs through ``dag.test()`` in ``spark_connect``
mode, against the Connect server in ``AIRFLOW_CONN_SPARK_CONNECT_DEFAULT``.

Its own Airflow world (``tests/airflow/_airflow_gate.py``: a private AIRFLOW_HOME with SQLite,
DAG folder, gate home), with the example contracts copied and their execution mode set to
``spark_connect``. Prints what the runs decided as JSON on its last line.

    python _connect_dag_run.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS), str(TESTS / "airflow")]

from _airflow_gate import (  # noqa: E402
    AIRFLOW_ENV, CONTRACTS, DAGS, HOME, REPO, Gate, copy_contracts, order_rows, regional_rows,
)

os.environ.update(AIRFLOW_ENV)


def main() -> dict:
    from airflow.utils import db

    from contract_gate.dag_factory import sync_dag_files

    db.upgradedb()
    copy_contracts(mode="spark_connect")  # the default connection: spark_connect_default
    DAGS.mkdir(parents=True)
    shutil.copy(REPO / "dags" / "contract_gates.py", DAGS / "contract_gates.py")
    sync_dag_files(DAGS / "contract_gates.py", CONTRACTS)
    HOME.mkdir(parents=True, exist_ok=True)
    gate = Gate()

    runs = {}
    gate.land("regional_daily_cases", regional_rows(region="G"), "csv")
    runs["good"] = gate.run("regional_daily_cases")
    gate.land("regional_daily_cases", regional_rows(region="B", bad=True), "csv")
    runs["bad"] = gate.run("regional_daily_cases")
    gate.land("orders", order_rows(invalid=1), "json")
    runs["split"] = gate.run("orders")
    return {"home": str(HOME),
            "runs": {name: {"decision": run.decision, "states": run.states,
                            "submission": (run.xcoms.get("submission") or {}).get("submission_id")}
                     for name, run in runs.items()}}


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
