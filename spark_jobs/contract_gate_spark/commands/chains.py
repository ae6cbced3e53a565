"""Gate steps the Airflow side chains into its two Spark jobs per submission (docs/gate-steps.md).

``gate_job.py`` runs ``a+b+c`` as steps of one session sharing ``args.context``; the local
default's two jobs are ``stage+validate[+batch_keys]`` and one of ``publish`` / ``quarantine`` /
``split``. This module adds the steps the chains need that no other module provides:

* ``batch_keys``: measures the plan's ``key.unique_across_batches`` rule (compiled for
  ``append`` with a business key; the validation engine leaves it ``not_executed``): the
  candidate rows whose key the target already holds. It fills that rule's report entry, a
  *batch* verdict (scope ``target``: which of two batches is wrong is unknown), so the branch
  quarantines the batch instead of a publish failing half-way through. In a chain after
  ``stage`` the count starts beside ``validate`` (its ``ahead``): it reads the target, not the
  report, so the two queries overlap;
* ``split``: publish the valid rows and quarantine the invalid ones of the same version.

Exit 0 when the steps completed, whatever the data said.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contract_gate_plan import keys_across_batches
from contract_gate_plan.addresses import Address
from contract_gate_spark.commands._step_io import add_candidate_arguments, candidate_and_target, read_report, write_result, plan_of
from contract_gate_spark.runtime.session import get_session
from contract_gate_spark.runtime.side_by_side import side_by_side
from contract_gate_spark.steps import publish
from contract_gate_spark.steps.quarantine import prepare_quarantine, quarantine
from contract_gate_spark.validation.report import Measurement, fill_measured, write_report
from contract_gate_spark.validation.schema_compare import check_schema

if TYPE_CHECKING:
    from contract_gate_plan.model import Plan, Rule


def register(subparsers: argparse._SubParsersAction) -> None:
    keys = subparsers.add_parser("batch_keys", help="judge the plan's key.unique_across_batches rule against the target")
    keys.add_argument("--plan", required=True, type=Path)
    keys.add_argument("--submission-id", required=True)
    keys.add_argument("--report", required=True, type=Path, help="the report to complete (rewritten)")
    keys.set_defaults(func=batch_keys, tables_read=_target_of_append, ahead=_count_ahead)
    split = subparsers.add_parser("split", help="publish the valid rows, quarantine the invalid ones")
    add_candidate_arguments(split)
    split.set_defaults(func=split_rows, tables_read=candidate_and_target)


def batch_keys(args: argparse.Namespace) -> int:
    plan = plan_of(args)
    report = read_report(args.report)
    rule = _across_batches_rule(plan)
    if rule is None or not report["schema"]["ok"]:  # a failed schema check already fails the batch
        return 0
    if report["plan_fingerprint"] != plan.fingerprint:
        raise ValueError(f"the report was made with plan {report['plan_fingerprint']}, not {plan.fingerprint}")
    staged = getattr(args, "context", {}).get("stage") or {}
    candidate = staged.get("candidate") or report["candidate"]["table"]
    version = report["candidate"]["version"]
    counted = getattr(args, "counted_ahead", None)
    held = counted[1].result() if counted is not None and counted[0] == (candidate, version) else None
    if held is None:  # not counted ahead (or there the schema looked wrong, which the report denies)
        spark = get_session()
        pinned = publish.read_pinned(spark, plan, Address.of(candidate), version)
        held = publish.keys_across_batches(spark, plan, pinned, args.submission_id)
    fill_measured(report, rule, Measurement(failed_rows=held, evaluated_rows=report["candidate"]["row_count"]))
    write_report(report, args.report)
    return 0


def _count_ahead(args: argparse.Namespace) -> None:
    """``batch_keys``'s early start: once ``stage`` has left the candidate, count its keys that the
    target holds beside ``validate``. Not when the candidate lacks the contract's schema: the
    report will fail the batch on that, and the count would read columns that may be missing."""
    plan = plan_of(args)
    staged = args.context.get("stage")
    if staged is None or _across_batches_rule(plan) is None:
        return
    spark = get_session()

    def count() -> int | None:  # all on the second thread: even the schema is a round trip over Connect
        df = publish.read_pinned(spark, plan, Address.of(staged["candidate"]), staged["version"])
        if not check_schema(plan, df.schema).ok:
            return None
        return publish.keys_across_batches(spark, plan, df, args.submission_id)

    args.counted_ahead = ((staged["candidate"], staged["version"]), side_by_side(count, "batch-keys"))


def _across_batches_rule(plan: Plan) -> Rule | None:
    """The plan's cross-batch key rule, or None: the compiler writes it only for ``append`` with a
    business key, the one publication that can duplicate keys across batches."""
    return next((rule for rule in plan.rules if rule.kind == keys_across_batches.KIND), None)


def _target_of_append(args: argparse.Namespace) -> list[tuple[Any, int | None]]:

    plan = plan_of(args)
    return [(plan.require_tables().target, None)] if _across_batches_rule(plan) is not None else []


def split_rows(args: argparse.Namespace) -> int:
    """Both tables are made ready before either commit (the target migrated, the quarantine
    created and given the contract version's columns), so only a crash or a lost connection
    can stop a split between its two commits. Publish first: a retry after a crash between
    the two finds the publish done (Delta's idempotent write) and completes the quarantine."""
    spark, plan, report = get_session(), plan_of(args), read_report(args.report)
    prepare_quarantine(spark, plan)
    published = publish.publish(spark, plan, args.submission_id, args.candidate, args.version, "valid", report)
    result: dict[str, Any] = {"publish": published}
    if published["status"] != "rejected":
        result["quarantine"] = quarantine(spark, plan, args.submission_id, args.candidate, args.version, report,
                                          "invalid")
    return write_result(args.result, result)
