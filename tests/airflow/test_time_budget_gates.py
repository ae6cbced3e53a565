"""Time budgets end to end, through the generated DAG in ``dag.test()``: a contract query that would
run for hours (``tests/budget_contracts.py``) under ``limits.querySeconds: 5`` is stopped inside
Spark, the decision is ``failed`` with reason ``time budget exceeded`` naming the rule, and
nothing is published. Also the Databricks run's ``timeout_seconds`` and the decision's reason
when a run ends at it, against the local Jobs API emulation.

(Standalone cluster: tests/airflow/test_spark_standalone.py; Spark Connect:
tests/spark_connect/test_time_budget_over_connect.py.)
"""

from __future__ import annotations

import subprocess

import pytest
from _airflow_gate import regional_rows
from jobs_api_emulator import JobsApiEmulator
from budget_contracts import RULE_ID, many_rows, slow_contract

from contract_gate.operators.record import verdict
from contract_gate.runners import GateJob, get_runner
from contract_gate_plan.limits import Stop, read_stop

DECISIONS = "lakehouse/contract_gate_decisions"


def decisions_of(gate, contract_id: str) -> list[dict]:
    return [row for row in gate.rows(DECISIONS) if row["contract_id"] == contract_id]


@pytest.fixture
def contract_named(gate):
    """Write a contract into the world's folder and its DAG file; removed afterwards."""
    from contract_gate.dag_factory import sync_dag_files

    written = []

    def write(name: str, text: str) -> str:
        path = gate.contracts / f"{name}.yaml"
        path.write_text(text)
        written.append(path)
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()
        return name

    yield write
    for path in written:
        path.unlink()
    sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
    gate.reset_bag()


def java_processes_naming(text: str) -> list[str]:
    done = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if line.startswith(("java", "/")) and "java" in line
            and text in line]


@pytest.mark.slow
def test_a_query_past_its_budget_fails_the_local_gate_and_publishes_nothing(gate, contract_named):
    name = contract_named("slow_local", slow_contract("slow_local", "local", query_seconds=5))
    target = f"lakehouse/{name}"
    gate.land(name, regional_rows(region="G"), "csv")
    assert gate.run(name).decision["outcome"] == "published"  # the slow query is quick on three rows
    version = gate.version(target)

    gate.land(name, many_rows(), "csv")
    run = gate.run(name)
    assert run.states["stage_validate"] == "failed" and run.states["publish"] != "success"
    stopped = run.xcoms["stage_validate:stopped"]
    assert (stopped["reason"], stopped["running"], stopped["seconds"], stopped["setting"]) == (
        "time budget exceeded", f"rule {RULE_ID!r}", 5, "limits.querySeconds")
    submission = run.xcoms["submission"]["submission_id"]
    (decision,) = [d for d in decisions_of(gate, name) if d["submission_id"] == submission]
    assert decision["outcome"] == "failed"
    assert decision["reason"] == (f"time budget exceeded: rule {RULE_ID!r} was still running after 5 s "
                                  "(limits.querySeconds)")
    assert gate.version(target) == version and len(gate.rows(target)) == 3  # nothing published
    # the local driver is the job's own JVM: it ended with the job, so no Spark job runs on
    assert java_processes_naming(submission) == []


def test_a_stopped_validation_names_the_rule_in_the_decision():
    submission = {"submission_id": "s1"}
    stop = Stop("rule 'pairs_hash'", 5, "limits.querySeconds")
    failed = verdict(submission, None, {}, {"stage_validate": "failed"}, stopped=stop.__dict__)
    assert (failed["outcome"], failed["reason"]) == (
        "failed", "time budget exceeded: rule 'pairs_hash' was still running after 5 s (limits.querySeconds)")
    broken = verdict(submission, None, {}, {"stage_validate": "failed"})
    assert broken["reason"] == "task(s) stage_validate failed before a verdict; see their logs"


def test_a_databricks_run_carries_the_budget_and_one_ended_at_its_timeout_is_a_stop(tmp_path, monkeypatch):
    """runs/submit gets ``timeout_seconds``; a run that Databricks ends at it (TIMEDOUT) leaves the
    stop record the decision's reason comes from, naming the run. The emulated compute never
    comes up within the budget."""
    with JobsApiEmulator(tmp_path / "workspace", tmp_path) as api:
        api.volumes.add("/Volumes/main/contract_gate/work")
        api.clusters.add("c")
        api.cluster_start_seconds = 600
        monkeypatch.setenv("AIRFLOW_CONN_DATABRICKS_EMULATOR", api.connection(
            volume="/Volumes/main/contract_gate/work", existing_cluster_id="c", polling_period_seconds=1,
            deferrable=False))
        runner = get_runner("databricks", conn_id="databricks_emulator")
        job = GateJob("validate", {"--submission-id": "s1"}, tmp_path, writes_result=False, time_limit=2)
        with pytest.raises(Exception, match="TIMEDOUT"):
            runner.start(job)
    assert api.submitted[0]["timeout_seconds"] == 2
    stop = read_stop(tmp_path)
    assert stop is not None and stop.describe() == (
        f"time budget exceeded: Databricks run {runner._run_id} was still running after 2 s (the run's timeout_seconds)")
