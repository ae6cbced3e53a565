"""``contract-gate lint <file|dir>``: check contracts and compile them, report every error."""

from __future__ import annotations

import json
from pathlib import Path

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError


def contract_files(target: Path) -> list[Path]:
    if target.is_dir():
        return sorted([*target.glob("*.yaml"), *target.glob("*.yml")])
    return [target]


def register(subparsers) -> None:
    parser = subparsers.add_parser("lint", help="check contract files (a file or a folder of *.yaml)")
    parser.add_argument("target", type=Path)
    parser.add_argument("--env", help="server name or environment to resolve addresses for")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def run(args) -> int:
    if not args.target.exists():
        print(f"contract-gate lint: no such file or folder: {args.target}")
        return 2
    files = contract_files(args.target)
    results = []
    for file in files:
        try:
            plan = compile_plan(file, env=args.env)
            results.append({"file": str(file), "ok": True, "rules": len(plan["rules"]), "errors": []})
        except ContractError as exc:
            results.append({"file": str(file), "ok": False, "errors": [i.as_dict() for i in exc.issues]})
    if args.json:
        print(json.dumps({"contracts": results}, indent=2))
    else:
        for result in results:
            if result["ok"]:
                print(f"ok    {result['file']} ({result['rules']} rules)")
            else:
                print(f"FAIL  {result['file']}")
                for issue in result["errors"]:
                    where = f"line {issue['line']}" if issue["line"] else "-"
                    print(f"      {where}: {issue['path'] or '<document>'}: {issue['message']}")
        failed = sum(not r["ok"] for r in results)
        print(f"{len(results) - failed} ok, {failed} with errors")
    return 1 if any(not r["ok"] for r in results) else 0
