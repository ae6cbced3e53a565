"""``contract-gate audit [CONTRACT|FOLDER ...] [--object NAME] [--env NAME] [--repair] [--json]``: does the
decision log agree with the tables?

For every gated object of the contracts given (default: the contracts folder), the decision log is
reconciled with the Delta history of the object's target and quarantine tables and of the target's
migrations, without Spark (``contract_gate.decisions.audit``): a commit without a final decision, a
final decision without its commit, rows that differ, a submission committed twice, a non-final
record left unfinished, a migration without its record, a write the gate did not make.
``--repair`` first records what recovery would (each record once; no gated table is written).
Exit 0 clean, 1 a disagreement (left after ``--repair``), 2 usage error or an unreadable
contract or table.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from pathlib import Path

from contract_gate import config
from contract_gate.cli.options import add_json, print_json, report_error
from contract_gate.contract.compiler import compile_plans
from contract_gate.contract.errors import ContractError
from contract_gate_plan.model import Plan


def register(subparsers) -> None:
    parser = subparsers.add_parser("audit", help="reconcile the decision log with the gated tables' histories (no Spark)")
    parser.add_argument("contracts", nargs="*", type=Path,
                        help=f"contract files or folders (default: {config.describe('contracts_dir')}, "
                             "else $AIRFLOW_HOME/contracts when it exists, else ./contracts)")
    parser.add_argument("--env", help="server name or environment to resolve addresses for")
    parser.add_argument("--object", dest="object_name", metavar="NAME",
                        help="audit only this schema object (default: every gated object)")
    parser.add_argument("--repair", action="store_true",
                        help="first record the decisions recovery would (never rewrites data)")
    parser.add_argument("--settle", type=float, default=600, metavar="SECONDS",
                        help="leave out commits younger than this: their run may still record them (default 600)")
    parser.add_argument("--unfinished-after", type=float, default=24, metavar="HOURS",
                        help="report a submission whose records are all non-final and older than this (default 24)")
    add_json(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from contract_gate.decisions import audit_decisions  # deltalake and pyarrow: `audit --help` starts without them

    try:
        plans = _plans(args.contracts or [config.contracts_dir()], args.env, args.object_name)
    except (ContractError, LookupError) as exc:
        report_error(args, f"contract-gate audit: {exc}")
        return 2
    results = []
    for plan in plans:
        try:
            results.append(audit_decisions(plan, repair=args.repair, settle=timedelta(seconds=args.settle),
                                           unfinished_after=timedelta(hours=args.unfinished_after)))
        except Exception as exc:  # noqa: BLE001 - an unreadable table: say which, exit 2
            report_error(args, f"contract-gate audit: {plan.contract_id} {plan.object}: "
                               f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            return 2
    findings = [finding for result in results for finding in result.findings]
    if args.json:
        print_json({"clean": not findings, "objects": [result.as_dict() for result in results]})
    else:
        for result in results:
            for decision in result.repaired:
                print(f"repaired  {result.contract_id} ({result.object}): recorded {decision.outcome} for "
                      f"{decision.submission_id}")
            state = "clean" if not result.findings else f"{len(result.findings)} disagreement(s)"
            print(f"{result.contract_id} ({result.object}): {result.decisions} final decision(s), "
                  f"{result.commits} tagged commit(s): {state}")
            for finding in result.findings:
                fix = " (--repair records it)" if finding.repairable and not args.repair else ""
                print(f"  {finding.kind}: {finding.message}{fix}")
    return 1 if findings else 0


def _plans(paths: list[Path], env: str | None, object_name: str | None) -> list[Plan]:
    """The gated objects' plans of the contract files and folders ``paths``, in order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted([*path.glob("*.yaml"), *path.glob("*.yml")])
        elif path.is_file():
            files.append(path)
        else:
            raise LookupError(f"no such contract file or folder: {path}")
    plans = [plan for file in files for plan in compile_plans(file, env=env).gated.values()]
    if object_name is not None:
        plans = [plan for plan in plans if plan.object == object_name]
        if not plans:
            raise LookupError(f"no gated schema object {object_name!r} in {', '.join(map(str, paths))}")
    return plans
