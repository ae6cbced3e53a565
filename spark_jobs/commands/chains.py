"""Gate steps the Airflow side chains into its two Spark jobs per submission (docs/gate-steps.md).

``gate_job.py`` runs ``a+b+c`` as steps of one session sharing ``args.context``; the local
default's two jobs are ``stage+validate[+batch_keys]`` and one of ``publish`` / ``quarantine`` /
``split``. This module adds the steps the chains need that no other module provides:

* ``batch_keys``: in ``append`` mode with a business key, the candidate's keys that the target
  already holds fail ``key.unique_across_batches``, added to the report as a *batch* verdict
  (dataset scope: which of two batches is wrong is unknown), so the branch quarantines the
  batch instead of a publish failing half-way through;
* ``split``: publish the valid rows and quarantine the invalid ones of the same version.

Exit 0 when the steps completed, whatever the data said.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from spark_jobs.commands._step_io import add_candidate_arguments, candidate_and_target, read_report, write_result


def register(subparsers: argparse._SubParsersAction) -> None:
    keys = subparsers.add_parser("batch_keys", help="fail the report when the target already holds candidate keys")
    keys.add_argument("--plan", required=True, type=Path)
    keys.add_argument("--submission-id", required=True)
    keys.add_argument("--report", required=True, type=Path, help="the report to complete (rewritten)")
    keys.set_defaults(func=batch_keys, tables_read=_target_of_append)
    split = subparsers.add_parser("split", help="publish the valid rows, quarantine the invalid ones")
    add_candidate_arguments(split)
    split.set_defaults(func=split_rows, tables_read=candidate_and_target)


def batch_keys(args: argparse.Namespace) -> int:
    from contract_plan.document import load_plan
    from spark_jobs.steps.publish import keys_across_batches, read_pinned
    from spark_jobs.validation.report import write_report
    from spark_jobs.runtime.session import get_session

    plan = load_plan(args.plan)
    report = read_report(args.report)
    if not _checks_keys_across_batches(plan) or not report["schema"]["ok"]:
        return 0
    spark = get_session()
    staged = getattr(args, "context", {}).get("stage") or {}
    candidate = staged.get("candidate") or report["candidate"]["table"]
    df = read_pinned(spark, plan, candidate, report["candidate"]["version"])
    add_batch_rule(report, keys_across_batches(spark, plan, df, args.submission_id))
    write_report(report, args.report)
    return 0


def _checks_keys_across_batches(plan: dict[str, Any]) -> bool:
    """Only ``append`` with a business key can duplicate keys across batches."""
    from spark_jobs.steps.publish import publication_mode

    return publication_mode(plan) == "append" and bool(plan["key"])


def _target_of_append(args: argparse.Namespace) -> list[tuple[Any, int | None]]:
    from contract_plan.document import load_plan

    plan = load_plan(args.plan)
    return [(plan["tables"]["target"], None)] if _checks_keys_across_batches(plan) else []


def add_batch_rule(report: dict[str, Any], entry: dict[str, Any]) -> None:
    """Append a batch-level verdict to the report (a failed error rule fails the outcome)."""
    entry = {**entry, "scope": "dataset", "evaluated_rows": report["candidate"]["row_count"],
             "measured": entry["failed_rows"], "reason": None}
    report["rules"].append(entry)
    if not entry["passed"]:
        report["outcome"] = "fail"


def split_rows(args: argparse.Namespace) -> int:
    """Publish first: a retry after a crash between the two finds the publish done (Delta's
    idempotent write) and completes the quarantine."""
    from contract_plan.document import load_plan
    from spark_jobs.steps.publish import publish
    from spark_jobs.steps.quarantine import quarantine
    from spark_jobs.runtime.session import get_session

    spark, plan, report = get_session(), load_plan(args.plan), read_report(args.report)
    published = publish(spark, plan, args.submission_id, args.candidate, args.version, "valid", report)
    result: dict[str, Any] = {"publish": published}
    if published["status"] != "rejected":
        result["quarantine"] = quarantine(spark, plan, args.submission_id, args.candidate, args.version, report,
                                          "invalid")
    return write_result(args.result, result)
