"""A gate whose landing, target, quarantine and decision log are all in a bucket of a real
S3-compatible server on 127.0.0.1 (moto's standalone server), end to end through ``dag.test()``:
objects land, the deferrable landing sensor fires, local Spark reads the ``s3a://`` landing through
Hadoop's S3A connector and publishes an ``s3a://`` Delta target; the same batch landed again is
not gated twice; a bad batch is quarantined in the bucket and the decision log (delta-rs on S3)
records it. The connection's secret reaches no run file, log line or decision.
"""

from __future__ import annotations

import os

import pytest
import yaml
from _airflow_gate import HOME, gate_home
from _landing_contracts import case_rows, write_contract
from _s3_server import SECRET

from contract_gate import config
from contract_gate.contract.compiler import compile_plan
from contract_gate.decisions import store_for
from contract_gate.object_storage import storage_options
from contract_gate_plan.model import Plan

pytestmark = pytest.mark.slow

BUCKET = "cg-lake"
ROOT = f"s3a://{BUCKET}/lakehouse"
DROPS = f"s3a://{BUCKET}/drops"
CONNECTION = "cg_lake_s3"
CONTRACT_ID = "cases_in_s3"
CONTRACTS = HOME / "object_storage_gate_contracts"
CONTRACT = CONTRACTS / f"{CONTRACT_ID}.yaml"
DAG_FILE = "object_storage_gate_dags.py"
DAGS = f'''"""Gate DAGs of tests/airflow/test_object_storage_gate.py (written by the test, removed after it)."""
from datetime import datetime, timezone

from airflow.sdk import DAG
from contract_gate.sensors import ContractLandingSensor
from contract_gate.task_group import contract_gate_task_group

with DAG("s3_gate_on_landing", schedule=None, start_date=datetime(2024, 1, 1, tzinfo=timezone.utc),
         max_active_runs=1) as on_landing:
    ContractLandingSensor(task_id="wait", contract={str(CONTRACT)!r}, deferrable=True, poke_interval=1,
                          timeout=300) >> contract_gate_task_group({str(CONTRACT)!r})

with DAG("s3_gate", schedule=None, start_date=datetime(2024, 1, 1, tzinfo=timezone.utc), max_active_runs=1) as gate:
    contract_gate_task_group({str(CONTRACT)!r})
'''


def s3_contract() -> None:
    """The example contract with every table in the bucket, reached through the connection."""
    write_contract(CONTRACTS, CONTRACT_ID)
    document = yaml.safe_load(CONTRACT.read_text())
    document["servers"] = [{"server": "lake", "type": "local", "environment": "dev", "path": ROOT, "format": "delta"}]
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    gate.pop("decisions", None)
    gate.update(landing={"path": f"{DROPS}/{CONTRACT_ID}", "format": "csv", "options": {"header": "true"},
                         "connection": CONNECTION},
                target={"path": f"{ROOT}/{CONTRACT_ID}", "connection": CONNECTION},
                quarantine={"path": f"{ROOT}/{CONTRACT_ID}_quarantine", "connection": CONNECTION},
                execution={"mode": "local"})
    CONTRACT.write_text(yaml.safe_dump(document, sort_keys=False))


def csv_text(rows: list[dict]) -> bytes:
    lines = [",".join(rows[0]), *(",".join(str(v) for v in row.values()) for row in rows)]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def lake(gate, s3_server):
    names = {config.environment_variable("roots"): ROOT, config.environment_variable("landing_roots"): DROPS,
             f"AIRFLOW_CONN_{CONNECTION.upper()}": s3_server.connection()}
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update(names)
    s3_server.client().create_bucket(Bucket=BUCKET)
    s3_contract()
    (gate.dags / DAG_FILE).write_text(DAGS)
    gate.reset_bag()
    try:
        yield s3_server
    finally:
        (gate.dags / DAG_FILE).unlink()
        gate.reset_bag()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def plan() -> Plan:
    with gate_home():
        return compile_plan(CONTRACT)


def land(server, rows: list[dict]) -> None:
    """The batch as objects below the landing prefix, the marker-less way: data files only."""
    client, prefix = server.client(), f"drops/{CONTRACT_ID}/"
    for found in client.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=found["Key"])
    client.put_object(Bucket=BUCKET, Key=prefix + "part-0.csv", Body=csv_text(rows))


def delta(role: str):
    """The plan's ``role`` table read with delta-rs through the connection; None before it exists."""
    from deltalake import DeltaTable

    tables = plan().document["tables"]
    address = tables[role]
    with gate_home():
        options = storage_options(tables, address)
    uri = address["path"]
    return DeltaTable(uri, storage_options=options) if DeltaTable.is_deltatable(uri, options) else None


def recorded(run) -> dict:
    return run.xcoms["contract_gate.record_decision"]


def decisions() -> list:
    compiled = plan()
    with gate_home():
        return store_for(compiled).records(contract_id=CONTRACT_ID)


def test_the_gate_publishes_to_s3_rejects_a_bad_batch_there_and_never_gates_a_batch_twice(lake, gate, capfd):
    assert plan().document["tables"]["target"]["path"] == f"{ROOT}/{CONTRACT_ID}"  # the URI as the contract gives it

    land(lake, case_rows("2025-05-01", region="S"))
    first = gate.run("s3_gate_on_landing")
    assert first.states["wait"] == "success"
    assert recorded(first)["outcome"] == "published", first.states
    target = delta("target")
    published = target.version()
    assert sorted(r["region_code"] for r in target.to_pyarrow_table().to_pylist()) == ["S0", "S1", "S2"]
    assert any(line.startswith(f"PUT /{BUCKET}/lakehouse/{CONTRACT_ID}/_delta_log/") for line in lake.requests())

    land(lake, case_rows("2025-05-01", region="S"))  # the same batch, uploaded again
    again = gate.run("s3_gate")
    assert again.xcoms["contract_gate.submission"]["submission_id"] == recorded(first)["submission_id"]
    assert again.xcoms["contract_gate.submission"]["prior_decision"]["outcome"] == "published"
    assert again.states["contract_gate.stage_validate"] == "skipped"
    assert delta("target").version() == published
    assert len(decisions()) == 1

    land(lake, case_rows("2025-05-02", region="B", bad=True))
    bad = gate.run("s3_gate_on_landing")
    assert bad.states["wait"] == "success"
    assert recorded(bad)["outcome"] == "quarantined", bad.states
    assert delta("target").version() == published and len(delta("target").to_pyarrow_table()) == 3  # untouched
    quarantined = delta("quarantine").to_pyarrow_table().to_pylist()
    assert {r["region_code"] for r in quarantined} == {"B0", "B1", "B2"}
    outcomes = {d.submission_id: d.outcome for d in decisions()}
    assert outcomes == {recorded(first)["submission_id"]: "published", recorded(bad)["submission_id"]: "quarantined"}
    assert any(line.startswith(f"PUT /{BUCKET}/lakehouse/contract_gate_decisions/") for line in lake.requests())

    # the connection's secret went to the jobs' Spark settings only
    captured = capfd.readouterr()
    assert SECRET not in captured.out + captured.err
    run_files = [p for p in (HOME / "lakehouse" / "_runs").rglob("*") if p.is_file()]
    assert run_files and not [p for p in run_files if SECRET.encode() in p.read_bytes()]
    for run in (first, again, bad):
        assert SECRET not in repr(run.xcoms)
    assert SECRET not in repr(decisions())
