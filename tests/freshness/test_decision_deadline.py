"""The gate DAG's Deadline Alert: built from the gate settings, serialized with the DAG, and its
callback run the way Airflow's executor runs deadline callbacks, with the context the
scheduler builds, delivering through a real notifier."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import structlog
from _freshness_helpers import file_alerts, plan_for, read_lines
from airflow.api_fastapi.core_api.datamodels.dag_run import DAGRunResponse
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, DeadlineReference, SyncCallback
from airflow.sdk.execution_time.callback_supervisor import execute_callback
from airflow.serialization.serialized_objects import DagSerialization

from contract_gate.notifications.deadline import decision_deadline

QUEUED = dt.datetime(2024, 3, 1, 8, tzinfo=dt.timezone.utc)


def scheduler_context(deadline_time: dt.datetime) -> dict:
    """What ``Deadline.handle_miss`` puts in the callback's ``context``."""
    run = SimpleNamespace(
        run_id="manual__2024-03-01T08:00:00+00:00", dag_id="regional_daily_cases", logical_date=QUEUED,
        queued_at=QUEUED, start_date=QUEUED, end_date=None, duration=None, data_interval_start=QUEUED,
        data_interval_end=QUEUED, run_after=QUEUED, last_scheduling_decision=None, run_type="manual",
        state="running", triggered_by="ui", triggering_user_name="ops", conf={"submission_id": "sub-7"}, note=None,
        dag_versions=[], bundle_version=None, dag_model=SimpleNamespace(dag_display_name="regional_daily_cases"),
        partition_key=None, partition_date=None)
    return {"dag_run": DAGRunResponse.model_validate(run).model_dump(mode="json"),
            "deadline": {"id": "0b0e", "deadline_time": deadline_time}}


def test_deadline_alert_from_gate_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__ALERTS_DIR", str(tmp_path))
    alerts_file = tmp_path / "alerts.jsonl"
    plan = plan_for(tmp_path, alerts={**file_alerts(alerts_file), "decisionDeadlineMinutes": 45})
    deadline = decision_deadline(plan)
    assert deadline.reference == DeadlineReference.DAGRUN_QUEUED_AT
    assert deadline.interval == dt.timedelta(minutes=45)
    assert isinstance(deadline.callback, SyncCallback)

    with DAG("regional_daily_cases", schedule=None, start_date=QUEUED, deadline=deadline) as dag:
        EmptyOperator(task_id="record_decision")
    restored = DagSerialization.deserialize_dag(DagSerialization.serialize_dag(dag))
    [serialized] = restored.deadline
    callback = serialized["callback"]["__data__"]
    assert callback["path"] == "contract_gate.notifications.deadline.notify_gate_overdue"

    ok, error = execute_callback(callback["path"], {**callback["kwargs"], "context": scheduler_context(QUEUED + deadline.interval)},
                                 None, None, structlog.get_logger())
    assert (ok, error) == (True, None)
    [alert] = read_lines(alerts_file)
    assert alert["event"] == "decision_overdue" and alert["submission_id"] == "sub-7"
    assert alert["message"] == (
        "The gate run manual__2024-03-01T08:00:00+00:00 of contract 'regional_daily_cases' (environment local) "
        "for submission sub-7 has not completed successfully within 45 min of being queued "
        "(2024-03-01T08:00:00Z). Check the run and the decision table.")


def test_no_deadline_without_minutes_or_notifiers(tmp_path):
    assert decision_deadline(plan_for(tmp_path, alerts=file_alerts(tmp_path / "a.jsonl"))) is None
    assert decision_deadline(plan_for(tmp_path, alerts={"decisionDeadlineMinutes": 30})) is None
