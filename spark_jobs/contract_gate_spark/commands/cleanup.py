"""``gate_job.py cleanup``: apply the contract's retention (``contract_gate_spark.steps.retention``): drop
candidates older than ``candidateDays``, delete quarantined rows older than ``quarantineDays``."""

from __future__ import annotations

import argparse
from pathlib import Path

from contract_gate_spark.commands._step_io import write_result, plan_of
from contract_gate_spark.runtime.session import get_session
from contract_gate_spark.steps.retention import cleanup


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("cleanup", help="drop old candidates and quarantined rows")
    parser.add_argument("--plan", required=True, type=Path, help="ValidationPlan JSON file")
    parser.add_argument("--result", type=Path, help="where to write the result JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return write_result(args.result, cleanup(get_session(), plan_of(args)))
