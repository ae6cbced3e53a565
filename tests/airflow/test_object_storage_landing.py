"""Landings in object storage (``s3://``) on a real S3-compatible server on 127.0.0.1 (moto's
standalone server), reached through ``airflow.sdk.ObjectStoragePath`` with the credentials of an
Airflow ``aws`` connection: the batch digest from a listing (no object downloaded), the marker and
settle rules, the landing sensor in poke and deferrable mode, and the Asset watcher's trigger.
No Spark.
"""

from __future__ import annotations

import asyncio
import importlib
import os

import pytest
import yaml
from _airflow_gate import HOME, gate_home
from _landing_contracts import case_rows, write_contract

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError
from contract_gate.decisions import record_decision
from contract_gate.landing_batches import Watch, alanded_batch, landed_batch
from contract_gate.landing_objects import alist_objects, list_objects
from contract_gate.submission import derive_submission_id
from contract_gate_plan.model import Plan

BUCKET = "cg-landing"
ROOT = f"s3://{BUCKET}/drops"
CONNECTION = "cg_landing_s3"
MARKED = "cases_s3_marked"  # lands when _SUCCESS is there
SETTLED = "cases_s3_settled"  # lands when nothing changed for settleSeconds
CONTRACTS = HOME / "object_storage_contracts"
DAG_FILE = "object_storage_landing_dags.py"
DAGS = f'''"""Sensor DAGs of tests/airflow/test_object_storage_landing.py (written by the test, removed after it)."""
from datetime import datetime, timezone

from airflow.sdk import DAG
from contract_gate.sensors import ContractLandingSensor

for deferrable in (False, True):
    dag_id = f"s3_landing_{{'deferred' if deferrable else 'poke'}}"
    with DAG(dag_id, schedule=None, start_date=datetime(2024, 1, 1, tzinfo=timezone.utc)) as dag:
        ContractLandingSensor(task_id="wait", contract={str(CONTRACTS / MARKED / f"{MARKED}.yaml")!r},
                              deferrable=deferrable, poke_interval=1, timeout=300)
    globals()[dag_id] = dag
'''


def s3_contract(contract_id: str, schedule: dict) -> None:
    """The example contract under ``contract_id``, landing in the bucket through the connection."""
    path = write_contract(CONTRACTS / contract_id, contract_id, schedule=schedule)
    document = yaml.safe_load(path.read_text())
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    gate["landing"].update(path=f"{ROOT}/{contract_id}", connection=CONNECTION)
    path.write_text(yaml.safe_dump(document, sort_keys=False))


def plan(contract_id: str) -> Plan:
    return compile_plan(CONTRACTS / contract_id / f"{contract_id}.yaml")


def csv_text(rows: list[dict]) -> bytes:
    header = ",".join(rows[0])
    return ("\n".join([header, *(",".join(str(v) for v in row.values()) for row in rows)]) + "\n").encode()


@pytest.fixture(scope="module")
def store(gate, s3_server):
    """The bucket, the connection and the landing roots for this module's contracts."""
    saved = {name: os.environ.get(name) for name in ("CONTRACT_GATE_LANDING_ROOTS", f"AIRFLOW_CONN_{CONNECTION.upper()}")}
    os.environ["CONTRACT_GATE_LANDING_ROOTS"] = ROOT
    os.environ[f"AIRFLOW_CONN_{CONNECTION.upper()}"] = s3_server.connection()
    s3_server.client().create_bucket(Bucket=BUCKET)
    s3_contract(MARKED, {"onLanding": {"marker": "_SUCCESS"}})
    s3_contract(SETTLED, {"onLanding": {"settleSeconds": 600}})
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


def land(server, contract_id: str, files: dict[str, bytes], *, clear: bool = True) -> None:
    """Put ``files`` (relative key: bytes) below the contract's landing prefix."""
    client, prefix = server.client(), f"drops/{contract_id}/"
    if clear:
        for found in client.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", []):
            client.delete_object(Bucket=BUCKET, Key=found["Key"])
    for name, body in files.items():
        client.put_object(Bucket=BUCKET, Key=prefix + name, Body=body)


def object_reads(server, contract_id: str) -> list[str]:
    """Requests that read an object's content (a GET of a key, not a listing of the bucket)."""
    return [line for line in server.requests() if line.startswith(f"GET /{BUCKET}/drops/{contract_id}/")]


def submission_id(contract_id: str) -> str:
    with gate_home():
        return derive_submission_id(contract_id, plan(contract_id).require_tables().landing)


def test_the_connection_is_in_the_landing_address_only_and_needs_an_object_store_path(store, tmp_path):
    compiled = plan(MARKED)
    assert compiled.document["tables"]["landing"] == {"kind": "path", "path": f"{ROOT}/{MARKED}", "format": "csv",
                                             "options": {"header": "true"}, "connection": CONNECTION}
    assert "connection" not in compiled.document["gate"]["landing"]
    local = write_contract(tmp_path, "cases_local_connection")
    document = yaml.safe_load(local.read_text())
    document["customProperties"][0]["value"]["landing"]["connection"] = CONNECTION
    local.write_text(yaml.safe_dump(document, sort_keys=False))
    with pytest.raises(ContractError, match="'connection' applies to an object-storage path"):
        compile_plan(local)


def test_the_batch_digest_comes_from_the_listing_and_no_object_is_downloaded(store):
    first = csv_text(case_rows("2025-04-01", region="S"))
    land(store, MARKED, {"part-0.csv": first, "day=1/part-1.csv": first, "_SUCCESS": b""})
    expected = submission_id(MARKED)
    assert submission_id(MARKED) == expected
    land(store, MARKED, {"part-0.csv": first, "day=1/part-1.csv": first, "_SUCCESS": b"done"})  # re-copied
    assert submission_id(MARKED) == expected
    land(store, MARKED, {"part-0.csv": first, "day=1/part-1.csv": csv_text(case_rows("2025-04-02", region="S")),
                         "_SUCCESS": b""})
    assert submission_id(MARKED) != expected
    assert any(line.startswith(f"GET /{BUCKET}?list-type=2") for line in store.requests())  # it was listed
    assert object_reads(store, MARKED) == []
    listed = [(o.relative, o.size) for o in list_objects(plan(MARKED).require_tables().landing)]
    assert listed == [("_SUCCESS", 0), ("day=1/part-1.csv", len(first)), ("part-0.csv", len(first))]


def test_the_sensor_waits_for_the_marker_and_for_a_batch_not_gated_yet(store):
    from contract_gate.sensors import ContractLandingSensor

    waiting = ContractLandingSensor(task_id="wait_s3", contract=str(CONTRACTS / MARKED / f"{MARKED}.yaml"))
    land(store, MARKED, {"part-0.csv": csv_text(case_rows("2025-04-03", region="M"))})
    with gate_home():
        assert waiting.poke({}) is False  # data, but no _SUCCESS yet
        land(store, MARKED, {"_SUCCESS": b""}, clear=False)
        done = waiting.poke({})
    expected = submission_id(MARKED)
    assert done.xcom_value.items() >= {"contract_id": MARKED, "submission_id": expected,
                                       "landing": f"{ROOT}/{MARKED}", "kind": "objects", "files": 1,
                                       "delta_version": None}.items()
    with gate_home():  # the plan's tables resolve against the gate's home when it is compiled
        compiled = plan(MARKED)
        record_decision(compiled, {"submission_id": expected, "contract_id": MARKED,
                                   "contract_version": compiled.contract_version, "outcome": "published"})
        assert waiting.poke({}) is False  # gated already
    assert object_reads(store, MARKED) == []


def test_without_a_marker_a_batch_lands_once_nothing_changed_for_the_settle_time(store):
    land(store, SETTLED, {"part-0.csv": csv_text(case_rows("2025-04-04", region="T"))})
    watch = Watch.from_plan(plan(SETTLED))
    objects = list_objects(watch.landing)
    newest = max(o.mtime for o in objects)
    with gate_home():
        assert landed_batch(watch, now=newest + 599) is None
        batch = landed_batch(watch, now=newest + 600)
    assert batch.submission_id == submission_id(SETTLED) and batch.kind == "objects"


def test_the_async_listing_sees_what_the_listing_sees(store):
    land(store, SETTLED, {"a/part-0.csv": b"x,y\n1,2\n", "part-1.csv": b"x,y\n3,4\n"})
    landing = plan(SETTLED).require_tables().landing
    assert asyncio.run(alist_objects(landing)) == list_objects(landing)


def test_the_deferrable_sensor_and_the_poking_one_fire_in_a_dag_run(store, gate):
    land(store, MARKED, {"part-0.csv": csv_text(case_rows("2025-04-05", region="D")), "_SUCCESS": b""})
    expected = submission_id(MARKED)
    for dag_id in ("s3_landing_poke", "s3_landing_deferred"):
        run = gate.run(dag_id)
        assert run.states["wait"] == "success", dag_id
        assert run.xcoms["wait"]["submission_id"] == expected and run.xcoms["wait"]["kind"] == "objects", dag_id


def test_the_watcher_trigger_rebuilt_as_the_triggerer_does_fires_for_a_new_batch(store):
    from contract_gate.dags.gate_schedule import landing_asset

    land(store, MARKED, {"part-0.csv": csv_text(case_rows("2025-04-06", region="W")), "_SUCCESS": b""})
    with gate_home():
        (watcher,) = landing_asset(plan(MARKED)).watchers
    classpath, kwargs = watcher.trigger.serialize()
    module, name = classpath.rsplit(".", 1)
    trigger = getattr(importlib.import_module(module), name)(**kwargs)
    assert trigger.repeat and trigger.watch.landing["connection"] == CONNECTION
    with gate_home():
        event = asyncio.run(asyncio.wait_for(trigger.poll(), 120))
    assert event.items() >= {"status": "landed", "contract_id": MARKED, "submission_id": submission_id(MARKED),
                             "landing": f"{ROOT}/{MARKED}", "kind": "objects", "files": 1,
                             "delta_version": None}.items()


def test_a_delta_landing_in_the_bucket_is_known_by_its_version_and_watched(store, tmp_path):
    """A Delta table landed in S3: its newest version (read from the Delta log with delta-rs and
    the landing connection's credentials) is the batch, for the digest and for the watcher."""
    import pyarrow as pa
    from deltalake import write_deltalake

    from contract_gate.object_storage import storage_options

    contract_id = "cases_s3_delta"
    s3_contract(contract_id, {"onLanding": {"settleSeconds": 0}})
    contract = CONTRACTS / contract_id / f"{contract_id}.yaml"
    document = yaml.safe_load(contract.read_text())
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    gate["landing"] = {"path": f"{ROOT}/{contract_id}", "format": "delta", "connection": CONNECTION}
    contract.write_text(yaml.safe_dump(document, sort_keys=False))
    landing = plan(contract_id).require_tables().landing
    watch = Watch.from_plan(plan(contract_id))
    with gate_home():
        assert landed_batch(watch) is None  # nothing committed yet
    options = storage_options({"landing": landing.as_document()}, landing.as_document())
    rows = pa.table({"region_code": ["N"], "case_count": [1]})
    write_deltalake(landing.location, rows, storage_options=options)
    first = submission_id(contract_id)
    assert submission_id(contract_id) == first  # the same version is the same batch
    with gate_home():
        batch = landed_batch(watch)
    assert (batch.kind, batch.delta_version, batch.submission_id) == ("delta", 0, first)
    write_deltalake(landing.location, rows, mode="append", storage_options=options)
    assert submission_id(contract_id) != first
    with gate_home():
        assert asyncio.run(alanded_batch(watch)).delta_version == 1
