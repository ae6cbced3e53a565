"""``gate_job.py publish``: the validated candidate version into the target (``contract_gate_spark.steps.publish``).

Exit 0 also when the result is ``rejected`` (the target took some keys since validation):
that is a verdict on the data, written in the result, not a failure of the step.
"""

from __future__ import annotations

import argparse

from contract_gate_spark.commands._step_io import add_candidate_arguments, candidate_and_target, read_report, write_result, plan_of
from contract_gate_spark.runtime.session import get_session
from contract_gate_spark.steps.publish import publish


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("publish", help="publish the validated candidate version")
    add_candidate_arguments(parser)
    parser.add_argument("--rows", choices=("all", "valid"), default="all",
                        help="all rows, or only those without error-level failures")
    parser.set_defaults(func=run, tables_read=candidate_and_target)


def run(args: argparse.Namespace) -> int:
    result = publish(get_session(), plan_of(args), args.submission_id, args.candidate,
                     args.version, args.rows, read_report(args.report))
    args.context["publish"] = result
    return write_result(args.result, result)
