"""``contract-gate report <contract> <submission_id> [--object NAME] [--env NAME] [--html out.html]``:
the report of one submission, without Spark and without an Airflow server (``--object``: whose
submission it is, when the contract gates several objects).

With ``--html`` it writes the same report page the Airflow UI serves, as one self-contained file
(inline CSS and SVG, no script) to attach to a ticket or publish; without, it prints the page's
data as JSON. Like the page, it holds no value of a classified column.
Exit 0 written, 1 no such submission, 2 usage error or unreadable contract.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from contract_gate.contract.compiler import compile_plans
from contract_gate.contract.errors import ContractError
from contract_gate_plan.model import Plan


def register(subparsers) -> None:
    parser = subparsers.add_parser("report", help="the report page of one submission (no Spark)")
    parser.add_argument("contract", type=Path, help="the contract file")
    parser.add_argument("submission_id", help="the submission to report on")
    parser.add_argument("--env", help="server name or environment to resolve addresses for")
    parser.add_argument("--object", dest="object_name", metavar="NAME",
                        help="the schema object (default: the contract's only gated object)")
    parser.add_argument("--html", type=Path, metavar="FILE", help="write the report page to FILE")
    parser.set_defaults(func=run)


def run(args) -> int:
    from contract_gate.pages import build, data  # deltalake and pyarrow: `report --help` starts without them

    try:
        entry = data.ContractEntry(args.contract, *_compile(args.contract, args.env, args.object_name))
    except ContractError as exc:
        print(f"contract-gate report: {exc}", file=sys.stderr)
        return 2
    if not entry.gated:
        print(f"contract-gate report: {args.contract}: object {entry.object} is not gated ({entry.not_gated}), "
              "so no gate reports", file=sys.stderr)
        return 2
    try:
        if args.html is None:
            print(json.dumps(build.report_model(entry, args.submission_id), indent=2, default=str))
        else:
            write_page(args.html, build.report_page(entry, args.submission_id))
            print(f"wrote {args.html}")
    except ValueError as exc:  # not a submission id
        print(f"contract-gate report: {exc}", file=sys.stderr)
        return 2
    except build.UnknownSubmission as exc:
        print(f"contract-gate report: {exc}", file=sys.stderr)
        return 1
    return 0


def _compile(contract: Path, env: str | None, object_name: str | None) -> tuple[Plan, None, str | None]:
    """(plan, no error, why it is not gated or None) of the object the report is about."""
    compiled = compile_plans(contract, env=env)
    plan = compiled.plan(object_name)
    return plan, None, compiled.not_gated.get(plan.object)


def write_page(path: Path, text: str) -> None:
    """Write a page file whole: a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
