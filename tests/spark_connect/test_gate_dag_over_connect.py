"""A generated gate DAG through ``dag.test()`` in ``spark_connect`` mode against a real Spark
Connect server with Delta: a good batch published, a bad batch quarantined, a ``split_rows``
contract split, each with its exact rows and one decision; and the Airflow process (a child of
this test, ``_connect_dag_run.py``) starts no Java process while it runs.

The server (``tests/connect_server.py``) is detached from the test's process, so any Java
process found below the test's process is one the gate run started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from deltalake import DeltaTable

from java_processes import java_below
from waiting import wait_until

RUN = Path(__file__).with_name("_connect_dag_run.py")


@pytest.mark.slow  # three DAG runs: about 1.5 min on two shared cores
def test_the_gate_dag_in_spark_connect_mode_starts_no_jvm(spark_connect_server, tmp_path):
    env = {**os.environ, "AIRFLOW_CONN_SPARK_CONNECT_DEFAULT": spark_connect_server.connection(),
           "CONTRACT_GATE_TEST_WORLD_DIR": str(tmp_path)}
    for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "AIRFLOW_HOME", "AIRFLOW__CORE__DAGS_FOLDER"):
        env.pop(name, None)
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        child = subprocess.Popen([sys.executable, str(RUN)], stdout=stdout, stderr=stderr, env=env, cwd=tmp_path)
        # below the process that runs the DAG: the suite's own shared local Spark (another
        # module's fixture) is a JVM below pytest, and is not the gate's
        runner = psutil.Process(child.pid)
        java: set[str] = set()

        def ended() -> bool:  # looks below the DAG's process on every poll while the run goes on
            java.update(" ".join(command[:3]) for command in java_below(runner).values())
            return child.poll() is not None

        wait_until(ended, timeout=1500, interval=0.2, message="the gate DAG runs")
    assert child.returncode == 0, err.read_text()[-5000:]
    assert java == set(), f"Java started below the process running the DAG: {java}"
    found = json.loads(out.read_text().strip().splitlines()[-1])
    home, runs = Path(found["home"]), found["runs"]

    def rows(table: str) -> list[dict]:
        return DeltaTable(str(home / "lakehouse" / table)).to_pyarrow_table().to_pylist()

    for name, run in runs.items():
        failed = {task: state for task, state in run["states"].items() if state not in ("success", "skipped")}
        assert failed == {}, (name, failed)
    good, bad, split = (runs[name]["decision"] for name in ("good", "bad", "split"))
    assert good["outcome"] == "published" and good["submission_id"] == runs["good"]["submission"]
    assert bad["outcome"] == "quarantined" and bad["rule_failures"] == {"case_count.minimum": 1, "status.enum": 1}
    assert split["outcome"] == "split"

    target = rows("regional_daily_cases")
    assert sorted(r["region_code"] for r in target) == ["G0", "G1", "G2"]  # nothing of the bad batch
    quarantined = [r for r in rows("regional_daily_cases_quarantine") if r["_submission_id"] == bad["submission_id"]]
    assert sorted(r["region_code"] for r in quarantined) == ["B0", "B1", "B2"]
    assert sorted(r["order_id"] for r in rows("orders")) == ["O0", "O1", "O2", "O3"]
    assert [r["order_id"] for r in rows("orders_quarantine")] == ["X0"]
    history = DeltaTable(str(home / "lakehouse" / "regional_daily_cases")).history()
    assert [h.get("userMetadata") for h in history if h.get("userMetadata")] == [good["submission_id"]]

    # one decision per submission in the decision log
    decisions = rows("contract_gate_decisions")
    for decision in (good, bad, split):
        mine = [d for d in decisions if d["submission_id"] == decision["submission_id"]]
        assert len(mine) == 1 and mine[0]["outcome"] == decision["outcome"], mine
