"""``ContractLandingSensor`` and ``LandingTrigger`` on real files and real Delta landings, in poke
and deferrable mode (``dag.test()`` runs the deferred trigger in line), and the trigger run to
its event with asyncio. No Spark: the sensor reads files and the Delta log only.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import time
from datetime import date

import pyarrow as pa
import pytest
from _airflow_gate import HOME, gate_home
from _landing_contracts import LAKEHOUSE, case_rows, land_csv, write_contract
from deltalake import write_deltalake

from contract_gate.contract.settings import DEFAULT_SETTLE_SECONDS
from contract_gate.decisions import final_decision, record_decision
from contract_gate.landing_batches import Watch, landed_batch
from contract_gate.submission import derive_submission_id
from contract_gate_plan.landing_files import LandingRefused
from contract_gate_plan.model import Plan

FILES = "cases_landing_files"
DELTA = "cases_landing_delta"
SETTLE = "cases_landing_settle"
CRON = "cases_landing_cron"
CONTRACTS = HOME / "landing_sensor_contracts"
DAG_FILE = "landing_sensor_dags.py"
DAGS = f'''"""Sensor DAGs of tests/airflow/test_landing_sensor.py (written by the test, removed after it)."""
from datetime import datetime, timezone

from airflow.sdk import DAG
from contract_gate.sensors import ContractLandingSensor

for contract, name in (({str(CONTRACTS / f"{FILES}.yaml")!r}, "files"), ({str(CONTRACTS / f"{DELTA}.yaml")!r}, "delta")):
    for deferrable in (False, True):
        dag_id = f"landing_{{name}}_{{'deferred' if deferrable else 'poke'}}"
        with DAG(dag_id, schedule=None, start_date=datetime(2024, 1, 1, tzinfo=timezone.utc)) as dag:
            ContractLandingSensor(task_id="wait", contract=contract, deferrable=deferrable, poke_interval=1,
                                  timeout=300)
        globals()[dag_id] = dag
'''


@pytest.fixture(scope="module")
def sensors(gate):
    """The contracts (a file landing with a ``_SUCCESS`` marker, a Delta landing, a file landing
    that settles by time) and a DAG file of sensor DAGs in the session's DAG folder."""
    write_contract(CONTRACTS, FILES, schedule={"onLanding": {"marker": "_SUCCESS"}})
    write_contract(CONTRACTS, DELTA, landing_format="delta")
    write_contract(CONTRACTS, SETTLE, schedule={"onLanding": {"settleSeconds": 600}})
    write_contract(CONTRACTS, CRON, schedule="@hourly")
    (gate.dags / DAG_FILE).write_text(DAGS)
    gate.reset_bag()
    try:
        yield gate
    finally:
        (gate.dags / DAG_FILE).unlink()
        gate.reset_bag()


def sensor(contract_id: str, **kwargs):
    from contract_gate.sensors import ContractLandingSensor

    return ContractLandingSensor(task_id=f"wait_{contract_id}", contract=str(CONTRACTS / f"{contract_id}.yaml"),
                                 **kwargs)


def plan(contract_id: str) -> Plan:
    from contract_gate.contract.compiler import compile_plan

    return compile_plan(CONTRACTS / f"{contract_id}.yaml")


def submission_of(contract_id: str) -> str:
    """The id the gate itself derives for what is at the landing now."""
    with gate_home():
        return derive_submission_id(contract_id, plan(contract_id).require_tables().landing)


def record(contract_id: str, submission_id: str, outcome: str) -> None:
    """A final decision written by the gate's own decision store."""
    with gate_home():  # the plan's tables resolve against the gate's home when it is compiled
        compiled = plan(contract_id)
        record_decision(compiled, {"submission_id": submission_id, "contract_id": contract_id,
                                   "contract_version": compiled.contract_version, "outcome": outcome})
        assert final_decision(compiled, submission_id)["outcome"] == outcome


def rebuilt(classpath: str, kwargs: dict):
    """A trigger rebuilt from its serialised form, as the triggerer does."""
    module, name = classpath.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)(**kwargs)


def first_event(trigger, limit: float = 120):
    """Run ``trigger`` until its first event (``limit`` only keeps a broken trigger from hanging the suite)."""
    async def first():
        async for event in trigger.run():
            return event

    return asyncio.run(asyncio.wait_for(first(), limit))


def test_a_file_batch_releases_the_sensor_once_its_marker_is_there_in_poke_and_deferrable_mode(sensors):
    waiting = sensor(FILES)
    with gate_home():
        assert waiting.poke({}) is False  # nothing has landed
        folder = land_csv(FILES, case_rows("2025-04-01", region="F"))
        assert waiting.poke({}) is False  # data files, but the producer has not written _SUCCESS yet
        (folder / "_SUCCESS").write_text("")
        done = waiting.poke({})
    expected = submission_of(FILES)
    assert done.xcom_value == {"contract_id": FILES, "object": "regional_daily_cases", "submission_id": expected,
                               "landing": str(folder), "kind": "files", "files": 1, "delta_version": None}

    for dag_id in ("landing_files_poke", "landing_files_deferred"):
        run = sensors.run(dag_id)
        assert run.states["wait"] == "success", dag_id
        assert run.xcoms["wait"]["submission_id"] == expected, dag_id

    record(FILES, expected, "published")  # gated: the same batch no longer counts as new
    with gate_home():
        assert waiting.poke({}) is False
        land_csv(FILES, case_rows("2025-04-01", region="F"), marker="_SUCCESS")  # re-copied: new mtimes, same bytes
        assert waiting.poke({}) is False
        land_csv(FILES, case_rows("2025-04-02", region="F"), marker="_SUCCESS")  # a new batch
        assert waiting.poke({}).xcom_value["submission_id"] == submission_of(FILES) != expected


def test_a_delta_landing_releases_the_sensor_for_a_version_not_gated_yet_in_poke_and_deferrable_mode(sensors):
    table = LAKEHOUSE / "landing" / DELTA
    batch = pa.table({"region_code": ["D0"], "report_date": [date(2025, 4, 1)], "reporting_org": ["Org-A"],
                      "case_count": pa.array([3], pa.int64()), "status": ["final"]})
    waiting = sensor(DELTA)
    with gate_home():
        assert waiting.poke({}) is False  # no table yet
        write_deltalake(str(table), batch)
        done = waiting.poke({})
    assert done.xcom_value["kind"] == "delta" and done.xcom_value["delta_version"] == 0
    assert done.xcom_value["submission_id"] == submission_of(DELTA)
    assert sensors.run("landing_delta_poke").xcoms["wait"]["delta_version"] == 0

    record(DELTA, done.xcom_value["submission_id"], "quarantined")  # version 0 was gated
    with gate_home():
        assert waiting.poke({}) is False
    write_deltalake(str(table), batch, mode="append")
    run = sensors.run("landing_delta_deferred")
    assert run.states["wait"] == "success"
    assert run.xcoms["wait"]["delta_version"] == 1
    assert run.xcoms["wait"]["submission_id"] == submission_of(DELTA) != done.xcom_value["submission_id"]


def test_the_trigger_survives_serialisation_and_runs_to_its_event(sensors):
    from contract_gate.triggers.landing import LandingTrigger

    with gate_home():
        compiled = plan(FILES)
    classpath, kwargs = LandingTrigger(**Watch.from_plan(compiled).as_kwargs(), poll_seconds=0.05).serialize()
    trigger = rebuilt(classpath, kwargs)
    assert trigger.serialize() == (classpath, kwargs)
    land_csv(FILES, case_rows("2025-04-03", region="F"), marker="_SUCCESS")
    with gate_home():
        event = first_event(trigger)
    assert event.payload["status"] == "landed"
    assert event.payload["submission_id"] == submission_of(FILES)


def test_a_cron_gate_is_watched_with_the_default_settle_time(sensors):
    """A sensor on a gate that runs on a cron reads no onLanding settings from its string schedule."""
    with gate_home():
        watch = Watch.from_plan(plan(CRON))
    assert (watch.marker, watch.settle_seconds) == (None, DEFAULT_SETTLE_SECONDS)


def test_without_a_marker_a_file_batch_lands_when_nothing_changed_for_the_settle_time(sensors):
    with gate_home():
        watch = Watch.from_plan(plan(SETTLE))
    assert watch.marker is None and watch.settle_seconds == 600
    folder = land_csv(SETTLE, case_rows("2025-04-01", region="S"))
    now = time.time()
    with gate_home():
        assert landed_batch(watch, now) is None  # just written
        assert landed_batch(watch, now + 601).submission_id == submission_of(SETTLE)
        (folder / "part-1.csv").write_text((folder / "part-0.csv").read_text())  # the producer is still copying
        later = os.stat(folder / "part-1.csv").st_mtime
        assert landed_batch(watch, later + 599) is None
        assert landed_batch(watch, later + 601).files == 2


def test_a_landing_with_a_link_or_a_special_file_is_refused_and_never_read(sensors, tmp_path):
    from contract_gate.triggers.landing import LandingTrigger

    folder = land_csv(FILES, case_rows("2025-04-04", region="F"), marker="_SUCCESS")
    secret = tmp_path / "outside.csv"
    secret.write_text("not the producer's\n")
    (folder / "part-9.csv").symlink_to(secret)
    with gate_home():
        compiled = plan(FILES)
        with pytest.raises(LandingRefused, match="part-9.csv in landing .* is a link or a special file"):
            sensor(FILES).poke({})
        once = LandingTrigger(**Watch.from_plan(compiled).as_kwargs(), poll_seconds=0.05)
        event = first_event(once)
        assert event.payload["status"] == "error" and "part-9.csv" in event.payload["message"]
        watcher = LandingTrigger(**Watch.from_plan(compiled).as_kwargs(), poll_seconds=0.05, repeat=True)
        assert asyncio.run(watcher.poll()) is None  # an Asset watcher keeps watching for a fixed landing
        (folder / "part-9.csv").unlink()
        os.mkfifo(folder / "part-9.csv")  # hashing a FIFO would block forever
        with pytest.raises(LandingRefused, match="special file"):
            sensor(FILES).poke({})
        (folder / "part-9.csv").unlink()
        assert asyncio.run(watcher.poll())["status"] == "landed"


def test_an_unreadable_delta_landing_is_refused_and_a_watcher_keeps_watching(tmp_path):
    from contract_gate.triggers.landing import LandingTrigger

    (tmp_path / "landing" / "_delta_log").mkdir(parents=True)
    (tmp_path / "landing" / "_delta_log" / f"{0:020d}.json").write_text("{not a commit\n")
    watch = Watch("c", {"kind": "path", "path": str(tmp_path / "landing"), "format": "delta"},
                  {"kind": "path", "path": str(tmp_path / "decisions"), "format": "delta"})
    with pytest.raises(LandingRefused, match="Delta landing .*landing"):
        landed_batch(watch)
    assert asyncio.run(LandingTrigger(**watch.as_kwargs(), repeat=True).poll()) is None
    assert asyncio.run(LandingTrigger(**watch.as_kwargs()).poll())["status"] == "error"
