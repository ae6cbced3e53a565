"""The Airflow end-to-end gate once on a real PostgreSQL metadata database, as the compose stack
runs it (the Debian ``postgresql`` package, initialised in a temporary folder by the fixture).

Airflow reads its database URL once, at import, and the rest of the suite's Airflow runs on
SQLite in this process; so the gate runs in a child pytest: ``airflow db migrate`` against
PostgreSQL first (what the stack's ``airflow-init`` does), then the existing end-to-end test of
a batch with valid and invalid rows (tests/airflow/test_airflow_gate_e2e.py, through its helper
and fixture, unchanged: one DAG run whose split publishes the valid rows and quarantines the
others, each table checked row by row). Afterwards this test reads PostgreSQL itself: the DAG
run and the recorded decision are in its tables, and no SQLite database was made. (The split
run stands for the others: one DAG run where the good batch's test needs three, for the same
tasks, XComs and decision record on PostgreSQL.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
E2E_TEST = "tests/airflow/test_airflow_gate_e2e.py::test_split_rows_publish_valid_and_quarantine_invalid"
DAG_ID = "orders"


@pytest.mark.slow
def test_the_gate_publishes_and_records_its_decision_on_postgres(postgres, tmp_path):
    env = {**os.environ, "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": postgres.url,
           "AIRFLOW__CORE__LOAD_EXAMPLES": "False", "AIRFLOW_HOME": str(tmp_path / "airflow-init"),
           "TMPDIR": str(tmp_path),  # the child's Airflow home and lakehouse live here, kept after it
           "CONTRACT_GATE_TEST_WORLD_DIR": str(tmp_path)}
    venv_bin = Path(sys.executable).parent
    migrate = subprocess.run([str(venv_bin / "airflow"), "db", "migrate"], env=env, cwd=REPO,
                             capture_output=True, text=True)
    assert migrate.returncode == 0, migrate.stderr[-3000:]
    with postgres.connect() as db, db.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM alembic_version")
        assert cursor.fetchone() == (1,)  # the schema is Airflow's, migrated in PostgreSQL

    child = subprocess.run([sys.executable, "-m", "pytest", E2E_TEST, "-q", "-p", "no:cacheprovider"],
                           env=env, cwd=REPO, capture_output=True, text=True)
    assert child.returncode == 0, child.stdout[-6000:] + child.stderr[-3000:]
    assert "1 passed" in child.stdout

    with postgres.connect() as db, db.cursor() as cursor:
        cursor.execute("SELECT state FROM dag_run WHERE dag_id = %s ORDER BY id", (DAG_ID,))
        assert [state for (state,) in cursor.fetchall()] == ["success"]
        cursor.execute("SELECT task_id, state FROM task_instance WHERE dag_id = %s", (DAG_ID,))
        states = dict(cursor.fetchall())
        assert states["split"] == states["record_decision"] == "success"
        assert states["publish"] == states["quarantine"] == "skipped"
        cursor.execute("SELECT x.value FROM xcom x JOIN dag_run r ON r.id = x.dag_run_id "
                       "WHERE x.dag_id = %s AND x.task_id = 'record_decision' AND x.key = 'return_value' "
                       "ORDER BY r.id", (DAG_ID,))
        decisions = [value for (value,) in cursor.fetchall()]
    assert [(d["outcome"], d["rows_published"], d["rows_quarantined"]) for d in decisions] == [("split", 4, 2)]
    assert not [path for path in tmp_path.rglob("*.db")], "an SQLite metadata database was made"
