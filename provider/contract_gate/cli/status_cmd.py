"""``contract-gate status [contract] [--contracts-dir DIR] [--env NAME] [--json | --html FILE]``:
freshness and the latest decisions per gated object, without Spark (``--html``: the contracts page).

One entry per gated object (``contract`` + ``object``; a one-object contract shows as it always
did), and one per object that is documentation only, with why it is not gated.

Freshness is evaluated now, read-only (no alert is sent, nothing is written), from the same
sources as the freshness DAG; "last check" is the status record that DAG wrote, with its alert
state. Decisions come from the decision table's Delta log and parquet files: each decision table
is read once for all the contracts shown, and only their partitions are opened.
Exit 0 when every contract with an SLA is fresh, 1 when one is stale, 2 when one could not be read.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from contract_gate import config
from contract_gate.cli.report_cmd import write_page
from contract_gate.contract.compiler import CompiledContract, compile_plans
from contract_gate.contract.errors import ContractError
from contract_gate.freshness.business_time import render, render_duration
from contract_gate.freshness.decision_log import STATUS_COLUMNS, of_object, read_decisions
from contract_gate.freshness.latest import latest_accepted
from contract_gate.freshness.locations import status_dir
from contract_gate_plan.model import Plan
from contract_gate.freshness.status import STALE, StatusStore, evaluate
from contract_gate.pages.build import contracts_page
from contract_gate.pages.data import ContractEntry
from contract_gate.cli.tables import render_table


def register(subparsers) -> None:
    parser = subparsers.add_parser("status", help="freshness and latest decisions per gated object (no Spark)")
    parser.add_argument("contract", nargs="?", help="a contract file or id (default: every contract in --contracts-dir)")
    # the DAG factory's folder and environment: status reads the contracts the gates run
    parser.add_argument("--contracts-dir", type=Path, default=None,
                        help=f"folder of contract files (default: {config.describe('contracts_dir')}, else "
                             "$AIRFLOW_HOME/contracts when it exists, else ./contracts)")
    parser.add_argument("--env", help=f"server name or environment to resolve addresses for "
                                      f"(default: {config.describe('env')}, else the first server)")
    parser.add_argument("--decisions", type=int, default=5, metavar="N",
                        help="decisions to show per gated object (default 5)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--html", type=Path, metavar="FILE",
                        help="write the contracts page (as the Airflow UI shows it) to FILE, one self-contained file")
    parser.set_defaults(func=run)


def run(args) -> int:
    args.contracts_dir = args.contracts_dir or config.contracts_dir()
    args.env = args.env or config.get("env")
    try:
        files = _select(args.contract, args.contracts_dir, args.env)
    except LookupError as exc:
        print(f"contract-gate status: {exc}", file=sys.stderr)
        return 2
    now = datetime.now(timezone.utc).replace(microsecond=0)
    compiled = [(file, *_compile(file, args.env)) for file in files]
    shown = [(file, plan, reason, error) for file, contract, error in compiled for plan, reason in _objects(contract)]
    decisions = _decisions([plan for _, plan, reason, _ in shown if plan is not None and reason is None],
                           args.decisions)
    entries = [_entry(file, plan, reason, error, now, args.decisions, decisions) for file, plan, reason, error in shown]
    if args.html:
        write_page(args.html, contracts_page([ContractEntry(file, plan, error, reason) for file, plan, reason, error in shown]))
        print(f"wrote {args.html}")
    elif args.json:
        print(json.dumps({"checked_at": render(now), "contracts": entries}, indent=2, default=str))
    else:
        print("\n\n".join(_render(entry) for entry in entries))
    if any(entry["error"] for entry in entries):
        return 2
    return 1 if any((entry["freshness"] or {}).get("state") == STALE for entry in entries) else 0


def _select(contract: str | None, folder: Path, env: str | None) -> list[Path]:
    if contract and Path(contract).is_file():
        return [Path(contract)]
    if not folder.is_dir():
        raise LookupError(f"no such contracts folder: {folder}")
    files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
    if not contract:
        return files
    by_stem = [file for file in files if file.stem == contract]
    if by_stem:
        return by_stem
    for file in files:
        try:
            if compile_plans(file, env=env).loaded.model.id == contract:
                return [file]
        except ContractError:
            continue
    raise LookupError(f"no contract {contract!r} in {folder}")


def _compile(file: Path, env: str | None) -> tuple[CompiledContract | None, str | None]:
    try:
        return compile_plans(file, env=env), None
    except ContractError as exc:
        return None, str(exc)


def _objects(contract: CompiledContract | None) -> list[tuple[Plan | None, str | None]]:
    """(plan, why it is not gated or None) per schema object, in contract order; one
    (None, None) for a contract that does not compile."""
    if contract is None:
        return [(None, None)]
    return [(plan, contract.not_gated.get(name)) for name, plan in contract.plans.items()]


def _decisions(plans: list[Plan], limit: int) -> dict[str, dict[str, list[dict]] | Exception]:
    """Per path decision table: the shown contracts' ``limit`` newest decisions, read in one
    pass (or the error that table raised, shown on each of its contracts)."""
    wanted: dict[str, set[str]] = {}
    for plan in plans:
        address = plan.require_tables().require_decisions()
        if address.is_path:
            wanted.setdefault(address.deltalake_uri, set()).add(plan.contract_id)
    found: dict[str, dict[str, list[dict]] | Exception] = {}
    for location, contract_ids in wanted.items():
        try:
            found[location] = read_decisions(location, contract_ids, STATUS_COLUMNS, limit)
        except Exception as exc:  # one unreadable table must not hide the other contracts
            found[location] = exc
    return found


def _entry(file: Path, plan: Plan | None, not_gated: str | None, error: str | None, now: datetime,
           decisions_shown: int, decisions: dict[str, dict[str, list[dict]] | Exception]) -> dict[str, Any]:
    entry: dict[str, Any] = {"file": str(file), "contract_id": None, "object": None, "several_objects": False, "not_gated": None,
             "freshness": None, "last_check": None, "decisions": None, "decisions_table": None, "error": error}
    if plan is None:
        return entry
    entry.update(contract_id=plan.contract_id, contract_version=plan.contract_version,
                 environment=plan.environment, object=plan.object,
                 several_objects=not plan.names.sole, not_gated=not_gated)
    if not_gated is not None:
        return entry
    decisions_address = plan.require_tables().require_decisions()
    entry["decisions_table"] = decisions_address.location
    try:
        if plan.freshness is not None:
            entry["freshness"] = evaluate(plan, latest_accepted(plan), now)
            entry["last_check"] = StatusStore(status_dir(plan)).read(plan.names.gate)
        if decisions_address.is_path:
            table = decisions[decisions_address.deltalake_uri]
            if isinstance(table, Exception):
                raise table
            entry["decisions"] = of_object(table[plan.contract_id], plan, decisions_shown)
    except Exception as exc:  # one unreadable table must not hide the other contracts
        entry["error"] = f"{type(exc).__name__}: {exc}"
    return entry


def _render(entry: dict) -> str:
    if entry["contract_id"] is None:
        return f"{entry['file']}\n  error      {entry['error']}"
    env = f" ({entry['environment']})" if entry["environment"] else ""
    lines = [f"{entry['contract_id']} {entry['contract_version']}{env}"
             + (f" object {entry['object']}" if entry["several_objects"] or entry["not_gated"] else "")]
    if entry["not_gated"] is not None:
        return "\n".join([*lines, f"  not gated  {entry['not_gated']}"])
    lines += _render_freshness(entry["freshness"], entry["last_check"])
    lines += _render_decisions(entry)
    if entry["error"]:
        lines.append(f"  error      {entry['error']}")
    return "\n".join(lines)


def _render_freshness(status: dict | None, last: dict | None) -> list[str]:
    if status is None:
        return ["  freshness  no freshness SLA"]
    sla = status["sla"]
    sla_text = f"SLA {sla['value']} {sla['unit']} ({sla['property']})"
    if status["age_seconds"] is None:
        detail = f"no accepted data; {sla_text}"
    else:
        date = status["latest_accepted_date"] or "(withheld)"
        detail = f"{sla['column']} {date} is {render_duration(status['age_seconds'])} old; {sla_text}"
    lines = [f"  freshness  {status['state'].upper():6} {detail}",
             f"             last accepted submission {status['latest_accepted_submission'] or '-'}, "
             f"target version {status['target_version'] if status['target_version'] is not None else '-'} "
             f"(source: {status['source']})"]
    if status["source_note"]:
        lines.append(f"             note: {status['source_note']}")
    if last is None:
        lines.append("  last check never (the freshness DAG has not run)")
    else:
        notice = last.get("notice")
        alert = "no alert"
        if notice and notice["delivered"]:
            alert = f"{notice['kind']} notice sent {notice['sent_at']} to {len(notice['delivered'])} notifier(s)"
        if notice and notice["pending"]:
            alert += f", {len(notice['pending'])} pending"
        lines.append(f"  last check {last['checked_at']}: {last['state']} since {last['state_since']}; {alert}")
    return lines


def _render_decisions(entry: dict) -> list[str]:
    decisions = entry["decisions"]
    if decisions is None:
        return [f"  decisions  in catalog table {entry['decisions_table']} (query it where the catalog is)"]
    if not decisions:
        return ["  decisions  none yet"]
    columns = [column for column in STATUS_COLUMNS if column not in ("contract_id", "object")]
    rows = [[row[column] or "-" for column in columns] for row in decisions]
    return ["  decisions  (newest first)", *render_table(columns, rows, indent="    ")]
