"""``gate_job.py quarantine``: rejected rows into the quarantine table (``contract_gate_spark.steps.quarantine``)."""

from __future__ import annotations

import argparse

from contract_gate_spark.commands._step_io import add_candidate_arguments, read_report, write_result, plan_of
from contract_gate_spark.runtime.session import get_session
from contract_gate_spark.steps.quarantine import quarantine


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("quarantine", help="quarantine the candidate's rejected rows")
    add_candidate_arguments(parser)
    parser.add_argument("--rows", choices=("all", "invalid"), default="all",
                        help="every row (batch rejected), or only the invalid ones (split)")
    parser.set_defaults(func=run, tables_read=lambda args: [(args.candidate, args.version)])


def run(args: argparse.Namespace) -> int:
    result = quarantine(get_session(), plan_of(args), args.submission_id, args.candidate,
                        args.version, read_report(args.report), args.rows)
    args.context["quarantine"] = result
    return write_result(args.result, result)
