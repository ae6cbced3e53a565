"""The gate test world: private folders, a gate home scoped to runs, tiny batches, Delta readers.

Each gate run starts Spark, so batches are a few rows.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORLD_DIR_ENV = "CONTRACT_GATE_TEST_WORLD_DIR"
"""Where a world made in a process of its own goes (the calling test's temporary folder, which
pytest cleans); the suite's own world is removed at the end of the session (conftest.py)."""
ROOT = Path(tempfile.mkdtemp(prefix="contract-gate-airflow-", dir=os.environ.get(WORLD_DIR_ENV)))
HOME = ROOT / "home"
DAGS = ROOT / "dags"
CONTRACTS = ROOT / "contracts"
# a contract whose column type has no Spark type: one import error of its own, naming the file
BROKEN = """\
apiVersion: v3.0.2
kind: DataContract
id: broken
version: 1.0.0
status: active
schema:
  - name: broken
    properties:
      - name: amount
        logicalType: number
        physicalType: decimal(50,2)
customProperties:
  - property: contractGate
    value:
      landing: {path: landing/broken, format: csv}
"""

AIRFLOW_ENV = {
    "AIRFLOW_HOME": str(ROOT / "airflow"),
    "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    # dag.test() honours retries: a test that breaks a task on purpose sees its failure at once
    "AIRFLOW__CONTRACT_GATE__TASK_RETRIES": "0",
}


def copy_contracts(mode: str) -> None:
    """The example contracts into the world's contract folder, each gating in execution ``mode``
    (``spark_connect`` uses the default connection, ``spark_connect_default``)."""
    import yaml

    CONTRACTS.mkdir(parents=True, exist_ok=True)
    for source in sorted((REPO / "contracts").glob("*.yaml")):
        document = yaml.safe_load(source.read_text(encoding="utf-8"))
        gate = next(c for c in document["customProperties"] if c["property"] == "contractGate")["value"]
        gate["execution"] = {"mode": mode}
        (CONTRACTS / source.name).write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


@contextlib.contextmanager
def gate_home() -> Iterator[None]:
    """``CONTRACT_GATE_HOME`` = the session's home, for the duration of a parse or a run."""
    saved = {name: os.environ.get(name) for name in ("CONTRACT_GATE_HOME", "CONTRACT_GATE_ENV",
                                                      "CONTRACT_GATE_WORK_DIR")}
    os.environ["CONTRACT_GATE_HOME"] = str(HOME)
    os.environ.pop("CONTRACT_GATE_ENV", None)
    os.environ.pop("CONTRACT_GATE_WORK_DIR", None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass
class GateRun:
    """One ``dag.test()`` run: its DAG run, the decision it recorded, its XComs by task id."""

    dagrun: object
    decision: dict | None
    xcoms: dict[str, object]
    states: dict[str, str]


class Gate:
    """The session's gate world: land batches, run the generated DAGs, read Delta tables."""

    home = HOME
    contracts = CONTRACTS
    dags = DAGS

    def __init__(self) -> None:
        self._bag = None
        self._day = 0

    def reset_bag(self) -> None:
        self._bag = None

    def bag(self):
        if self._bag is None:
            from contract_gate.airflow_compat import dag_bag

            with gate_home():
                self._bag = dag_bag(DAGS)
        return self._bag

    def landing(self, name: str) -> Path:
        return HOME / "lakehouse" / "landing" / name

    def land(self, name: str, rows: list[dict], fmt: str) -> Path:
        """Replace the landing folder's content with one file of ``rows``."""
        folder = self.landing(name)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        path = folder / f"part-0.{fmt}"
        if fmt == "csv":
            with path.open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        else:
            path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        return folder

    def run(self, dag_id: str, *, logical_date: datetime | None = None, mark_success: str | None = None,
            **conf) -> GateRun:
        """``dag.test()`` the generated DAG; each call is a new run unless ``logical_date`` repeats
        one (then Airflow clears that run's tasks and runs them again, as a user clearing them would).
        ``mark_success``: a task id pattern marked successful without running."""
        from airflow.models.xcom import XComModel
        from airflow.utils.session import create_session

        if logical_date is None:
            self._day += 1
            logical_date = datetime(2025, 1, 1, tzinfo=timezone.utc) + timedelta(days=self._day)
        dag = self.bag().dags[dag_id]
        with gate_home():
            dagrun = dag.test(logical_date=logical_date, mark_success_pattern=mark_success,
                              run_conf={k: v for k, v in conf.items() if v is not None})
        with create_session() as session:
            rows = session.scalars(XComModel.get_many(run_id=dagrun.run_id, dag_ids=dag_id)).all()
            xcoms = {f"{x.task_id}:{x.key}" if x.key != "return_value" else x.task_id:
                     XComModel.deserialize_value(x) for x in rows}
            states = {ti.task_id: ti.state for ti in dagrun.get_task_instances(session=session)}
        return GateRun(dagrun, xcoms.get("record_decision"), xcoms, states)

    @staticmethod
    def table(path: str):
        from deltalake import DeltaTable

        return DeltaTable(str(HOME / path))

    def version(self, path: str) -> int | None:
        return self.table(path).version() if (HOME / path / "_delta_log").is_dir() else None

    def rows(self, path: str) -> list[dict]:
        if not (HOME / path / "_delta_log").is_dir():
            return []
        return self.table(path).to_pyarrow_table().to_pylist()



def regional_rows(*, region: str = "R", bad: bool = False, org: str = "Org-A", days: int = 3) -> list[dict]:
    """Daily case rows for regions ``<region>0..``; ``bad`` breaks a minimum and an enum."""
    rows = [{"region_code": f"{region}{i}", "report_date": f"2025-03-0{i + 1}", "reporting_org": org,
             "case_count": 10 + i, "status": "final"} for i in range(days)]
    if bad:
        rows[0].update(case_count=-5, status="unknown")
    return rows


def order_rows(*, invalid: int = 0, start: int = 0, customer: str = "C-100") -> list[dict]:
    rows = [{"order_id": f"O{start + i}", "customer_id": customer, "order_total": 20.0 + i, "currency": "EUR",
             "order_timestamp": "2025-03-01T10:00:00Z"} for i in range(4)]
    for i in range(invalid):
        rows.append({"order_id": f"X{start + i}", "customer_id": customer, "order_total": -1.0 - i,
                     "currency": "XXX", "order_timestamp": "2025-03-01T11:00:00Z"})
    return rows
