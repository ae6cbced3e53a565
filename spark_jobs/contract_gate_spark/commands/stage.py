"""``gate_job.py stage``: freeze the landing as the candidate (``contract_gate_spark.steps.stage``).

Leaves its result in ``args.context["stage"]`` so a chained ``validate`` reads that candidate.
"""

from __future__ import annotations

import argparse

from contract_gate_spark.commands._step_io import add_plan_arguments, address_argument, write_result, plan_of
from contract_gate_spark.runtime.session import get_session
from contract_gate_spark.steps.stage import stage_candidate


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("stage", help="freeze the landing as the candidate")
    add_plan_arguments(parser)
    parser.add_argument("--landing", type=address_argument,
                        help="landing address JSON or path (default: the plan's landing)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    staged = stage_candidate(get_session(), plan_of(args), args.submission_id, args.landing)
    args.context["stage"] = staged
    return write_result(args.result, staged)
