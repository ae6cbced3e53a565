"""Publish one submission and record its decision — the unit the fault-injection trials kill.

Run as a script it is the child process of a trial: its own Python and its own Spark JVM, so
``kill -9`` of its process group is a real crash of the publishing process. The named fault
points are where a trial may kill it (``CONTRACT_GATE_FAULT``):

* ``before_publish`` / ``after_publish``: write a flag file and wait to be killed (right before
  the commit; right after the commit and before the record);
* ``during_publish`` / ``during_record``: write a flag file and carry on: the trial kills the
  process a random moment later, inside the MERGE or inside the decision write.

The trials (``_fault_trials.py``) import ``publish_and_record`` for the retry too, so the retry
is the same code.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

FAULT_ENV = "CONTRACT_GATE_FAULT"
POINTS = ("before_publish", "during_publish", "after_publish", "during_record")
PAUSES = ("before_publish", "after_publish")


def fault_hook(flags: Path) -> Callable[[str], None]:
    """The hook for this process: acts only at the point named in ``CONTRACT_GATE_FAULT``."""
    wanted = os.environ.get(FAULT_ENV)

    def hook(point: str) -> None:
        if point != wanted:
            return
        (flags / point).write_text(str(os.getpid()), encoding="utf-8")
        while point in PAUSES:  # until the SIGKILL (no handler: pause() never returns for it)
            signal.pause()

    return hook


def publish_and_record(spark, plan: dict[str, Any], submission_id: str, candidate: dict[str, Any],
                       version: int, run_id: str, hook: Callable[[str], None] = lambda point: None) -> dict:
    """What the gate's publish (or split) and record tasks do for one submission, in one
    process. A ``split_rows`` contract publishes the valid rows and then quarantines the
    invalid ones, so there ``after_publish`` is the moment between the two halves."""
    from contract_gate import decisions
    from contract_gate_plan.model import load_plan
    from contract_gate_spark.steps.publish import publish
    from contract_gate_spark.steps.quarantine import quarantine

    split = plan["gate"]["violations"]["policy"] == "split_rows"
    hook("before_publish")
    hook("during_publish")
    published = publish(spark, plan, submission_id, candidate, version, "valid" if split else "all")
    hook("after_publish")
    quarantined = quarantine(spark, plan, submission_id, candidate, version, None, "invalid") if split else None
    hook("during_record")
    return decisions.record_decision(load_plan(plan), {
        "submission_id": submission_id,
        "contract_id": plan["contract"]["id"],
        "contract_version": plan["contract"]["version"],
        "plan_fingerprint": plan["fingerprint"],
        "outcome": "split" if split else "published",
        "candidate": {"candidate": candidate, "version": version},
        "rows_published": published["rows"],
        "rows_quarantined": quarantined["rows"] if quarantined else 0,
        "target_version_before": published["target_version_before"],
        "target_version_after": published["target_version_after"],
        "latest_business_date": published["latest_business_date"],
        "run_id": run_id,
    })


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", required=True, type=Path)
    parser.add_argument("--submission-id", required=True)
    parser.add_argument("--candidate", required=True, type=json.loads)
    parser.add_argument("--version", required=True, type=int)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--flags", required=True, type=Path, help="folder for fault-point flag files")
    args = parser.parse_args(argv)

    from contract_gate_plan.document import read_document
    from contract_gate_spark.runtime.session import get_session

    spark = get_session("contract-gate-fault-trial", {
        "spark.master": "local[2]", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    decision = publish_and_record(spark, read_document(args.plan), args.submission_id, args.candidate,
                                  args.version, args.run_id, fault_hook(args.flags))
    print(json.dumps(decision))
    return 0


if __name__ == "__main__":
    sys.exit(main())
