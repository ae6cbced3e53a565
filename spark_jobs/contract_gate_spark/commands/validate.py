"""``gate_job.py validate``: validate one candidate against a compiled plan, write the report.

Exit 0 whenever the validation completed, whatever the outcome: the outcome is in the
report, and the orchestrator must be able to tell bad data (a report saying ``fail``) from a
crashed job (a non-zero exit). A validation stopped by its time budget, or cancelled from
outside (its task was killed), writes no report but a stop record beside it
(``contract_gate_plan.limits``: what was running, which limit) and fails: a stopped validation has
no verdict, and no later step can find one on disk.

In a chain (``stage+validate``) ``--candidate`` may be left out: the candidate is then the
one the stage step left in ``args.context["stage"]`` (its result JSON, docs/gate-steps.md:
``{"candidate": Address, "version": N, ...}``). The report is left in
``args.context["validate"]`` for the steps after it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from contract_gate_plan.addresses import Address
from contract_gate_plan.limits import clear_stop, write_stop
from contract_gate_spark.commands._step_io import plan_of
from contract_gate_spark.runtime.budget import StepStopped

from contract_gate_spark.validation.candidate import FORMATS, read_candidate
from contract_gate_spark.validation.engine import DEPTHS, run_validation
from contract_gate_spark.validation.report import log_summary, write_report
from contract_gate_spark.runtime.session import get_session


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("validate", help="validate a candidate against a plan")
    parser.add_argument("--plan", required=True, type=Path, help="ValidationPlan JSON file")
    parser.add_argument("--candidate", help="table name or path (default: the staged candidate)")
    parser.add_argument("--format", default="delta", choices=FORMATS)
    parser.add_argument("--version", type=int, help="Delta version to read (default: latest, pinned)")
    parser.add_argument("--report", required=True, type=Path, help="where to write the report JSON")
    parser.add_argument("--submission-id", help="recorded in the report")
    parser.add_argument("--depth", default="all", choices=DEPTHS)
    parser.add_argument("--sample", type=int, default=0, help="failing values to sample per rule")
    parser.add_argument("--history", type=Path,
                        help="JSON file: the last accepted batches' measures of each history rule (the gate's)")
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="reader option"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    source, format, version = _source(args)
    plan = plan_of(args)
    spark = get_session()
    candidate = read_candidate(
        spark,
        source,
        format=format,
        version=version,
        options=dict(option.split("=", 1) for option in args.option),
        columns=plan.columns,
    )
    clear_stop(args.report.parent)
    try:
        report = run_validation(
            spark,
            plan,
            candidate,
            depth=args.depth,
            submission_id=args.submission_id,
            sample_size=args.sample,
            history=_history(args.history),
        )
    except StepStopped as exc:
        write_stop(args.report.parent, exc.stop)
        raise
    write_report(report, args.report)
    log_summary(report)
    args.context["validate"] = report
    return 0


def _history(path: Path | None) -> dict[str, list[dict]] | None:
    """The accepted batches the gate read from its decision log (``validation.history_rules``)."""
    if path is None:
        return None
    history = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(history, dict) or not all(isinstance(batches, list) for batches in history.values()):
        raise ValueError(f"{path}: the history is a JSON object of rule ids to lists of accepted batches")
    return history


def _source(args: argparse.Namespace) -> tuple[str, str, int | None]:
    """(source, format, version): from the command line, else from the stage step's result."""
    if args.candidate:
        return args.candidate, args.format, args.version
    staged = args.context.get("stage")
    if not staged:
        raise ValueError("validate needs --candidate (or a stage step before it in the chain)")
    address = Address.of(staged["candidate"])
    return address.location, address.format, staged["version"]
