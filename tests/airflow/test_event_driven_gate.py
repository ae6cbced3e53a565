"""An event-driven gate (``schedule: {onLanding: ...}``) started by a landed batch, and consumers
waiting on ``AcceptedDataSensor``: real Airflow (SQLite), a real Spark Connect server, real Delta.

The path a batch takes is Airflow's own: the DAG file is parsed and synced to the database, which
stores the Asset watcher's trigger; that trigger, rebuilt from its stored kwargs as the
triggerer does, runs to its event; ``Trigger.submit_event`` (what the triggerer reports an event
with) records the Asset event and queues the gate DAG; the scheduler's own code turns the queue
into one asset-triggered run, whose tasks run in this process as ``dag.test()`` runs them. Two
gate runs in all
(one published, one quarantined), shared by the tests of this module.
"""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest
from _airflow_gate import HOME, gate_home
from _asset_watch import asset_events, sync_dag_folder, unpause
from _landing_contracts import case_rows, land_csv, write_contract

# two gate runs (four Spark jobs), over Spark Connect: what the gate decides, not where Spark runs
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("gates_over_connect")]

GATE = "cases_on_landing"
IDLE = "cases_never_landed"  # a contract with no decisions at all
CONTRACTS = HOME / "event_gate_contracts"
IDLE_CONTRACTS = HOME / "event_gate_idle"  # apart: two contracts of a folder may not share a candidate name
DAG_FILE = "event_gate_dags.py"
TODAY = datetime.now(timezone.utc).date()
TOMORROW = TODAY + timedelta(days=1)
DAGS = f'''"""DAGs of tests/airflow/test_event_driven_gate.py (written by the test, removed after it)."""
from datetime import datetime, timezone

from airflow.sdk import DAG
from contract_gate.dag_factory import contract_dag
from contract_gate.sensors import AcceptedDataSensor

gate = contract_dag({str(CONTRACTS / f"{GATE}.yaml")!r})
for deferrable in (False, True):
    dag_id = f"accepted_{{'deferred' if deferrable else 'poke'}}"
    with DAG(dag_id, schedule=None, start_date=datetime(2024, 1, 1, tzinfo=timezone.utc)) as dag:
        AcceptedDataSensor(task_id="wait", contract={str(CONTRACTS / f"{GATE}.yaml")!r},
                           business_date="{{{{ params.business_date }}}}", params={{"business_date": None}},
                           deferrable=deferrable, poke_interval=1, timeout=300)
    globals()[dag_id] = dag
'''
TRIGGER_CLASS = "contract_gate.triggers.landing.LandingTrigger"


@dataclass
class Landed:
    """One batch through the event path: the watcher's event, what the scheduler made of it, and
    the decision its asset-triggered run recorded."""

    event: dict
    queued: bool
    asset_runs: list
    decision: dict | None


@dataclass
class World:
    dag: object
    stored_trigger: tuple  # (id, classpath, kwargs) of the watcher's trigger row
    good: Landed
    same_again: dict  # polls after the same batch landed a second time
    bad: Landed
    asset_events: int


def stored_watcher():
    from airflow.models.trigger import Trigger
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = [row for row in session.scalars(select(Trigger).where(Trigger.classpath == TRIGGER_CLASS))
                if row.kwargs.get("contract_id") == GATE]
        assert len(rows) == 1, "one watcher trigger for the gate's landing Asset"
        return rows[0].id, rows[0].classpath, rows[0].kwargs


def rebuild(stored: tuple):
    """The watcher's trigger as the triggerer builds it from its database row."""
    from airflow.serialization.decoders import smart_decode_trigger_kwargs

    _, classpath, kwargs = stored
    module, name = classpath.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)(**{k: smart_decode_trigger_kwargs(v) for k, v in kwargs.items()})


def next_event(trigger, limit: float = 120):
    """The watcher's next event (``limit`` only keeps a broken trigger from hanging the suite)."""
    async def first():
        async for event in trigger.run():
            return event

    return asyncio.run(asyncio.wait_for(first(), limit))


def schedule_from(trigger_id: int, event) -> tuple[bool, list]:
    """What the triggerer and the scheduler do with a watcher's event: record it as an Asset event
    (queueing the DAGs scheduled on the Asset), then create the gate's asset-triggered run. Returns
    whether the gate DAG was due, and the runs created (dag_id, run_type, event payloads, run_id)."""
    from airflow.jobs.job import Job
    from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.models.trigger import Trigger
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        Trigger.submit_event(trigger_id, event, session=session)
    with create_session() as session:
        query, triggered = DagModel.dags_needing_dagruns(session)
        due = [model for model in query.all() if model.dag_id == GATE and GATE in triggered]
        before = {run.id for run in session.scalars(select(DagRun).where(DagRun.dag_id == GATE))}
        SchedulerJobRunner(job=Job())._create_dag_runs_asset_triggered(dag_models=due, session=session)
        session.flush()
        runs = [(run.dag_id, str(run.run_type), [e.extra["payload"] for e in run.consumed_asset_events], run.run_id)
                for run in session.scalars(select(DagRun).where(DagRun.dag_id == GATE)) if run.id not in before]
    return GATE in triggered, runs


def run_scheduled(dag, run_id: str) -> dict:
    """Run the tasks of the run the scheduler created, in this process, the way ``dag.test()``
    runs its own (its task runner, triggers in line); returns the recorded decision (XCom)."""
    from airflow.models.dagrun import DagRun
    from airflow.models.xcom import XComModel
    from airflow.sdk.definitions.dag import _run_task
    from airflow.serialization.serialized_objects import DagSerialization
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState, TaskInstanceState
    from sqlalchemy import select

    scheduled = DagSerialization.deserialize_dag(DagSerialization.serialize_dag(dag))
    with create_session() as session:
        run = session.scalar(select(DagRun).where(DagRun.dag_id == dag.dag_id, DagRun.run_id == run_id))
        run.dag = scheduled
        run.state = DagRunState.RUNNING
        session.commit()
        while run.state == DagRunState.RUNNING:
            session.expire_all()
            ready, _ = run.update_state(session=session)
            for instance in ready:
                instance.try_number += 1
                instance.state = TaskInstanceState.SCHEDULED
            session.commit()
            for instance in [ti for ti in run.get_task_instances(session=session)
                             if ti.state == TaskInstanceState.SCHEDULED]:
                _run_task(ti=instance, task=dag.task_dict[instance.task_id], run_triggerer=True)
        assert run.state == DagRunState.SUCCESS, run.state
        (row,) = session.scalars(XComModel.get_many(key="return_value", run_id=run_id, dag_ids=dag.dag_id, task_ids="record_decision")).all()
        return XComModel.deserialize_value(row)


@pytest.fixture(scope="module")
def world(gate) -> World:
    """Two batches through the event path: a good one (published), the same one again (no
    event), a bad one (quarantined)."""
    write_contract(CONTRACTS, GATE, schedule={"onLanding": {"marker": "_SUCCESS", "pollSeconds": 5}})
    write_contract(IDLE_CONTRACTS, IDLE)
    (gate.dags / DAG_FILE).write_text(DAGS)
    gate.reset_bag()
    try:
        with gate_home():
            bag = gate.bag()
            sync_dag_folder()
            unpause(GATE)  # Airflow watches the Assets of active DAGs only
            sync_dag_folder()
            stored = stored_watcher()
            watcher = rebuild(stored)
            watcher.poll_seconds = 0.05

            land_csv(GATE, case_rows(TODAY.isoformat(), region="E"), marker="_SUCCESS")
            event = next_event(watcher)
            queued, runs = schedule_from(stored[0], event)
            decision = run_scheduled(bag.dags[GATE], runs[0][-1]) if runs else None
        good = Landed(event.payload, queued, runs, decision)

        with gate_home():
            land_csv(GATE, case_rows(TODAY.isoformat(), region="E"), marker="_SUCCESS")  # the same batch, copied again
            same_again = {"watcher": asyncio.run(watcher.poll()),
                          "restarted watcher": asyncio.run(rebuild(stored).poll())}

            land_csv(GATE, case_rows(TOMORROW.isoformat(), region="E", bad=True), marker="_SUCCESS")
            event = next_event(watcher)
            queued, runs = schedule_from(stored[0], event)
            decision = run_scheduled(bag.dags[GATE], runs[0][-1]) if runs else None
        bad = Landed(event.payload, queued, runs, decision)
        yield World(bag.dags[GATE], stored, good, same_again, bad, len(asset_events(f"contract_gate.{GATE}@local.landing")))
    finally:
        (gate.dags / DAG_FILE).unlink()
        gate.reset_bag()


def test_an_on_landing_contract_makes_a_gate_dag_scheduled_on_its_watched_landing(world):
    from airflow.sdk.definitions.timetables.assets import AssetTriggeredTimetable

    from contract_gate.triggers.landing import LandingTrigger

    assert isinstance(world.dag.timetable, AssetTriggeredTimetable)
    asset = world.dag.timetable.asset_condition
    assert asset.name == f"contract_gate.{GATE}@local.landing"
    (watcher,) = asset.watchers
    assert isinstance(watcher.trigger, LandingTrigger) and watcher.trigger.repeat
    _, classpath, kwargs = world.stored_trigger
    assert classpath == TRIGGER_CLASS
    assert kwargs["marker"] == "_SUCCESS" and kwargs["landing"]["path"] == f"lakehouse/landing/{GATE}"


def test_a_landed_batch_starts_one_gate_run_and_the_same_batch_landing_again_starts_none(world):
    good, bad = world.good, world.bad
    assert good.event["status"] == "landed"
    assert good.queued
    ((dag_id, run_type, payloads, _),) = good.asset_runs  # one run, started by the Asset event
    assert (dag_id, run_type, payloads) == (GATE, "asset_triggered", [good.event])
    assert good.decision["outcome"] == "published"
    assert good.decision["submission_id"] == good.event["submission_id"]

    # copied again with new modification times: same content, same submission, already decided
    assert world.same_again == {"watcher": None, "restarted watcher": None}

    assert bad.event["submission_id"] != good.event["submission_id"]
    ((dag_id, run_type, payloads, _),) = bad.asset_runs
    assert (dag_id, run_type, payloads) == (GATE, "asset_triggered", [bad.event])
    assert bad.decision["outcome"] == "quarantined"
    assert bad.decision["submission_id"] == bad.event["submission_id"]
    assert world.asset_events == 2  # one Asset event per batch, none for the copy


def accepted_sensor(contract: str, business_date=None):
    from contract_gate.sensors import AcceptedDataSensor

    folder = IDLE_CONTRACTS if contract == IDLE else CONTRACTS
    return AcceptedDataSensor(task_id=f"accepted_{contract}", contract=str(folder / f"{contract}.yaml"),
                              business_date=business_date)


def test_the_accepted_data_sensor_releases_on_a_published_decision_and_waits_after_a_quarantined_one(world, gate):
    from contract_gate.triggers.accepted_data_trigger import accepted_data_event

    good = world.good.decision["submission_id"]
    with gate_home():
        released = accepted_sensor(GATE, TODAY.isoformat()).poke({})
        assert released.xcom_value["submission_id"] == good and released.xcom_value["outcome"] == "published"
        assert accepted_sensor(GATE, (TODAY - timedelta(days=3)).isoformat()).poke({})  # an earlier date is covered
        # the bad batch for tomorrow was quarantined: nothing covers tomorrow
        assert accepted_sensor(GATE, TOMORROW.isoformat()).poke({}) is False
        assert accepted_data_event(str(CONTRACTS / f"{GATE}.yaml"), None, TOMORROW.isoformat()) is None  # its trigger waits too
        assert accepted_sensor(IDLE, TODAY.isoformat()).poke({}) is False  # never gated
        # freshness: today's published data is within the 2-day SLA; nothing accepted is stale
        fresh = accepted_sensor(GATE).poke({}).xcom_value
        assert fresh.pop("age_seconds") <= 172800
        assert fresh == {"contract_id": GATE, "object": "regional_daily_cases", "reason": "fresh", "sla_seconds": 172800,
                         "submission_id": good}
        assert accepted_sensor(IDLE).poke({}) is False

    for dag_id in ("accepted_poke", "accepted_deferred"):
        run = gate.run(dag_id, business_date=TODAY.isoformat())
        assert run.states["wait"] == "success", dag_id
        assert run.xcoms["wait"]["submission_id"] == good, dag_id


def test_the_accepted_data_sensor_refuses_a_contract_it_cannot_date(world, tmp_path):
    import yaml

    document = yaml.safe_load((IDLE_CONTRACTS / f"{IDLE}.yaml").read_text())
    document.pop("slaProperties")
    (tmp_path / "no_sla.yaml").write_text(yaml.safe_dump(document))
    from contract_gate.sensors import AcceptedDataSensor

    waiting = AcceptedDataSensor(task_id="no_sla", contract=str(tmp_path / "no_sla.yaml"), business_date="2025-01-01")
    with gate_home(), pytest.raises(ValueError, match="no freshness/latency SLA"):
        waiting.poke({})
    with gate_home(), pytest.raises(ValueError, match="business_date 'yesterday' is not an ISO date"):
        accepted_sensor(GATE, "yesterday").poke({})
