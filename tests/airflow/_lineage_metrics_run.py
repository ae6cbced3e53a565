"""Run three gates of the regional contract in a process of its own, with Airflow's StatsD metrics
and the OpenLineage provider configured by the caller's environment: a published batch, a
rejected one, and its fixed re-run. Their Spark work runs on the Spark Connect server of
``AIRFLOW_CONN_SPARK_CONNECT_DEFAULT``. Prints one line: ``RESULT`` and the decisions and submissions as JSON.

A process of its own because Airflow reads its metrics and OpenLineage settings when its
listeners and stats backend are first set up, once per process; the test suite's shared
Airflow world has set them up already. Used by tests/airflow/test_lineage_and_metrics.py.
"""

from __future__ import annotations

import json
import os
import sys

from _airflow_gate import AIRFLOW_ENV, CONTRACTS, DAGS, HOME, Gate, copy_contracts, regional_rows

os.environ.update(AIRFLOW_ENV)
REGIONAL = "regional_daily_cases"
RESULT = "RESULT "  # the prefix of the output line the test reads (logs may print other lines)


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
    copy_contracts((REGIONAL,), mode="spark_connect")
    DAGS.mkdir(parents=True)
    sync_dag_files(DAGS / "contract_gates.py", CONTRACTS)
    HOME.mkdir(parents=True, exist_ok=True)
    gate = Gate()

    runs = {}
    gate.land(REGIONAL, regional_rows(region="P", org=marker), "csv")
    runs["published"] = gate.run(REGIONAL)
    gate.land(REGIONAL, regional_rows(region="Q", org=marker, bad=True), "csv")
    runs["rejected"] = gate.run(REGIONAL)
    gate.land(REGIONAL, regional_rows(region="Q", org=marker), "csv")
    runs["rerun"] = gate.run(REGIONAL, rerun_of=runs["rejected"].decision["submission_id"])
    return {"home": str(HOME),
            "runs": {name: {"decision": run.decision, "submission": run.xcoms.get("submission"),
                            "states": run.states} for name, run in runs.items()}}


if __name__ == "__main__":
    print(RESULT + json.dumps(main(sys.argv[1]), default=str))
