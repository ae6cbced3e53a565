"""Run as a child process: the generated gate DAGs through ``dag.test()`` in ``spark_connect``
mode, against the Connect server in ``AIRFLOW_CONN_SPARK_CONNECT_DEFAULT``, with Airflow's StatsD
metrics and the OpenLineage provider configured by the caller's environment
(``tests/connect_gate_world.py``).

Its own Airflow world (``tests/airflow/_airflow_gate.py``: a private AIRFLOW_HOME with SQLite,
DAG folder, gate home), with the example contracts copied and their execution mode set to
``spark_connect``. Four gates: a regional batch published, a regional batch rejected and then
re-run fixed (published), and an orders batch split. The classified columns of every batch hold
the marker given as the argument. Prints one line: ``RESULT`` and what the runs decided, as JSON.

    python _connect_dag_run.py <marker>
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
REGIONAL = "regional_daily_cases"
RESULT = "RESULT "  # the prefix of the output line the caller reads (logs may print other lines)


def main(marker: str) -> dict:
    from airflow.configuration import conf
    from airflow.sdk._shared.observability.metrics import stats
    from airflow.sdk.observability.metrics import stats_utils
    from airflow.utils import db

    from contract_gate.dag_factory import sync_dag_files

    # what Airflow's task runner does first in every task process (dag.test() runs tasks in this one)
    stats.initialize(factory=stats_utils.get_stats_factory(),
                     export_legacy_names=conf.getboolean("metrics", "legacy_names_on"))
    db.upgradedb()
    copy_contracts(mode="spark_connect")  # the default connection: spark_connect_default
    DAGS.mkdir(parents=True)
    shutil.copy(REPO / "dags" / "contract_gates.py", DAGS / "contract_gates.py")
    sync_dag_files(DAGS / "contract_gates.py", CONTRACTS)
    HOME.mkdir(parents=True, exist_ok=True)
    gate = Gate()

    runs = {}
    gate.land(REGIONAL, regional_rows(region="G", org=marker), "csv")
    runs["published"] = gate.run(REGIONAL)
    gate.land(REGIONAL, regional_rows(region="B", org=marker, bad=True), "csv")
    runs["rejected"] = gate.run(REGIONAL)
    gate.land(REGIONAL, regional_rows(region="B", org=marker), "csv")
    runs["rerun"] = gate.run(REGIONAL, rerun_of=runs["rejected"].decision["submission_id"])
    gate.land("orders", order_rows(invalid=1, customer=marker), "json")
    runs["split"] = gate.run("orders")
    return {"home": str(HOME),
            "runs": {name: {"decision": run.decision, "states": run.states, "submission": run.xcoms.get("submission")}
                     for name, run in runs.items()}}


if __name__ == "__main__":
    print(RESULT + json.dumps(main(sys.argv[1]), default=str))
