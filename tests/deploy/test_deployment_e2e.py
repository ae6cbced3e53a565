"""The gates as users run them: ``contract-gate airflow up`` on PostgreSQL (api-server, scheduler,
dag-processor, triggerer with LocalExecutor, as separate processes; not ``dag.test()``), two
contracts (one ``@landing`` with a marker, one on a cron schedule), batches landed as a producer
lands them, decisions read from the decision log.

Then a fault as a service manager makes one: the scheduler's process group is stopped (SIGTERM)
while a gate task of a new batch runs, and ``up`` starts the scheduler again. Nobody triggers
anything: the batch ends with exactly one final decision and at most one tagged commit to the
target (published once).
"""

from __future__ import annotations

import os
import signal
from datetime import date, timedelta

import pytest
from _deployment import Deployed
from waiting import wait_until

pytestmark = pytest.mark.slow  # four Airflow processes, Spark jobs of three gate runs

WATCHED = "cases_deployed_on_landing"
CRON = "cases_deployed_on_cron"
GATE_TASKS = ("stage_validate", "publish", "quarantine", "split")
DECIDED = 900  # seconds: three Spark JVMs per run on a small shared machine


@pytest.fixture(scope="module")
def deployed(postgres, tmp_path_factory):
    from _postgres import free_port

    deployment = Deployed(tmp_path_factory.mktemp("deployment"))
    deployment.write_contract(WATCHED, {"onLanding": {"marker": "_SUCCESS"}})
    deployment.write_contract(CRON, "* * * * *")
    try:
        deployment.up("--db-url", postgres.url, "--port", str(free_port()))
        yield deployment
    finally:
        deployment.down()


def running_gate_task(postgres, dag_id: str) -> str | None:
    with postgres.connect() as db, db.cursor() as cursor:
        cursor.execute("SELECT task_id FROM task_instance WHERE dag_id = %s AND state = 'running' AND task_id = ANY(%s)",
                       (dag_id, list(GATE_TASKS)))
        found = cursor.fetchone()
    return found[0] if found else None


def dag_runs(postgres, dag_id: str) -> list[tuple[str, str]]:
    with postgres.connect() as db, db.cursor() as cursor:
        cursor.execute("SELECT run_type, state FROM dag_run WHERE dag_id = %s ORDER BY id", (dag_id,))
        return cursor.fetchall()


def test_landed_batches_are_decided_through_the_scheduler_and_triggerer(deployed, postgres):
    deployed.land(WATCHED, date.today().isoformat(), region="W")
    deployed.land(CRON, date.today().isoformat(), region="C", marker=None)
    watched, cron = deployed.submission_now(WATCHED), deployed.submission_now(CRON)

    decided = wait_until(lambda: deployed.final(WATCHED, watched) and deployed.final(CRON, cron), DECIDED,
                         interval=1, message="a final decision for both landed batches")
    assert decided
    for contract_id, submission_id in ((WATCHED, watched), (CRON, cron)):
        assert deployed.final(contract_id, submission_id).outcome == "published"
        assert deployed.tagged_commits(contract_id, submission_id) == 1
    assert ("manual", "success") not in dag_runs(postgres, WATCHED)  # the watcher started it
    assert all(run_type == "scheduled" for run_type, _ in dag_runs(postgres, CRON))


def test_a_stopped_scheduler_group_leaves_no_batch_without_its_final_decision(deployed, postgres):
    deployed.land(WATCHED, (date.today() + timedelta(days=1)).isoformat(), region="S")
    submission_id = deployed.submission_now(WATCHED)
    task = wait_until(lambda: running_gate_task(postgres, WATCHED), DECIDED, interval=0.2,
                      message="a gate task of the new batch running")

    scheduler = deployed.pid("scheduler")
    assert scheduler is not None
    os.killpg(scheduler, signal.SIGTERM)  # as systemd stops the unit: the scheduler and its task processes
    wait_until(lambda: deployed.pid("scheduler") is None, 120, interval=0.2, message="the scheduler stopped")
    assert deployed.final(WATCHED, submission_id) is None, f"{task} finished before the stop"
    deployed.up()  # starts the scheduler again, nothing else

    final = wait_until(lambda: deployed.final(WATCHED, submission_id), DECIDED, interval=1,
                       message="the stopped batch's final decision")
    assert final.outcome == "published"
    records = deployed.decisions(WATCHED, submission_id)
    assert sum(1 for record in records if record.final) == 1
    assert deployed.tagged_commits(WATCHED, submission_id) == 1  # published once
    assert all(run_type != "manual" for run_type, _ in dag_runs(postgres, WATCHED))  # nobody triggered it


def test_scheduled_runs_that_find_their_batch_gated_succeed_and_log_no_error(deployed, postgres):
    ended = [state for _, state in dag_runs(postgres, CRON) if state in ("success", "failed")]
    assert len(ended) > 1 and ended[-1] == "success"  # every minute: the later runs found the batch gated already
    logs = "".join(log.read_text(errors="replace") for log in (deployed.home / "logs").glob(f"dag_id={CRON}/**/*.log"))
    assert "XCom not found" not in logs
    # the tasks' own INFO lines reach their logs (``up`` once handed every component the CLI's own WARNING)
    assert "was already gated" in logs and "already has its final decision" in logs
