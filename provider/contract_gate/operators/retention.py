"""Apply a contract's retention: drop candidates older than ``retention.candidateDays`` and
delete (then vacuum) quarantined rows older than ``retention.quarantineDays``
(``contract_gate_spark.steps.retention``). Candidates and quarantined rows hold data consumers must not see,
possibly classified, so they are kept no longer than the contract says.

Then, without Spark, the upkeep of the shared decision table for this contract
(:func:`contract_gate.decisions.upkeep_decisions`): its small files are compacted, a checkpoint
is written and log entries older than the table's retention window are deleted, so reading and
recording decisions stays fast and ``_delta_log`` stays bounded after a year of gating. Last, the
gate's work folders unchanged for ``[contract_gate] work_dir_days`` are removed
(:mod:`contract_gate.work_folders`), so a year of runs does not fill the worker's disk, and so are
the run folders the execution mode keeps elsewhere (a failed Databricks run's, in the volume)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

from contract_gate import decisions
from contract_gate.operators.base import SparkGateOperator
from contract_gate.runners import GateJob, GateRunner
from contract_gate.work_folders import prune_work_folders, unchanged_since

if TYPE_CHECKING:
    from airflow.sdk import Context

    from contract_gate_plan.model import Plan


def prune_run_folders(plan: Plan, runner: GateRunner, now: datetime | None = None) -> dict[str, list[str]]:
    """Remove the run folders of ``plan``'s gate unchanged for ``[contract_gate] work_dir_days``
    before ``now``: the local work folders, and those ``runner``'s mode keeps elsewhere."""
    since = unchanged_since(now)
    return {"work_folders_removed": prune_work_folders(plan, now=now),
            "remote_folders_removed": [] if since is None else runner.prune_remote_folders(plan.names.gate, since)}


class GateRetentionOperator(SparkGateOperator):
    """Run the ``cleanup`` gate job for one contract through its execution mode.

    Pushes ``{"candidates_dropped": [locations], "quarantine_rows_deleted": n, "decisions": {...},
    "work_folders_removed": [submission ids], "remote_folders_removed": [submission ids]}``
    (``decisions``: what the decision table's upkeep did; ``remote_folders_removed``: the run folders
    the ``databricks`` mode kept in its volume, :meth:`~contract_gate.runners.GateRunner.prune_remote_folders`).

    :param contract: path of the ODCS contract file. (templated)
    """

    def build_job(self, context: Context, plan: Plan) -> GateJob:
        # The work folder is per run, not per submission: retention concerns none in particular.
        self.submission_id = re.sub(r"[^A-Za-z0-9_.-]", "_", f"retention-{context['run_id']}")[:128]
        folder = self.workdir(plan)
        return GateJob("cleanup", {"--plan": self.write_plan(plan, folder)}, folder,
                       name=f"contract-gate {plan.contract_id} retention")

    def handle_result(self, context: Context, plan: Plan, result: dict) -> dict:
        result = {**result, "decisions": decisions.upkeep_decisions(plan),
                  **prune_run_folders(plan, self.make_runner(plan))}
        self.log.info("decision table upkeep for %s: %s", plan.contract_id, result["decisions"])
        self.log.info("%d work folder(s) and %d remote run folder(s) of %s removed (unchanged for "
                      "[contract_gate] work_dir_days)", len(result["work_folders_removed"]),
                      len(result["remote_folders_removed"]), plan.names.gate)
        self.log.info("retention of %s: %d candidate(s) dropped, %d quarantined row(s) deleted",
                      plan.contract_id, len(result["candidates_dropped"]), result["quarantine_rows_deleted"])
        return result
