"""The generated freshness DAG: built from a contract, run for real through ``dag.test()`` on
SQLite in a fresh AIRFLOW_HOME, and free of pyspark at parse and run time."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap

import pytest
from _freshness_helpers import REPO, file_alerts, publish_cases, read_lines, write_contract

from contract_gate.dags.freshness_dag import build_freshness_dag


def airflow_env(tmp_path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AIRFLOW", "CONTRACT_GATE"))}
    env.update(
        AIRFLOW_HOME=str(tmp_path / "airflow"),
        AIRFLOW__CORE__DAGS_FOLDER=str(tmp_path / "dags"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__CORE__UNIT_TEST_MODE="False",
        CONTRACT_GATE_HOME=str(tmp_path),
    )
    return env


def test_dag_shape(tmp_path):
    dag = build_freshness_dag(write_contract(tmp_path, alerts={"freshnessSchedule": "*/30 * * * *"}))
    assert dag.dag_id == "regional_daily_cases__freshness"
    assert [task.task_id for task in dag.tasks] == ["check_freshness"]
    assert dag.max_active_runs == 1 and not dag.catchup
    assert {"contract-gate", "freshness", "public_health"} <= set(dag.tags)
    assert "2 d" in dag.doc_md and "end of its UTC day" in dag.doc_md
    assert build_freshness_dag(REPO / "contracts" / "meter_readings.yaml") is None  # no SLA, no DAG


@pytest.mark.slow
def test_dag_runs_through_dag_test_and_alerts(spark, tmp_path):
    alerts_file = tmp_path / "lakehouse" / "_contract_gate_alerts" / "alerts.jsonl"  # the default alerts folder
    contract = write_contract(tmp_path, alerts=file_alerts(alerts_file))
    publish_cases(spark, tmp_path / "lakehouse" / "regional_daily_cases", "sub-1", [dt.date.today() - dt.timedelta(days=10)])
    dags = tmp_path / "dags"
    dags.mkdir()
    dag_file = dags / "freshness.py"
    dag_file.write_text(textwrap.dedent(f"""
        # Airflow DAG (safe-mode discovery needs both words in the file)
        from contract_gate.dags.freshness_dag import build_freshness_dag

        dag = build_freshness_dag({str(contract)!r})
    """))
    env = airflow_env(tmp_path)
    subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, check=True, capture_output=True)
    script = textwrap.dedent(f"""
        import runpy, sys
        dag = runpy.run_path({str(dag_file)!r})["dag"]
        run = dag.test()
        print("RUN", run.state, "pyspark" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert "RUN success False" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]

    status = json.loads((tmp_path / "lakehouse" / "_contract_gate_status" / "regional_daily_cases.json").read_text())
    assert (status["state"], status["latest_accepted_submission"], status["alerted"]) == ("stale", "sub-1", True)
    assert [line["event"] for line in read_lines(alerts_file)] == ["freshness_stale"]


def test_the_check_imports_no_pyspark(spark, tmp_path):
    contract = write_contract(tmp_path)
    publish_cases(spark, tmp_path / "lakehouse" / "regional_daily_cases", "sub-1", [dt.date(2024, 3, 1)])
    script = textwrap.dedent(f"""
        import sys
        from contract_gate.contract.compiler import compile_plan
        from contract_gate.freshness.check import check_freshness
        from contract_gate.dags.freshness_dag import build_freshness_dag

        build_freshness_dag({str(contract)!r})
        record = check_freshness(compile_plan({str(contract)!r}))
        print(record["state"], record["latest_accepted_date"], sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j", "delta")))
    """)
    done = subprocess.run([sys.executable, "-c", script], env=airflow_env(tmp_path), capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip().splitlines()[-1] == "stale 2024-03-01 []"
