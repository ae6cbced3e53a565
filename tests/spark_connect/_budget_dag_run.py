"""Run as a child process: a gate whose contract query would run for many minutes
(``tests/budget_contracts.py``), through ``dag.test()`` in ``spark_connect`` mode against the
server in ``AIRFLOW_CONN_SPARK_CONNECT_DEFAULT``, twice:

* ``killed``: ``limits.querySeconds: 600``, and the validate task killed by Airflow's
  ``execution_timeout`` (``TIMEOUT_SECONDS``) while the query runs;
* ``stopped``: ``limits.querySeconds: 5``;
* ``terminated``: ``limits.querySeconds: 600``, and this process sent SIGTERM (what Airflow's
  supervisor sends a task it stops) once the server runs the contract query: the task's
  ``on_kill`` interrupts the query, and Airflow lets the task run on.

Its own Airflow world (``tests/airflow/_airflow_gate.py``), as ``_connect_dag_run.py``'s. Prints
one line: ``RESULT`` and, per run, the task states, the stop pushed, the submission id, the
decisions recorded and the target's Delta version before and after, as JSON.

    python _budget_dag_run.py
"""

from __future__ import annotations

import faulthandler
import json
import os
import shutil
import signal
import sys
import threading
import traceback
import urllib.request
from datetime import timedelta
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS), str(TESTS / "airflow")]

from _airflow_gate import AIRFLOW_ENV, CONTRACTS, DAGS, HOME, REPO, Gate, regional_rows  # noqa: E402
from budget_contracts import many_rows, slow_contract  # noqa: E402
from waiting import wait_until  # noqa: E402

os.environ.update(AIRFLOW_ENV)
RESULT = "RESULT "
TIMEOUT_SECONDS = 40  # the validate task's execution_timeout: past staging, inside the query
SERVER_UI_ENV = "CONTRACT_GATE_TEST_SERVER_UI"  # the server's Spark UI REST API, for the SIGTERM's moment


def running_query(ui: str) -> bool:
    """The server runs a contract query: a job under the validation's budget and the query's own.
    A UI too busy to answer (the server stages 40,000 rows on two cores) has not said so yet."""
    try:
        with urllib.request.urlopen(f"{ui}/applications", timeout=30) as response:
            (app,) = json.load(response)
        with urllib.request.urlopen(f"{ui}/applications/{app['id']}/jobs?status=running", timeout=30) as response:
            return any(sum("contract-gate-budget-" in tag for tag in job.get("jobTags", [])) >= 2
                       for job in json.load(response))
    except OSError:
        return False


def terminate_at_the_query(ui: str) -> None:
    """SIGTERM this process once the contract query runs on the server, from a thread of its own."""
    def terminate() -> None:
        try:
            wait_until(lambda: running_query(ui), timeout=900, interval=0.5, message="the contract query running")
            os.kill(os.getpid(), signal.SIGTERM)
            wait_until(lambda: not running_query(ui), timeout=300, interval=0.5, message="the query stopped")
        except BaseException:  # the run would hang: end it, saying where each thread was
            traceback.print_exc()
            faulthandler.dump_traceback(all_threads=True)
            os._exit(3)

    threading.Thread(target=terminate, name="sigterm-at-the-query", daemon=True).start()


def main() -> dict:
    from airflow.utils import db

    from contract_gate.dag_factory import sync_dag_files

    db.upgradedb()
    CONTRACTS.mkdir(parents=True)
    (CONTRACTS / "slow_killed.yaml").write_text(slow_contract("slow_killed", "spark_connect", query_seconds=600))
    (CONTRACTS / "slow_stopped.yaml").write_text(slow_contract("slow_stopped", "spark_connect", query_seconds=5))
    (CONTRACTS / "slow_terminated.yaml").write_text(slow_contract("slow_terminated", "spark_connect",
                                                                  query_seconds=600))
    DAGS.mkdir(parents=True)
    shutil.copy(REPO / "dags" / "contract_gates.py", DAGS / "contract_gates.py")
    sync_dag_files(DAGS / "contract_gates.py", CONTRACTS)
    HOME.mkdir(parents=True, exist_ok=True)
    gate = Gate()
    runs = {}
    for name, key in (("slow_killed", "killed"), ("slow_stopped", "stopped"), ("slow_terminated", "terminated")):
        target = f"lakehouse/{name}"
        gate.land(name, regional_rows(region="G"), "csv")
        published = gate.run(name)  # the slow query is quick on three rows
        before = gate.version(target)
        if key == "killed":
            gate.bag().dags[name].get_task("stage_validate").execution_timeout = timedelta(seconds=TIMEOUT_SECONDS)
        gate.land(name, many_rows(), "csv")
        if key == "terminated":
            terminate_at_the_query(os.environ[SERVER_UI_ENV])
        run = gate.run(name)
        submission = run.xcoms["submission"]["submission_id"]
        runs[key] = {
            "first": published.decision["outcome"],
            "states": run.states,
            "stopped": run.xcoms.get("stage_validate:stopped"),
            "submission_id": submission,
            "decisions": [{"outcome": row["outcome"], "reason": row["reason"]} for row in gate.rows(
                "lakehouse/contract_gate_decisions") if row["submission_id"] == submission],
            "version_before": before,
            "version_after": gate.version(target),
            "rows_after": len(gate.rows(target)),
            "quarantined": len(gate.rows(f"lakehouse/{name}_quarantine")),
        }
    return {"runs": runs}


if __name__ == "__main__":
    print(RESULT + json.dumps(main(), default=str))
