"""Faults end final by themselves, and an empty landing is not a fault: real Airflow (SQLite,
``dag.test()``), real Delta decision logs, the landing watcher's trigger polled in process as the
triggerer polls it. No Spark: the runs here end before the first Spark job.

* Gate tasks retry (the contract's ``retries``, else the deployment's ``[contract_gate]``).
* A batch whose run ended with a non-final ``failed`` decision is fired again by the watcher
  until it is final or ``runsPerBatch`` runs have failed; a scheduled run gives up likewise, and
  the run that used up the batch's runs says so in its rejection alert, once.
* A scheduled run with nothing landed is skipped, and records nothing.

The real-process version (a scheduler stopped mid-run) is tests/deploy/test_deployment_e2e.py.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from _airflow_gate import HOME, gate_home
from _landing_contracts import LAKEHOUSE, case_rows, land_csv, write_contract

CONTRACTS = HOME / "faults_contracts"
EMPTY = "cases_nothing_landed"  # cron, nothing ever lands
GIVEN_UP = "cases_given_up"  # cron, its batch failed in every run it had
WATCHED = "cases_fired_again"  # @landing, its run fails
CAPPED = "cases_retry_cap_alerted"  # cron, its runs fail until its runs per batch are used up
ALERTS = LAKEHOUSE / "_contract_gate_alerts" / "faults_rejections.jsonl"  # CAPPED's rejection alerts (FileNotifier)
SECRET = "ZQX-CAP-CLASSIFIED-7713"  # a reporting_org (classification: restricted) value to trace
DAG_FILE = "faults_dags.py"


def contract(contract_id: str, *, schedule, retries: dict | None = None, alerts: dict | None = None):
    import yaml

    path = write_contract(CONTRACTS / contract_id, contract_id, schedule=schedule)
    if retries is not None or alerts is not None:
        document = yaml.safe_load(path.read_text())
        gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
        gate.update({"retries": retries} if retries is not None else {}, **({"alerts": alerts} if alerts else {}))
        path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def plan_of(path):
    from contract_gate.operators.base import compile_gate_plan

    with gate_home():
        return compile_gate_plan(str(path), None, None)


def failed_run(plan, submission_id: str, run_id: str) -> None:
    """What the record task writes for a run that broke before a verdict."""
    from contract_gate import decisions

    with gate_home():
        decisions.record_decision(plan, {
            "submission_id": submission_id, "contract_id": plan.contract_id, "contract_version": plan.contract_version,
            "outcome": "failed", "reason": "task(s) stage_validate failed before a verdict", "run_id": run_id})


def records(plan) -> list:
    from contract_gate.decisions import store_for

    with gate_home():
        return store_for(plan).records(contract_id=plan.contract_id)


@pytest.fixture(scope="module")
def dags(gate):
    paths = {EMPTY: contract(EMPTY, schedule="@daily"),
             GIVEN_UP: contract(GIVEN_UP, schedule="@daily", retries={"runsPerBatch": 2, "tasks": 4,
                                                                       "delaySeconds": 7}),
             CAPPED: contract(CAPPED, schedule="@daily", retries={"runsPerBatch": 2, "tasks": 0},
                              alerts={"onRejection": [{"class": "contract_gate.notifications.file.FileNotifier",
                                                       "arguments": {"path": ALERTS.name}}]})}
    (gate.dags / DAG_FILE).write_text(
        "from contract_gate.dag_factory import contract_dag\n"
        + "".join(f"{name} = contract_dag({str(path)!r})\n" for name, path in paths.items()))
    gate.reset_bag()
    try:
        yield gate
    finally:
        (gate.dags / DAG_FILE).unlink()
        gate.reset_bag()


def test_a_scheduled_run_with_nothing_landed_is_skipped_and_records_nothing(dags):
    run = dags.run(EMPTY)
    assert run.dagrun.state == "success"
    assert run.states["submission"] == "skipped"
    assert {run.states[task] for task in ("stage_validate", "branch", "publish", "quarantine", "split")} == {"skipped"}
    assert run.states["record_decision"] == "success" and run.decision is None
    assert records(plan_of(CONTRACTS / EMPTY / f"{EMPTY}.yaml")) == []
    assert not (LAKEHOUSE / EMPTY).exists()  # no target was made


def test_a_scheduled_run_stops_gating_a_batch_once_its_runs_per_batch_have_failed(dags):
    from contract_gate.submission import derive_submission_id

    plan = plan_of(CONTRACTS / GIVEN_UP / f"{GIVEN_UP}.yaml")
    land_csv(GIVEN_UP, case_rows("2025-03-01"))
    with gate_home():
        submission_id = derive_submission_id(GIVEN_UP, plan.document["tables"]["landing"])
    failed_run(plan, submission_id, "earlier-run-1")
    failed_run(plan, submission_id, "earlier-run-2")

    run = dags.run(GIVEN_UP)
    assert run.dagrun.state == "success"
    assert run.states["submission"] == "skipped" and run.states["stage_validate"] == "skipped"
    assert run.decision is None
    assert [(r.outcome, r.run_id) for r in records(plan)] == [("failed", "earlier-run-2"), ("failed", "earlier-run-1")]
    assert not (LAKEHOUSE / GIVEN_UP).exists()  # nothing was published


def test_the_run_that_uses_up_a_batchs_runs_raises_the_rejection_alert_once(dags, monkeypatch):
    from contract_gate.submission import derive_submission_id

    plan = plan_of(CONTRACTS / CAPPED / f"{CAPPED}.yaml")
    land_csv(CAPPED, [{**row, "reporting_org": SECRET} for row in case_rows("2025-03-02")])
    with gate_home():
        submission_id = derive_submission_id(CAPPED, plan.document["tables"]["landing"])
    dags.bag()  # parsed first: the fault below is the engine's, at run time
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__EXECUTION_MODE", "lost_engine")  # every Spark task fails

    def alerts() -> list[dict]:
        return [json.loads(line) for line in ALERTS.read_text().splitlines()] if ALERTS.exists() else []

    first = dags.run(CAPPED)
    assert first.states["stage_validate"] == "failed" and first.states["record_decision"] == "failed"
    assert [(a["outcome"], a["retry_cap"]) for a in alerts()] == [("failed", None)]  # run 1 of 2: gated again

    second = dags.run(CAPPED)
    assert second.states["record_decision"] == "failed"
    capped = alerts()[1:]
    assert [(a["submission_id"], a["outcome"], a["retry_cap"]) for a in capped] == [(submission_id, "failed", 2)]
    assert capped[0]["title"] == f"contract-gate: {CAPPED} submission {submission_id} failed, retry cap reached"
    assert "failed in 2 of 2 runs (runs per batch)" in capped[0]["message"]

    monkeypatch.delenv("AIRFLOW__CONTRACT_GATE__EXECUTION_MODE")
    third = dags.run(CAPPED)  # the next scheduled run gives the batch up, and alerts nobody again
    assert third.states["submission"] == "skipped" and third.decision is None
    assert len(alerts()) == 2
    assert SECRET not in ALERTS.read_text()
    assert [r.outcome for r in records(plan)] == ["failed", "failed"]
    assert not (LAKEHOUSE / CAPPED).exists()  # nothing was published


def test_gate_tasks_retry_as_the_contract_says_else_as_the_deployment_says(dags, monkeypatch):
    given = dags.bag().dags[GIVEN_UP]
    assert {(t.retries, t.retry_delay) for t in given.tasks} == {(4, timedelta(seconds=7))}
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__TASK_RETRIES", "3")
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__RETRY_DELAY_SECONDS", "1")
    from contract_gate.dag_factory import contract_dag

    with gate_home():
        deployment = contract_dag(CONTRACTS / EMPTY / f"{EMPTY}.yaml")
    assert {(t.retries, t.retry_delay) for t in deployment.tasks} == {(3, timedelta(seconds=1))}


def test_the_retry_settings_are_checked_like_every_gate_setting():
    from contract_gate.contract.errors import ContractError
    from contract_gate.contract_folder import compiled

    for n, (retries, message) in enumerate((({"forever": True}, "unknown gate setting 'forever'"),
                                            ({"tasks": -1}, "greater than or equal to 0"),
                                            ({"runsPerBatch": 1000}, "less than or equal to 20"))):
        path = contract(f"cases_bad_retries_{n}", schedule="@daily", retries=retries)
        with pytest.raises(ContractError) as refused:
            compiled(path)
        assert message in str(refused.value) and "retries" in str(refused.value)


def test_the_watcher_fires_a_batch_again_after_a_failed_run_until_it_is_final_or_out_of_runs(gate):
    from contract_gate import decisions
    from contract_gate.landing_batches import Watch
    from contract_gate.triggers.landing import LandingTrigger

    path = contract(WATCHED, schedule={"onLanding": {"marker": "_SUCCESS"}}, retries={"runsPerBatch": 2})
    plan = plan_of(path)
    watcher = LandingTrigger(**Watch.from_plan(plan).as_kwargs(), repeat=True)  # runsPerBatch: 2

    def poll():
        with gate_home():
            return asyncio.run(watcher.poll())

    land_csv(WATCHED, case_rows("2025-04-01"), marker="_SUCCESS")
    first = poll()
    assert first is not None and first["status"] == "landed"
    assert poll() is None  # its run has not ended
    failed_run(plan, first["submission_id"], "run-1")
    again = poll()
    assert again is not None and again["submission_id"] == first["submission_id"]  # gated again, by nobody
    assert poll() is None
    failed_run(plan, first["submission_id"], "run-2")
    assert poll() is None and poll() is None  # two failed runs: it waits for a person

    land_csv(WATCHED, case_rows("2025-04-02"), marker="_SUCCESS")
    second = poll()
    assert second is not None and second["submission_id"] != first["submission_id"]
    with gate_home():
        decisions.record_decision(plan, {"submission_id": second["submission_id"], "contract_id": WATCHED,
                                         "contract_version": plan.contract_version, "outcome": "quarantined",
                                         "run_id": "run-3"})
    assert poll() is None and poll() is None  # final: never fired again
