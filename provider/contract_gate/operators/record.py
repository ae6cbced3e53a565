"""Record the submission's decision: always runs (trigger rule ``all_done``), needs no Spark.

It reads what the run's gate tasks pushed and asked the decision store
(:mod:`contract_gate.decisions`) to append the record. The store keeps exactly one *final*
record per submission (``published``, ``split``, ``quarantined``): a re-triggered
batch finds it and the run records nothing new. A run that broke before a verdict is recorded
as ``failed`` with the failing task named, or, when a time budget ran out, with ``time budget
exceeded`` and the rule that was running; that record is not final, so the same batch can be
gated again once the cause is fixed.

The record holds counts and rule ids only, never data values. It is written once no job of the
submission can commit any more (:func:`write_decision`): a job orphaned by a killed task cannot
commit after the verdict.

After a ``quarantined``, ``split`` or ``failed`` decision is recorded, the try that recorded it
alerts ``alerts.onRejection`` (:mod:`contract_gate.notifications.rejection`); a later try of the
same run tells the notifiers that try had not told yet (it was killed in between:
:mod:`contract_gate.notifications.receipts`), and a decision found from an earlier run alerts
nobody again. Whatever the alert does, the
decision stands. With ``alerts.failRunOnRejection`` the task, and so the run, then fails.
The ``failed`` run that uses up its batch's ``runs_per_batch`` (the watcher and the schedule gate
the batch no more) says so in that alert (:func:`retry_cap_reached`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contract_gate import decisions
from contract_gate.airflow_compat import AirflowFailException
from contract_gate.contract.retry_policy import RetryPolicy
from contract_gate.metrics import decision_recorded
from contract_gate.notifications.receipts import AlertReceipts
from contract_gate.notifications.rejection import alert_rejection
from contract_gate.operators.base import ContractGateBaseOperator, pick_execution
from contract_gate.operators.validate import STOPPED_KEY
from contract_gate.pages.links import GateReportLink, base_url
from contract_gate.pages.urls import URL_PREFIX, report_path
from contract_gate.runners import GateRunner, get_runner
from contract_gate.work_folders.job_fence import no_job_running
from contract_gate.work_folders import submission_folder
from contract_gate_plan.limits import Stop
from contract_gate_plan.migration import migration_id

if TYPE_CHECKING:
    from airflow.sdk import Context

    from contract_gate_plan.model import Plan

FAILED_STATES = ("failed", "upstream_failed")


def verdict(submission: dict, summary: dict | None, results: dict[str, dict | None],
            states: dict[str, str], stopped: dict | None = None) -> dict[str, Any]:
    """The decision fields that follow from the run's task results (pure: no store, no Airflow).
    ``stopped``: the stop the validation pushed when a time budget ran out."""
    outcome, reason = None, None
    published = quarantined = None
    for step in ("split", "publish", "quarantine"):
        result = results.get(step)
        if not result:
            continue
        published = result.get("publish") or published
        quarantined = result.get("quarantine") or quarantined
    if published and published["status"] in ("published", "already_published"):
        outcome = "split" if quarantined else "published"
    elif quarantined:
        outcome = "quarantined"
    if outcome is None:
        broken = [task for task, state in states.items() if state in FAILED_STATES]
        outcome = "failed"
        reason = Stop(**stopped).describe() if stopped else \
            f"task(s) {', '.join(broken) or 'unknown'} failed before a verdict; see their logs"
    if outcome != "failed":  # a verdict judged foreign keys against these versions of their targets
        reason = references_read((summary or {}).get("references") or {}) or reason
        judged = history_judged((summary or {}).get("history") or {})
        reason = f"{reason}; {judged}" if reason and judged else judged or reason
    rules = [{"id": r["id"], "severity": r["severity"], "failed_rows": r["failed_rows"], "measured": r["measured"]}
             for r in (summary or {}).get("failing_rules", [])]
    candidate = (summary or {}).get("candidate") or {}
    return {
        "submission_id": submission["submission_id"],
        "candidate": candidate.get("candidate"),
        "outcome": outcome,
        "reason": reason,
        "validation_outcome": (summary or {}).get("outcome"),
        "candidate_version": candidate.get("version"),
        "rows_landed": candidate.get("row_count"),
        "rows_published": (published or {}).get("rows", 0) if outcome in ("published", "split") else 0,
        "rows_quarantined": (quarantined or {}).get("rows", 0),
        "rules": rules,
        "target_version_before": (published or {}).get("target_version_before"),
        "target_version_after": (published or {}).get("target_version_after"),
        "latest_business_date": (published or {}).get("latest_business_date"),
        "rerun_of": submission.get("rerun_of"),
        "correction": bool(submission.get("correction")),
        "report_path": (summary or {}).get("report_path"),
        "null_counts": (summary or {}).get("null_counts") or {},
    }


def history_judged(history: dict[str, dict]) -> str | None:
    """The decision's words for the history rules that failed the batch or could not judge it
    (a history too short): rule, measure, median and factor."""
    said = [f"{rule_id}: {verdict['reason']}" for rule_id, verdict in sorted(history.items())
            if verdict.get("passed") is False and verdict.get("reason")]
    return "history rules: " + "; ".join(said) if said else None


def references_read(references: dict[str, dict]) -> str | None:
    """The decision's words for the referenced targets a validation read: rule, table, version."""
    if not references:
        return None
    read = [f"{rule_id} read {ref['table']} (contract {ref['contract']}) at version {ref['version']}"
            for rule_id, ref in sorted(references.items())]
    return "foreign keys: " + "; ".join(read)


def migration_record(results: dict[str, dict | None], submission_id: str) -> dict[str, Any] | None:
    """The decision fields of the target's migration that the publish step ran before writing
    ``submission_id`` (``contract_gate_spark.steps.target.migrate_target``), or None. Its id is the
    plan and the table version the migration left, so recording it again changes nothing."""
    migration = next((found for step in ("split", "publish")
                      if (found := (((results.get(step) or {}).get("publish") or {}).get("migration")))), None)
    if not migration:
        return None
    statements = migration["statements"]
    return {
        "submission_id": migration_id(migration["fingerprint"], migration["target_version_after"]),
        "outcome": "migrated",
        "contract_version": migration["to_version"],
        "reason": f"target migrated from contract version {migration['from_version'] or 'unknown'} to "
                  f"{migration['to_version']} ({len(statements)} statements) before publishing {submission_id}",
        "target_version_before": migration["target_version_before"],
        "target_version_after": migration["target_version_after"],
        "migration": {"from_version": migration["from_version"], "statements": statements,
                      "breaking": migration.get("breaking_applied", []),
                      "consumers": migration.get("consumers", []), "submission_id": submission_id},
    }


def write_decision(plan: Plan, record: dict[str, Any], results: dict[str, dict | None],
                   context_fields: dict[str, Any], runner: GateRunner) -> dict[str, Any]:
    """Append the run's ``record`` (a :func:`verdict`) and, first, the target's migration its publish
    made; the stored record. Written once no job of the submission can commit any more: the jobs
    that outlived their task are ended first (:meth:`GateRunner.end_orphaned_jobs`, a lost
    worker's Databricks run), and the write holds the job lock (no local job of the submission
    lives meanwhile, :mod:`contract_gate.work_folders.job_fence`). So a ``failed`` record says
    what the run committed, and nothing commits after it."""
    submission_id = record["submission_id"]
    folder = submission_folder(plan, submission_id)
    ended = runner.end_orphaned_jobs(plan.contract_id, submission_id, folder)
    if ended:
        record["reason"] = "; ".join(filter(None, (record.get("reason"), f"ended {len(ended)} job(s) of the "
                                                   "submission that outlived their task before deciding")))
    with no_job_running(folder):
        if record["outcome"] == "failed":  # a step may fail after its commit: the record says what it committed
            committed, note = decisions.recovery.committed_effects(plan, submission_id, decisions.history_for(plan))
            record.update(committed, reason=f"{record['reason']}; {note}" if note else record["reason"])
        migrated = migration_record(results, submission_id)
        if migrated:  # before the verdict, so the log reads in the order things happened
            decisions.record_decision(plan, {**migrated, **context_fields})
        record.update(contract_version=plan.contract_version, **context_fields)
        return decisions.record_decision(plan, record)


def retry_cap_reached(plan: Plan, decision: dict) -> int | None:
    """The batch's ``runs_per_batch`` when ``decision`` is the failed run that used up the last of
    them, else None. Exactly that run: the watcher and the schedule start no later one, and a run
    someone starts for the batch by hand counts past the cap and alerts as any failed run does."""
    if decision["outcome"] != "failed":
        return None
    allowed = RetryPolicy.of(plan.gate).runs_per_batch
    return allowed if decisions.failed_runs(plan, decision["submission_id"]) == allowed else None


def alert_recorded(plan: Plan, stored: dict, run_id: str) -> tuple[int | None, list[str]]:
    """Alert ``alerts.onRejection`` of ``stored`` when this run recorded it (an earlier try of the
    run included: one killed before it told every notifier, :mod:`contract_gate.notifications.receipts`),
    nobody when an earlier run did; returns (the batch's ``runs_per_batch`` when this failed run
    used up the last of them, what was not delivered)."""
    if stored.get("run_id") != run_id:
        return None, []
    cap = retry_cap_reached(plan, stored)
    report_url = base_url() + report_path(URL_PREFIX, stored["contract_id"], stored["submission_id"],
                                          stored.get("object"))
    receipts = AlertReceipts(submission_folder(plan, stored["submission_id"]), stored)
    failures = alert_rejection(plan, stored, report_url, retry_cap=cap, receipts=receipts)
    return cap, [f"the rejection alert of {stored['submission_id']} was not delivered to "
                 + "; ".join(f"{key} ({error})" for key, error in failures.items())] if failures else []


class GateRecordDecisionOperator(ContractGateBaseOperator):
    """Append the submission's decision record; returns the record (or the existing final one).

    :param task_ids: the gate's task ids by role: ``submission``, ``stage_validate``,
        ``branch``, ``publish``, ``quarantine``, ``split``.
    :param execution_mode, conn_id, runner_options: those of the gate's Spark tasks (see
        :class:`~contract_gate.operators.base.SparkGateOperator`): the runner that ends their jobs
        that outlived their task before the decision is written. (``runner_options`` templated)
    """

    template_fields = (*ContractGateBaseOperator.template_fields, "runner_options")
    ui_color = "#fff4e5"
    operator_extra_links = (GateReportLink(),)  # the submission's report page (contract_gate.pages)

    def __init__(self, *, task_ids: dict[str, str], execution_mode: str | None = None, conn_id: str | None = None,
                 runner_options: dict | None = None, **kwargs) -> None:
        kwargs.setdefault("trigger_rule", "all_done")
        super().__init__(**kwargs)
        self.task_ids = task_ids
        self.execution_mode = execution_mode
        self.conn_id = conn_id
        self.runner_options = runner_options

    def execute(self, context: Context) -> dict[str, Any] | None:
        ti = context["ti"]
        submission = ti.xcom_pull(task_ids=self.task_ids["submission"])
        states = ti.get_task_states(dag_id=ti.dag_id, task_ids=list(self.task_ids.values()),
                                    run_ids=[ti.run_id]).get(ti.run_id, {})
        if not submission and states.get(self.task_ids["submission"]) == "skipped":
            self.log.info("nothing had landed (the submission task was skipped): no submission, nothing recorded")
            return None
        if not submission:
            raise RuntimeError("no submission was resolved (the submission task failed): nothing to record; "
                               "see the submission task's log")
        plan = self.load_plan()
        if submission.get("prior_decision"):
            prior = decisions.final_decision(plan, submission["submission_id"])
            self.log.info("submission %s already has its final decision (%s): nothing recorded",
                          submission["submission_id"], (prior or submission["prior_decision"]).get("outcome"))
            return prior or submission["prior_decision"]
        summary = ti.xcom_pull(task_ids=self.task_ids["stage_validate"])
        results = {step: ti.xcom_pull(task_ids=self.task_ids[step]) for step in ("publish", "quarantine", "split")}
        stopped = ti.xcom_pull(task_ids=self.task_ids["stage_validate"], key=STOPPED_KEY)
        record = verdict(submission, summary, results, states, stopped)
        context_fields = {"contract_id": plan.contract_id, "object": plan.object,
                          "plan_fingerprint": (summary or {}).get("plan_fingerprint") or plan.fingerprint,
                          "dag_id": ti.dag_id, "run_id": ti.run_id, "try_number": ti.try_number}
        stored = write_decision(plan, record, results, context_fields, self.runner(plan))
        if migrated := migration_record(results, record["submission_id"]):
            self.log.info("%s", migrated["reason"])
        if stored.get("run_id") == ti.run_id:  # recorded by this run, not found from an earlier one
            from contract_gate.freshness.check import age_after_publication  # deltalake: not at DAG parse time

            age = age_after_publication(plan) if stored["outcome"] in decisions.PUBLISHED_OUTCOMES else None
            decision_recorded(plan, stored, record, submission, summary, age)
        self.log.info("decision for %s: %s%s; rules failed: %s", record["submission_id"], stored["outcome"],
                      f" ({record['reason']})" if record["reason"] else "",
                      ", ".join(stored["failed_rules"]) or "none")
        cap, problems = alert_recorded(plan, stored, ti.run_id)
        if stored["outcome"] == "failed":
            problems.insert(0, f"submission {record['submission_id']} failed: {record['reason']}"
                               + (f"; its {cap} runs per batch are used up: it is not gated again by itself"
                                  if cap else ""))
        elif stored["outcome"] in ("quarantined", "split") and plan.alerts.get("failRunOnRejection"):
            problems.insert(0, f"submission {record['submission_id']} was {stored['outcome']} "
                               "(alerts.failRunOnRejection); its decision is recorded")
        if problems:
            # The decision stands: keep it as the task's value (the report link reads it), and
            # fail without retries: a notifier that is down is a person's to fix, and clearing the
            # task then tells the notifiers not told (the receipts), nobody twice.
            ti.xcom_push(key="return_value", value=stored)
            raise AirflowFailException("; ".join(problems))
        return stored

    def runner(self, plan: Plan) -> GateRunner:
        """The runner of the mode the gate's Spark tasks ran in, to end their jobs that outlived
        them (without their storage settings: a run that failed for want of those is recorded all
        the same). A mode whose runner cannot be made (a wrong setting) started no job either, and
        the run is recorded as the local mode's."""
        try:
            mode, conn_id = pick_execution(self.execution_mode, self.conn_id, plan)
            return get_runner(mode, conn_id=conn_id, log=self.log, **(self.runner_options or {}))
        except Exception as exc:  # noqa: BLE001 - whatever the runner's settings broke, the run is recorded
            self.log.warning("no runner of the gate's execution mode (%s): its tasks started no job with these "
                             "settings either", exc)
            return get_runner(None, log=self.log)
