"""Gate steps the Airflow side chains into its two Spark jobs per submission (docs/gate-steps.md).

``gate_job.py`` runs ``a+b+c`` as steps of one session sharing ``args.context``; the local
default's two jobs are ``stage+validate[+batch_keys]`` and one of ``publish`` / ``quarantine`` /
``split``. This module adds the steps the chains need that no other module provides:

* ``batch_keys``: in ``append`` mode with a business key, the candidate's keys that the target
  already holds fail ``key.unique_across_batches``, added to the report as a *batch* verdict
  (dataset scope: which of two batches is wrong is unknown), so the branch quarantines the
  batch instead of a publish failing half-way through;
* ``split``: publish the valid rows and quarantine the invalid ones of the same version;
* ``stage`` / ``publish`` / ``quarantine``, registered here only while ``spark_jobs.commands``
  has no module of that name: one step each, with the result JSON of docs/gate-steps.md.

Exit 0 when the steps completed, whatever the data said.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from typing import Any

OWN_MODULES = {name: f"spark_jobs.commands.{name}" for name in ("stage", "publish", "quarantine")}


def register(subparsers: argparse._SubParsersAction) -> None:
    keys = subparsers.add_parser("batch_keys", help="fail the report when the target already holds candidate keys")
    keys.add_argument("--plan", required=True, type=Path)
    keys.add_argument("--submission-id", required=True)
    keys.add_argument("--report", required=True, type=Path, help="the report to complete (rewritten)")
    keys.set_defaults(func=batch_keys)
    _candidate_parser(subparsers, "split", "publish the valid rows, quarantine the invalid ones").set_defaults(
        func=split_rows)
    if importlib.util.find_spec(OWN_MODULES["stage"]) is None:
        stage = subparsers.add_parser("stage", help="freeze the landing as the candidate")
        stage.add_argument("--plan", required=True, type=Path)
        stage.add_argument("--submission-id", required=True)
        stage.add_argument("--landing", help="landing address JSON or path (default: the plan's)")
        stage.add_argument("--result", type=Path)
        stage.set_defaults(func=stage_only)
    for step, func in (("publish", publish_all), ("quarantine", quarantine_all)):
        if importlib.util.find_spec(OWN_MODULES[step]) is None:
            _candidate_parser(subparsers, step, f"{step} the whole candidate").set_defaults(func=func)


def _candidate_parser(subparsers, name: str, help: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help)
    parser.add_argument("--plan", required=True, type=Path)
    parser.add_argument("--submission-id", required=True)
    parser.add_argument("--candidate", required=True, type=json.loads, help="candidate address JSON")
    parser.add_argument("--version", required=True, type=int)
    parser.add_argument("--report", required=True, type=Path, help="the validation report")
    parser.add_argument("--result", required=True, type=Path)
    return parser


def _write(path: Path | None, result: dict[str, Any]) -> int:
    if path is not None:
        path.write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return 0


def _context(args: argparse.Namespace) -> dict:
    return getattr(args, "context", {})


def stage_only(args: argparse.Namespace) -> int:
    from spark_jobs.plan import load_plan
    from spark_jobs.session import get_session
    from spark_jobs.stage import stage_candidate

    landing = args.landing
    if landing and landing.lstrip().startswith("{"):
        landing = json.loads(landing)
    staged = stage_candidate(get_session(), load_plan(args.plan), args.submission_id, landing)
    _context(args)["stage"] = staged
    return _write(args.result, staged)


def batch_keys(args: argparse.Namespace) -> int:
    from spark_jobs.plan import load_plan
    from spark_jobs.publish import keys_across_batches, publication_mode, read_pinned
    from spark_jobs.report import write_report
    from spark_jobs.session import get_session

    plan = load_plan(args.plan)
    report = json.loads(args.report.read_text(encoding="utf-8"))
    if publication_mode(plan) != "append" or not plan["key"] or not report["schema"]["ok"]:
        return 0
    spark = get_session()
    staged = _context(args).get("stage") or {}
    candidate = staged.get("candidate") or report["candidate"]["table"]
    df = read_pinned(spark, plan, candidate, report["candidate"]["version"])
    add_batch_rule(report, keys_across_batches(spark, plan, df, args.submission_id))
    write_report(report, args.report)
    return 0


def add_batch_rule(report: dict[str, Any], entry: dict[str, Any]) -> None:
    """Append a batch-level verdict to the report (a failed error rule fails the outcome)."""
    entry = {**entry, "scope": "dataset", "evaluated_rows": report["candidate"]["row_count"],
             "measured": entry["failed_rows"], "reason": None}
    report["rules"].append(entry)
    if not entry["passed"]:
        report["outcome"] = "fail"


def _inputs(args: argparse.Namespace):
    from spark_jobs.plan import load_plan
    from spark_jobs.session import get_session

    return get_session(), load_plan(args.plan), json.loads(args.report.read_text(encoding="utf-8"))


def publish_all(args: argparse.Namespace) -> int:
    from spark_jobs.publish import publish

    spark, plan, report = _inputs(args)
    return _write(args.result, publish(spark, plan, args.submission_id, args.candidate, args.version, "all", report))


def quarantine_all(args: argparse.Namespace) -> int:
    from spark_jobs.quarantine import quarantine

    spark, plan, report = _inputs(args)
    return _write(args.result, quarantine(spark, plan, args.submission_id, args.candidate, args.version, report, "all"))


def split_rows(args: argparse.Namespace) -> int:
    """Publish first: a retry after a crash between the two finds the publish done (Delta's
    idempotent write) and completes the quarantine."""
    from spark_jobs.publish import publish
    from spark_jobs.quarantine import quarantine

    spark, plan, report = _inputs(args)
    published = publish(spark, plan, args.submission_id, args.candidate, args.version, "valid", report)
    result: dict[str, Any] = {"publish": published}
    if published["status"] != "rejected":
        result["quarantine"] = quarantine(spark, plan, args.submission_id, args.candidate, args.version, report,
                                          "invalid")
    return _write(args.result, result)
