"""``contract-gate plan <file>``: print the compiled ValidationPlan (or the target DDL)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from contract_gate.contract.compiler import compile_plan
from contract_gate_plan.document import render_plan
from contract_gate.cli.errors import one_line
from contract_gate.contract.errors import ContractError
from contract_gate_plan.table_ddl import render_ddl
from contract_gate_plan.migration import governed_migration
from contract_gate_plan.model import Plan


def register(subparsers) -> None:
    parser = subparsers.add_parser("plan", help="print the validation plan compiled from a contract")
    parser.add_argument("contract", type=Path)
    parser.add_argument("--env", help="server name or environment to resolve addresses for")
    parser.add_argument("--object", dest="object_name", metavar="NAME",
                        help="the schema object (default: the contract's only object, or its only gated one)")
    parser.add_argument("--ddl", action="store_true", help="print the target table DDL instead of the plan")
    parser.add_argument("--migrate", action="store_true",
                        help="print the statements that migrate the deployed target to this plan (path targets)")
    parser.add_argument("--json", action="store_true", help="errors as JSON (the plan is always JSON)")
    parser.set_defaults(func=run)


def run(args) -> int:
    if not args.contract.is_file():
        print(f"contract-gate plan: no such file: {args.contract}", file=sys.stderr)
        return 2
    try:
        plan = compile_plan(args.contract, env=args.env, object_name=args.object_name)
    except ContractError as exc:
        if args.json:
            print(json.dumps({"file": exc.file, "errors": [i.as_dict() for i in exc.issues]}, indent=2))
        else:
            print(f"contract-gate plan: {one_line(exc)}", file=sys.stderr)
        return 1
    if args.migrate:
        return print_migration(plan)
    if args.ddl:
        if not plan.gated:
            print("contract-gate plan --ddl: the contract has no contractGate settings, so no target table", file=sys.stderr)
            return 1
        sys.stdout.write(render_ddl(plan))
    else:
        sys.stdout.write(render_plan(plan.document))
    return 0


def print_migration(plan: Plan) -> int:
    """The deployed target's migration to ``plan`` (``contract_gate_plan.migration``), for review:
    exit 0 with the statements (or none), 1 when its differences are breaking."""
    if not plan.gated:
        print("contract-gate plan --migrate: the contract has no contractGate settings, so no target table", file=sys.stderr)
        return 1
    target = plan.require_tables().require_target()
    if not target.is_path:
        print("contract-gate plan --migrate: reads path targets only; a catalog table migrates in the publish step",
              file=sys.stderr)
        return 2
    from contract_gate.evolution.deployed import deployed_table  # deltalake: only --migrate pays for it

    deployed = deployed_table(target.location)
    if deployed is None:
        print(f"-- no table at {target.location} yet: the publish step creates it (contract-gate plan --ddl)")
        return 0
    migration, allowed = governed_migration(plan, *deployed, target)
    if migration.breaking:
        print(f"-- target {target.location}: breaking differences, not migrated:", file=sys.stderr)
        for line in migration.breaking:
            print(f"--   {line}", file=sys.stderr)
        return 1
    print(f"-- target {target.location}: contract version {migration.from_version or 'unknown'} -> {migration.to_version}, "
          f"{len(migration.steps)} statement(s)")
    if allowed:
        print("-- breaking differences it makes (evolution.breaking: allow, a new major version):")
        for line in migration.allowed:
            print(f"--   {line}")
    for statement in migration.statements:
        print(f"{statement};")
    return 0
