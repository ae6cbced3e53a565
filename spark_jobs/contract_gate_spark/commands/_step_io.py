"""Arguments and result files shared by the stage / publish / quarantine / cleanup sub-commands.

Every step reads ``--plan`` and writes its result JSON to ``--result`` (docs/gate-steps.md);
steps that act on the validated candidate also take ``--candidate`` (address JSON, or a path or
table name), ``--version`` (the validated Delta version) and ``--report`` (the validation
report, which vouches for that version).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from contract_gate_plan.model import Plan, load_plan
from contract_gate_plan.restricted import write_private_text


def plan_of(args: argparse.Namespace) -> Plan:
    """The job's plan, read and checked once however many steps are chained (every step of a
    chain parses the same ``--plan``); kept in the chain's shared ``args.context``."""
    context = getattr(args, "context", None)
    if context is None:
        return load_plan(args.plan)
    if "plan" not in context:
        context["plan"] = load_plan(args.plan)
    return context["plan"]


def address_argument(text: str) -> dict[str, Any] | str:
    """An address as JSON (what the operators pass), or a path / table name as typed."""
    return json.loads(text) if text.lstrip().startswith("{") else text


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plan", required=True, type=Path, help="ValidationPlan JSON file")
    parser.add_argument("--submission-id", required=True)
    parser.add_argument("--result", type=Path, help="where to write the step's result JSON")


def add_candidate_arguments(parser: argparse.ArgumentParser) -> None:
    add_plan_arguments(parser)
    parser.add_argument("--candidate", required=True, type=address_argument,
                        help="candidate address JSON, or a path / table name")
    parser.add_argument("--version", required=True, type=int, help="the validated Delta version")
    parser.add_argument("--report", required=True, type=Path, help="the validation report JSON")


def candidate_and_target(args: argparse.Namespace) -> list[tuple[Any, int | None]]:
    """``tables_read`` of a step that publishes: the target's latest version (its MERGE reads that
    first), and the candidate at its version."""
    return [(plan_of(args).require_tables().target, None), (args.candidate, args.version)]


def read_report(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def write_result(path: Path | None, result: dict[str, Any]) -> int:
    if path is not None:
        # owner-only whatever the process's umask (the spark_connect runner runs steps in the worker's)
        write_private_text(path, json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
    return 0
