"""Run as a child process of the walk (``gate_walk.GateWorld.step_stop_record``): a run's record
task, as the operator runs it after the run's Spark tasks: the decision written once no job of
the submission can commit (``write_decision``), then the rejection alert (``alert_recorded``),
as the run's first try. The walk kills it at a random moment.

    python _record_run.py <plan.json> <record.json>

``record.json``: the submission, the summary, the step results and task states the run's tasks
left, and the run id.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from contract_gate.operators.record import alert_recorded, verdict, write_decision
from contract_gate.runners import get_runner
from contract_gate_plan.model import Plan, load_plan


def record_inputs(plan: Plan, submission: dict, summary: dict | None, results: dict, states: dict[str, str],
                  run_id: str, try_number: int) -> tuple[dict, dict]:
    """The record task's verdict and its context fields, for a run of the walk (this script's, or in-process)."""
    context_fields = {"contract_id": plan.contract_id, "object": plan.object,
                      "plan_fingerprint": (summary or {}).get("plan_fingerprint") or plan.fingerprint,
                      "dag_id": "walk", "run_id": run_id, "try_number": try_number}
    return verdict(submission, summary, results, states), context_fields


def main(plan_file: Path, inputs_file: Path) -> int:
    plan = load_plan(plan_file)
    inputs = json.loads(inputs_file.read_text(encoding="utf-8"))
    record, context_fields = record_inputs(plan, inputs["submission"], inputs["summary"], inputs["results"],
                                           inputs["states"], inputs["run_id"], try_number=1)
    stored = write_decision(plan, record, inputs["results"], context_fields, get_runner("local"))
    _, undelivered = alert_recorded(plan, stored, inputs["run_id"])
    return 1 if undelivered else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
