"""Stage: freeze the landed batch as the immutable candidate every later step reads.

A file landing is copied once into a restricted candidate Delta table named after the
submission (written with ``errorifexists``: a retry finds the first attempt's table); a Delta
landing is pinned at its current version instead. The candidate's address and version are
pushed, so validation and publication read exactly that snapshot.

The generated DAGs stage and validate in one Spark job (``GateValidateOperator(stage=True)``);
this operator is for DAGs that want the steps as separate tasks.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from contract_gate.operators.base import SparkGateOperator
from contract_gate.runners import GateJob

if TYPE_CHECKING:
    from airflow.sdk import Context


class GateStageOperator(SparkGateOperator):
    """Stage the submission's landing. Pushes ``{candidate: Address, version, row_count, status}``.

    The landing and the submission id come from ``submission`` (the submission task's XCom).
    """

    def build_job(self, context: Context, plan: dict) -> GateJob:
        submission = self.submission or {}
        self.check_fingerprint(plan, submission, "the submission was resolved")
        self.submission_id = self.submission_id or submission.get("submission_id")
        folder = self.workdir(plan)
        landing = submission.get("landing")
        arguments: dict[str, Any] = {
            "--plan": self.write_plan(plan, folder),
            "--submission-id": self.submission_id,
            "--landing": json.dumps(landing, sort_keys=True) if landing else None,
        }
        return GateJob("stage", arguments, folder,
                       name=f"contract-gate {plan['contract']['id']} stage {self.submission_id}")

    def handle_result(self, context: Context, plan: dict, staged: dict) -> dict:
        self.log.info("candidate of %s: %s version %s, %s rows (%s)", self.submission_id,
                      staged["candidate"].get("path") or staged["candidate"].get("name"), staged["version"],
                      staged["row_count"], staged["status"])
        return staged
