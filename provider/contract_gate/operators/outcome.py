"""What publish, quarantine and split share: they act on the validated candidate version.

The candidate address and version come from the validation summary, never from the landing
again, so the rows published or quarantined are exactly the snapshot that was judged; the
plan fingerprint is checked against the one validated.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from contract_gate.airflow_compat import AirflowFailException
from contract_gate.lineage import GateLineageMixin, outcome_lineage
from contract_gate.operators.base import SparkGateOperator
from contract_gate.runners import GateJob, run_name

if TYPE_CHECKING:
    from airflow.sdk import Context

    from contract_gate_plan.model import Plan


class CandidateStepOperator(GateLineageMixin, SparkGateOperator):
    """Run one outcome step (``steps``) on the validated candidate.

    :param summary: the validation summary (the validate task's XCom). (templated)
    """

    steps: ClassVar[str]
    template_fields = (*SparkGateOperator.template_fields, "summary")

    def __init__(self, *, summary: dict, **kwargs) -> None:
        super().__init__(**kwargs)
        self.summary = summary

    def lineage_of(self, plan: Plan, result: dict | None):
        """OpenLineage: the validated candidate in, the tables this step writes out (``contract_gate.lineage``)."""
        return outcome_lineage(plan, self.steps, self.summary, result)

    def build_job(self, context: Context, plan: Plan) -> GateJob:
        self.check_fingerprint(plan, self.summary, "the candidate was validated")
        self.submission_id = self.summary["submission_id"]
        folder = self.workdir(plan)
        candidate = self.summary["candidate"]
        arguments: dict[str, Any] = {
            "--plan": self.write_plan(plan, folder),
            "--submission-id": self.submission_id,
            "--candidate": json.dumps(candidate["candidate"], sort_keys=True),
            "--version": candidate["version"],
            "--report": self.summary["report_path"],
        }
        return GateJob(self.steps, arguments, folder,
                       name=run_name(plan.contract_id, self.steps, self.submission_id))

    def handle_result(self, context: Context, plan: Plan, result: dict) -> dict:
        """Push ``{"publish": ..., "quarantine": ...}`` (the steps that ran); a publish that the
        target's key guard rejected (a concurrent batch took the keys after validation) fails
        the task: nothing was written, and a new run judges the batch against the new keys."""
        if self.steps != "split":
            result = {self.steps: result}
        if (result.get("publish") or {}).get("status") == "rejected":
            raise AirflowFailException(
                f"publication of {self.submission_id} rejected: the target took some of its keys after "
                "validation (key.unique_across_batches); nothing was written, re-trigger to re-judge the batch")
        for step in ("publish", "quarantine"):
            if step in result:
                outcome = result[step]
                self.log.info("%s of %s: %s, %s rows (table version %s)", step, self.submission_id,
                              outcome["status"], outcome["rows"],
                              outcome.get("target_version_after", outcome.get("version")))
        return result


class PublishingStepOperator(CandidateStepOperator):
    """An outcome step that may publish: it attaches the publication to the target's Asset event."""

    def handle_result(self, context: Context, plan: Plan, result: dict) -> dict:
        result = super().handle_result(context, plan, result)
        published = result.get("publish") or {}
        if published.get("status") not in ("published", "already_published"):
            # Airflow emits an event for every outlet of a successful task, read from the task
            # at success time: no publication, no outlets, so consumers are not woken for nothing.
            self.outlets = []
            return result
        # already_published (a retry after the commit) still announces the version: the first
        # attempt died before it could, and ``version`` lets consumers ignore a repeat.
        for asset in self.outlets:
            context["outlet_events"][asset].extra = {
                "submission_id": self.submission_id,
                "version": published["target_version_after"],
                "rows": published["rows"],
            }
        return result
