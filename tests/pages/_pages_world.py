"""A private gate world for the pages' browser test, run as a process of its own:

    python tests/pages/_pages_world.py <result.json>

It builds the Airflow test world of ``tests/airflow/_airflow_gate.py`` (SQLite, the example
contracts and their DAG files), with the gates' Spark work on the Spark Connect server of
``AIRFLOW_CONN_SPARK_CONNECT_DEFAULT`` (a warm server: three local gate jobs would start six
JVMs) and Airflow's multi-team mode on: the DAG folder's
bundle belongs to the team ``gates``, so the simple auth manager lets a user of that team read
the gate DAGs and a user of the team ``others`` read none. Then it gates three batches through
the generated DAGs (``dag.test()``): regional_daily_cases published, orders split and
meter_readings quarantined, each classified column holding ``MARKER``, and writes what the test
needs to ``result.json`` (the world's folders, its Airflow settings, each run's decision).

A process of its own because Airflow reads its home and database once per process: the other
Airflow suites of a pytest session keep theirs, and the counts the test asserts are this world's.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "airflow"), str(TESTS.parent / "scripts")]

import _airflow_gate as world  # noqa: E402  (its folders are made at import)

MARKER = "ZQX-CLASSIFIED-7731"  # the value every classified column holds in this world
TEAM, OTHER_TEAM = "gates", "others"
USERS = {"producer": ("viewer", TEAM), "outsider": ("viewer", OTHER_TEAM)}


def airflow_settings() -> dict[str, str]:
    """The Airflow settings this world and its api-server share."""
    bundles = [{"name": "dags-folder", "classpath": "airflow.dag_processing.bundles.local.LocalDagBundle",
                "kwargs": {"path": str(world.DAGS)}, "team_name": TEAM}]
    return {
        **world.AIRFLOW_ENV,
        "AIRFLOW__CORE__MULTI_TEAM": "True",
        "AIRFLOW__DAG_PROCESSOR__DAG_BUNDLE_CONFIG_LIST": json.dumps(bundles),
        "AIRFLOW__CORE__AUTH_MANAGER": "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": ",".join(f"{u}:{role}:{team}" for u, (role, team) in USERS.items()),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__API_AUTH__JWT_SECRET": "contract-gate-pages-test-secret-0123456789",
        "AIRFLOW__API__SECRET_KEY": "contract-gate-pages-test-key",
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(world.ROOT / "plugins"),
    }


def regional_rows() -> list[dict]:
    yesterday = datetime.now(timezone.utc).date() - timedelta(days=1)
    return [{"region_code": f"P{i}", "report_date": str(yesterday), "reporting_org": MARKER,
             "case_count": 10 + i, "status": "final"} for i in range(3)]


def order_rows() -> list[dict]:
    now = datetime.now(timezone.utc).replace(microsecond=0)
    rows = [{"order_id": f"P{i}", "customer_id": MARKER, "order_total": 20.0 + i, "currency": "EUR",
             "order_timestamp": (now - timedelta(minutes=i)).isoformat()} for i in range(4)]
    rows += [{"order_id": f"PX{i}", "customer_id": MARKER, "order_total": -1.0 - i, "currency": "XXX",
              "order_timestamp": now.isoformat()} for i in range(2)]
    return rows


def meter_rows() -> list[dict]:
    start = (datetime.now(timezone.utc) - timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
    rows = [{"meter_id": f"M{700000 + i:06d}", "channel": 1 + i % 4, "reading_ts": start,
             "kwh": Decimal(f"{100 + i}.125"), "voltage": 230.0, "quality_flag": "ok"} for i in range(6)]
    rows[0]["channel"] = 9          # channel.maximum
    rows[1]["meter_id"] = "X1"      # meter_id.pattern
    rows[2]["channel"] = 7          # channel.maximum again
    return rows


def build() -> dict:
    os.environ.update(airflow_settings())
    (world.ROOT / "plugins").mkdir()
    from airflow.models.team import Team
    from airflow.utils import db
    from airflow.utils.session import create_session

    db.upgradedb()
    with create_session() as session:  # the teams exist before the bundle that names one is synced
        session.add_all([Team(name=TEAM), Team(name=OTHER_TEAM)])
    world.copy_contracts(mode="spark_connect")
    world.DAGS.mkdir(parents=True)
    shutil.copy(world.REPO / "dags" / "contract_gates.py", world.DAGS / "contract_gates.py")
    from contract_gate.dag_factory import sync_dag_files

    sync_dag_files(world.DAGS / "contract_gates.py", world.CONTRACTS)
    world.HOME.mkdir(parents=True, exist_ok=True)
    from demo import write_batch  # scripts/demo.py: the parquet landing of meter_readings

    gate = world.Gate()
    runs = []
    for contract_id, rows, fmt in (("regional_daily_cases", regional_rows(), "csv"),
                                   ("orders", order_rows(), "json"),
                                   ("meter_readings", meter_rows(), "parquet")):
        if fmt == "parquet":
            write_batch(gate.landing(contract_id), fmt, rows)
        else:
            gate.land(contract_id, rows, fmt)
        run = gate.run(contract_id)
        runs.append({"contract_id": contract_id, "dag_id": contract_id, "run_id": run.dagrun.run_id,
                     "states": run.states, "decision": run.decision})
    return {"root": str(world.ROOT), "home": str(world.HOME), "contracts": str(world.CONTRACTS),
            "airflow_env": airflow_settings(), "marker": MARKER, "runs": runs}


if __name__ == "__main__":
    result = build()
    Path(sys.argv[1]).write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
