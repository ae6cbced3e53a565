"""Validate a candidate against the contract with one Spark job; optionally stage it first in
the same job (``stage+validate+batch_keys``), which saves a JVM start per submission. Either way
the job ends with ``batch_keys``, which judges the plan's ``key.unique_across_batches`` rule
against the target (a no-op when the plan has none).

The full report stays on disk (its path is in the XCom); the XCom carries only what later
tasks branch and record on: counts, rule ids and the candidate version. Never data values:
XComs are readable by anyone who can see the DAG.

A validation stopped by its time budget (``contract_gate_plan.limits``), or by a kill of the task,
leaves a stop record instead of a report: the task then fails without a retry (the same
contract on the same batch would run out again; a killed task was meant to end), and pushes the
stop under ``stopped`` for the decision's reason. A stopped validation never hands on a summary,
so nothing downstream can judge the batch by it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contract_gate import decisions
from contract_gate.airflow_compat import AirflowFailException, AirflowSkipException
from contract_gate.decisions.batch_history import accepted_history, null_counts

from contract_gate.lineage import GateLineageMixin, validation_lineage
from contract_gate.operators.base import SparkGateOperator
from contract_gate.pages.links import GateReportLink
from contract_gate.runners import GateJob, GateJobError, run_name
from contract_gate_plan.addresses import Address
from contract_gate_plan.limits import clear_stop, read_stop
from contract_gate_plan.restricted import write_private_text
from contract_gate_plan.states import RuleStatus

STOPPED_KEY = "stopped"
# What a run that an engine ends from outside (Databricks) may take besides the validation
# budget: the cluster's start and the stage step, which no contract query is part of.
START_AND_STAGE_SECONDS = 1800

if TYPE_CHECKING:
    from airflow.sdk import Context

    from contract_gate_plan.model import Plan


def summarize(report: dict, report_path: Path, candidate: dict) -> dict[str, Any]:
    """The XCom summary of a report: counts and rule ids only."""
    return {
        "submission_id": report["submission_id"],
        "contract": report["contract"],
        "plan_fingerprint": report["plan_fingerprint"],
        "outcome": report["outcome"],
        "candidate": candidate,
        "rows": report["rows"],
        "schema_ok": report["schema"]["ok"],
        # each foreign key's referenced target and the version read, for the decision record
        "references": {rule["id"]: rule["reference"] for rule in report["rules"] if rule.get("reference")},
        # each history rule's verdict (median, factor, accepted batches), for the decision record
        "history": {rule["id"]: {**rule["history"], "passed": rule["passed"], "reason": rule["reason"]}
                    for rule in report["rules"] if rule.get("history")},
        "failing_rules": [
            {"id": rule["id"], "scope": rule["scope"], "severity": rule["severity"],
             "status": rule["status"], "failed_rows": rule["failed_rows"], "measured": rule["measured"]}
            for rule in report["rules"]
            if rule["passed"] is False or rule["status"] not in (RuleStatus.EVALUATED, RuleStatus.NOT_EXECUTED)
        ],
        "report_path": str(report_path),
    }


class GateValidateOperator(GateLineageMixin, SparkGateOperator):
    """Validate the submission's candidate; with ``stage=True`` freeze the landing first, in the same job.

    Pushes the summary (see :func:`summarize`); the report JSON is written to
    ``<work dir>/<contract id>/<submission id>/report.json``.

    :param candidate: a candidate staged before (``{candidate, version}`` as the Spark side's ``stage`` step
        returns it); not used with ``stage=True``, which the gate's task group uses. (templated)
    :param stage: stage the landed batch and validate it in one Spark job.
    """

    template_fields = (*SparkGateOperator.template_fields, "candidate")
    operator_extra_links = (GateReportLink(),)  # the submission's report page (contract_gate.pages)

    def __init__(self, *, candidate: dict | None = None, stage: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.candidate = candidate
        self.stage = stage
        self._folder: Path | None = None
        self._resumed = False

    def lineage_of(self, plan: Plan, result: dict | None):
        """OpenLineage: the landing in, the staged candidate out (``contract_gate.lineage``)."""
        return validation_lineage(plan, self.submission, result)

    def execute(self, context: Context) -> Any:
        submission = self.submission or {}
        if submission.get("prior_decision"):
            prior = submission["prior_decision"]
            raise AirflowSkipException(f"submission {prior['submission_id']} was already gated ({prior['outcome']})")
        with self.stop_reported(context):
            return super().execute(context)

    def execute_complete(self, context: Context, event: dict) -> Any:
        self._resumed = True  # the job ran: its stop record, if any, is this attempt's
        with self.stop_reported(context):
            return super().execute_complete(context, event)

    @contextmanager
    def stop_reported(self, context: Context) -> Iterator[None]:
        """A job that failed because a time budget ran out fails the task with the stop's words,
        for good (no retry), and pushes the stop (``STOPPED_KEY``) for the decision record."""
        try:
            yield
        except GateJobError as exc:
            stop = read_stop(self._folder) if self._folder is not None else None
            if stop is None:
                raise
            context["ti"].xcom_push(key=STOPPED_KEY, value=asdict(stop))
            raise AirflowFailException(f"submission {self.submission_id}: {stop.describe()}") from exc

    def build_job(self, context: Context, plan: Plan) -> GateJob:
        self.check_fingerprint(plan, self.submission, "the submission was resolved")
        self.submission_id = self.submission_id or (self.submission or {}).get("submission_id")
        folder = self._folder = self.workdir(plan)
        if not self._resumed:
            clear_stop(folder)  # an earlier attempt's
        arguments: dict[str, Any] = {"--plan": self.write_plan(plan, folder), "--submission-id": self.submission_id,
                                     "--report": folder / "report.json", "--history": self.write_history(plan, folder)}
        if self.stage:
            landing = (self.submission or {}).get("landing")
            if landing:
                arguments["--landing"] = json.dumps(landing, sort_keys=True)
            steps = "stage+validate+batch_keys"
        else:
            candidate = self.given_candidate()
            arguments["--candidate"] = Address.of(candidate["candidate"]).location
            arguments["--format"] = "delta"
            arguments["--version"] = candidate["version"]
            steps = "validate+batch_keys"
        return GateJob(steps, arguments, folder, writes_result=self.stage,
                       name=run_name(plan.contract_id, steps, str(self.submission_id)),
                       time_limit=plan.limits.validation_seconds + START_AND_STAGE_SECONDS)

    @staticmethod
    def write_history(plan: Plan, folder: Path) -> Path | None:
        """The last accepted batches' measures for the plan's history rules, read from the decision
        log now, before the job starts (``contract_gate.decisions.batch_history``); None without one."""
        history = accepted_history(plan, decisions.store_for(plan))
        if history is None:
            return None
        path = folder / "history.json"
        write_private_text(path, json.dumps(history, sort_keys=True))
        return path

    def given_candidate(self) -> dict:
        """The candidate staged before, without ``stage=True``."""
        if not self.candidate:
            raise ValueError("no candidate to validate: pass the stage task's output, or stage=True")
        return self.candidate

    def handle_result(self, context: Context, plan: Plan, result: dict) -> dict[str, Any]:
        report_path = self.workdir(plan) / "report.json"
        report = json.loads(report_path.read_text(encoding="utf-8"))
        candidate = result if self.stage else self.given_candidate()
        summary = summarize(report, report_path, candidate)
        summary["null_counts"] = null_counts(plan, report["rules"])  # the next batches' history
        failing = ", ".join(f"{r['id']} ({r['failed_rows'] if r['failed_rows'] is not None else r['measured']})"
                            for r in summary["failing_rules"]) or "none"
        self.log.info("validation of %s: %s; rows valid=%s invalid=%s; failing rules: %s",
                      self.submission_id, summary["outcome"], summary["rows"]["valid"], summary["rows"]["invalid"],
                      failing)
        return summary
