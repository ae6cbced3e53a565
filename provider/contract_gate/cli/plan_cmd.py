"""``contract-gate plan <file>``: print the compiled ValidationPlan (or the target DDL)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from contract_gate.contract.compiler import compile_plan
from contract_plan.document import render_plan
from contract_gate.contract.errors import ContractError
from contract_plan.table_ddl import render_ddl


def register(subparsers) -> None:
    parser = subparsers.add_parser("plan", help="print the validation plan compiled from a contract")
    parser.add_argument("contract", type=Path)
    parser.add_argument("--env", help="server name or environment to resolve addresses for")
    parser.add_argument("--ddl", action="store_true", help="print the target table DDL instead of the plan")
    parser.add_argument("--json", action="store_true", help="errors as JSON (the plan is always JSON)")
    parser.set_defaults(func=run)


def run(args) -> int:
    if not args.contract.is_file():
        print(f"contract-gate plan: no such file: {args.contract}", file=sys.stderr)
        return 2
    try:
        plan = compile_plan(args.contract, env=args.env)
    except ContractError as exc:
        if args.json:
            print(json.dumps({"file": exc.file, "errors": [i.as_dict() for i in exc.issues]}, indent=2))
        else:
            print(exc, file=sys.stderr)
        return 1
    if args.ddl:
        if plan["tables"] is None:
            print("contract-gate plan --ddl: the contract has no contractGate settings, so no target table", file=sys.stderr)
            return 1
        sys.stdout.write(render_ddl(plan))
    else:
        sys.stdout.write(render_plan(plan))
    return 0
