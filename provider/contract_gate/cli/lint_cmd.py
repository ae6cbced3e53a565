"""``contract-gate lint <file|dir>``: check contracts and compile them, report every error.

Each file is checked on its own, so one broken contract never hides the errors of another.
Every schema object is compiled; an object without a landing is documentation only and is
listed as "not gated" with the reason, which is no error. Then the contracts that compiled are
checked against each other (``contract.claims``): two contracts that claim the same table, id or
derived DAG id both fail, each error naming the other file. ``--junit FILE`` writes JUnit XML:
one test case per gated object (an object that is not gated is skipped), or one failing test
case for a contract with errors.
Exit code: 0 all ok, 1 some contract has errors, 2 usage error or a crash of the checker itself.
"""

from __future__ import annotations

import json
from pathlib import Path

from contract_gate.cli.junit import Case, Suite, write_junit
from contract_gate.cli.options import add_json
from contract_gate.contract.claims import conflicts
from contract_gate.contract.compiler import compile_plans
from contract_gate.contract.errors import ContractError


def contract_files(target: Path) -> list[Path]:
    if target.is_dir():
        return sorted([*target.glob("*.yaml"), *target.glob("*.yml")])
    return [target]


def register(subparsers) -> None:
    parser = subparsers.add_parser("lint", help="check contract files (a file or a folder of *.yaml)")
    parser.add_argument("target", type=Path)
    parser.add_argument("--env", help="server name or environment to resolve addresses for")
    add_json(parser)
    parser.add_argument("--junit", type=Path, metavar="FILE",
                        help="write JUnit XML here: one test case per gated object, or per failing contract")
    parser.set_defaults(func=run)


def lint_file(file: Path, env: str | None) -> dict:
    try:
        compiled = compile_plans(file, env=env)
    except ContractError as exc:
        return {"file": str(file), "ok": False, "errors": [i.as_dict() for i in exc.issues]}
    except Exception as exc:  # noqa: BLE001 - a checker bug must not stop the other files
        message = f"internal error while checking this contract: {type(exc).__name__}: {exc}"
        return {"file": str(file), "ok": False, "crashed": True,
                "errors": [{"file": str(file), "line": None, "path": "", "message": message}]}
    gated = compiled.gated
    return {"file": str(file), "ok": True, "rules": sum(len(p.rules) for p in compiled.plans.values()),
            "gated": list(gated), "not_gated": dict(compiled.not_gated), "errors": [],
            "warnings": [warning.as_dict() for warning in compiled.warnings],
            "loaded": compiled.loaded, "plans": list(compiled.plans.values())}


def check_claims(results: list[dict]) -> None:
    """Fail every compiled contract whose tables or id clash with another one's (in place)."""
    compiled = [(r["loaded"], plan) for r in results if r["ok"] for plan in r["plans"]]
    clashes = conflicts(compiled)
    for result in results:
        if result["file"] in clashes:
            result.update(ok=False, errors=[issue.as_dict() for issue in clashes[result["file"]]])


def run(args) -> int:
    if not args.target.exists():
        print(f"contract-gate lint: no such file or folder: {args.target}")
        return 2
    files = contract_files(args.target)
    if not files:
        print(f"contract-gate lint: no contract files (*.yaml, *.yml) in {args.target}")
        return 2
    results = [lint_file(file, args.env) for file in files]
    check_claims(results)
    for result in results:
        result.pop("plans", None)
        result.pop("loaded", None)
    if args.junit:
        write_junit(args.junit, [junit_suite(result) for result in results])
    if args.json:
        print(json.dumps({"contracts": results}, indent=2))
    else:
        print_human(results)
    if any(r.get("crashed") for r in results):
        return 2
    return 1 if any(not r["ok"] for r in results) else 0


def junit_suite(result: dict) -> Suite:
    if not result["ok"]:
        lines = [f"line {issue['line'] or '-'}: {issue['path'] or '<document>'}: {issue['message']}"
                 for issue in result["errors"]]
        return Suite(result["file"], [Case("contract", failure="\n".join(lines))])
    cases = [Case(name) for name in result["gated"]]
    cases += [Case(name, skipped=f"not gated: {reason}") for name, reason in result["not_gated"].items()]
    return Suite(result["file"], cases)


def print_human(results: list[dict]) -> None:
    for result in results:
        if result["ok"]:
            gated = ", ".join(result["gated"]) or "none"
            print(f"ok    {result['file']} ({result['rules']} rules; gated: {gated})")
            for name, reason in result["not_gated"].items():
                print(f"      not gated: {name}: {reason}")
            for issue in result["warnings"]:
                where = f"line {issue['line']}" if issue["line"] else "-"
                print(f"      warning: {where}: {issue['path'] or '<document>'}: {issue['message']}")
            continue
        print(f"FAIL  {result['file']}")
        for issue in result["errors"]:
            where = f"line {issue['line']}" if issue["line"] else "-"
            print(f"      {where}: {issue['path'] or '<document>'}: {issue['message']}")
    failed = sum(not r["ok"] for r in results)
    print(f"{len(results) - failed} ok, {failed} with errors")
