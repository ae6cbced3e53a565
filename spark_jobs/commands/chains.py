"""Chained gate steps, one Spark session per chain: the local default's JVM budget.

Starting a JVM with Delta costs several seconds, more than validating a small batch, so the
Airflow side runs a submission in two jobs at most (docs/gate-steps.md):

* ``stage+validate``: freeze the landing as the candidate, validate that pinned version, write
  the report. In ``append`` mode with a business key the report also carries
  ``key.unique_across_batches`` (keys the target already holds), judged on the whole batch so
  the branch quarantines it instead of a publish failing half-way through a split;
* ``split``: publish the valid rows and quarantine the invalid ones of the same version;
* ``stage`` / ``publish`` / ``quarantine`` (registered here only while ``spark_jobs.commands``
  has no module of that name): one step. A publish that Delta's key guard rejects (a concurrent
  batch took the keys after validation) quarantines the batch in the same job.

Every chain reads ``--plan`` and writes its result JSON to ``--result``; the candidate is
passed as the stage step's address JSON plus ``--version``. Exit 0 when the steps completed,
whatever the data said.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from typing import Any

STEP_MODULES = {
    "stage": "spark_jobs.commands.stage",
    "publish": "spark_jobs.commands.publish",
    "quarantine": "spark_jobs.commands.quarantine",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    stage_validate = _parser(subparsers, "stage+validate", "stage the landing, then validate the candidate")
    stage_validate.add_argument("--landing", help="landing address JSON or path (default: the plan's)")
    stage_validate.add_argument("--sample", type=int, default=0, help="failing values to sample per rule")
    stage_validate.set_defaults(func=stage_and_validate)
    split = _candidate_parser(subparsers, "split", "publish the valid rows, quarantine the invalid ones")
    split.set_defaults(func=split_rows)
    if importlib.util.find_spec(STEP_MODULES["stage"]) is None:
        stage = subparsers.add_parser("stage", help="freeze the landing as the candidate")
        for option in ("--plan", "--submission-id", "--result"):
            stage.add_argument(option, required=True, type=Path if option != "--submission-id" else str)
        stage.add_argument("--landing", help="landing address JSON or path (default: the plan's)")
        stage.set_defaults(func=stage_only)
    for step, func in (("publish", publish_all), ("quarantine", quarantine_all)):
        if importlib.util.find_spec(STEP_MODULES[step]) is None:
            parser = _candidate_parser(subparsers, step, f"{step} the whole candidate")
            parser.set_defaults(func=func)


def _parser(subparsers, name: str, help: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help)
    parser.add_argument("--plan", required=True, type=Path)
    parser.add_argument("--submission-id", required=True)
    parser.add_argument("--report", required=True, type=Path, help="the validation report (written or read)")
    parser.add_argument("--result", required=True, type=Path)
    return parser


def _candidate_parser(subparsers, name: str, help: str) -> argparse.ArgumentParser:
    parser = _parser(subparsers, name, help)
    parser.add_argument("--candidate", required=True, type=json.loads, help="candidate address JSON")
    parser.add_argument("--version", required=True, type=int)
    return parser


def _landing(text: str | None) -> dict[str, Any] | str | None:
    if text is None:
        return None
    return json.loads(text) if text.lstrip().startswith("{") else text


def _write(path: Path, result: dict[str, Any]) -> int:
    path.write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return 0


def stage_only(args: argparse.Namespace) -> int:
    from spark_jobs.plan import load_plan
    from spark_jobs.session import get_session
    from spark_jobs.stage import stage_candidate

    staged = stage_candidate(get_session(), load_plan(args.plan), args.submission_id, _landing(args.landing))
    return _write(args.result, {"stage": staged})


def stage_and_validate(args: argparse.Namespace) -> int:
    from spark_jobs.address import location, resolve
    from spark_jobs.candidate import Candidate
    from spark_jobs.engine import run_validation
    from spark_jobs.plan import load_plan
    from spark_jobs.publish import keys_across_batches, publication_mode, read_pinned
    from spark_jobs.report import log_summary, write_report
    from spark_jobs.session import get_session
    from spark_jobs.stage import stage_candidate

    plan = load_plan(args.plan)
    spark = get_session()
    staged = stage_candidate(spark, plan, args.submission_id, _landing(args.landing))
    df = read_pinned(spark, plan, staged["candidate"], staged["version"])
    candidate = Candidate(df, location(resolve(staged["candidate"])), staged["version"], "delta")
    report = run_validation(spark, plan, candidate, submission_id=args.submission_id, sample_size=args.sample)
    if publication_mode(plan) == "append" and plan["key"] and report["schema"]["ok"]:
        _add_batch_rule(report, keys_across_batches(spark, plan, df, args.submission_id))
    write_report(report, args.report)
    log_summary(report)
    return _write(args.result, {"stage": staged, "outcome": report["outcome"], "report": str(args.report)})


def _add_batch_rule(report: dict[str, Any], entry: dict[str, Any]) -> None:
    """Append a batch-level rule verdict to the report. Keys colliding with earlier batches
    judge the batch (dataset scope), not rows: which of two batches is wrong is unknown."""
    entry = {**entry, "scope": "dataset", "evaluated_rows": report["candidate"]["row_count"],
             "measured": entry["failed_rows"], "reason": None}
    report["rules"].append(entry)
    if not entry["passed"]:
        report["outcome"] = "fail"


def _inputs(args: argparse.Namespace):
    from spark_jobs.plan import load_plan
    from spark_jobs.session import get_session

    report = json.loads(args.report.read_text(encoding="utf-8"))
    return get_session(), load_plan(args.plan), report


def publish_all(args: argparse.Namespace) -> int:
    from spark_jobs.publish import publish
    from spark_jobs.quarantine import quarantine

    spark, plan, report = _inputs(args)
    published = publish(spark, plan, args.submission_id, args.candidate, args.version, "all", report)
    result: dict[str, Any] = {"publish": published}
    if published["status"] == "rejected":
        for rule in published.get("rules", []):
            _add_batch_rule(report, rule)
        result["quarantine"] = quarantine(spark, plan, args.submission_id, args.candidate, args.version, report, "all")
    return _write(args.result, result)


def quarantine_all(args: argparse.Namespace) -> int:
    from spark_jobs.quarantine import quarantine

    spark, plan, report = _inputs(args)
    result = quarantine(spark, plan, args.submission_id, args.candidate, args.version, report, "all")
    return _write(args.result, {"quarantine": result})


def split_rows(args: argparse.Namespace) -> int:
    from spark_jobs.publish import publish
    from spark_jobs.quarantine import quarantine

    spark, plan, report = _inputs(args)
    published = publish(spark, plan, args.submission_id, args.candidate, args.version, "valid", report)
    result: dict[str, Any] = {"publish": published}
    if published["status"] == "rejected":
        for rule in published.get("rules", []):
            _add_batch_rule(report, rule)
        result["quarantine"] = quarantine(spark, plan, args.submission_id, args.candidate, args.version, report, "all")
    else:
        result["quarantine"] = quarantine(spark, plan, args.submission_id, args.candidate, args.version, report,
                                          "invalid")
    return _write(args.result, result)
