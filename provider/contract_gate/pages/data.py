"""What the pages read, without Spark and without Airflow: the contracts of a folder, their
decision records and the report JSON a gate wrote for a submission.

Everything here is read-only. Contracts are compiled through the DAG factory's cache (one
compilation per version of a file), decision tables are read through ``deltalake`` the way
``contract-gate status`` reads them (each table once for every contract shown, only their
partitions opened), and a report is read only from inside the gate's work folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contract_gate.contract.errors import ContractError
from contract_gate.decisions.record import COLUMNS, Decision
from contract_gate.delta_tables import open_table, read_rows
from contract_gate.freshness.decision_log import read_decisions
from contract_gate.freshness.locations import table_location
from contract_gate.submission import check_submission_id

DECISION_COLUMNS = tuple(name for name, _, _ in COLUMNS)
LISTED_COLUMNS = ("submission_id", "contract_id", "outcome", "decided_at", "rows_published", "rows_quarantined",
                  "failed_rules", "rule_failures", "rerun_of")  # what the contracts page shows of a decision


@dataclass(frozen=True)
class ContractEntry:
    """One contract file of the folder: its compiled plan, or why it does not compile."""

    file: Path
    plan: dict | None
    error: str | None

    @property
    def contract_id(self) -> str | None:
        return self.plan["contract"]["id"] if self.plan else None

    @property
    def gated(self) -> bool:
        """Whether the contract has gate settings (so tables, decisions and a gate DAG)."""
        return self.plan is not None and self.plan["tables"] is not None


def load_contracts(folder: Path, env: str | None = None) -> list[ContractEntry]:
    """Every ``*.yaml``/``*.yml`` of ``folder``, compiled (a contract that does not compile is an
    entry with its error: one broken file must not hide the others)."""
    from contract_gate.dag_factory import compiled, contract_files

    entries = []
    for file in contract_files(Path(folder)):
        try:
            entries.append(ContractEntry(file, compiled(file, env)[1], None))
        except ContractError as exc:
            entries.append(ContractEntry(file, None, str(exc)))
    return entries


def find_contract(entries: list[ContractEntry], contract_id: str) -> ContractEntry | None:
    return next((entry for entry in entries if entry.contract_id == contract_id), None)


def recent_decisions(plans: list[dict], limit: int) -> dict[str, list[dict] | Exception]:
    """Per contract id, its ``limit`` newest decision records (newest first) with the columns the
    contracts page shows (``LISTED_COLUMNS``; ``rule_failures`` a dict), or the error its decision
    table raised. Each path decision table is read once for all its contracts, only those columns
    (a table of one small file per decision, before the retention DAG compacts it, costs a file
    read per decision); a catalog table is not read here (its contracts are left out)."""
    wanted: dict[str, set[str]] = {}
    for plan in plans:
        address = plan["tables"]["decisions"]
        if address["kind"] == "path":
            wanted.setdefault(table_location(address), set()).add(plan["contract"]["id"])
    found: dict[str, list[dict] | Exception] = {}
    for location, contract_ids in wanted.items():
        try:
            rows = read_decisions(location, contract_ids, LISTED_COLUMNS, limit)
        except Exception as exc:  # one unreadable table must not hide the other contracts
            found.update({contract_id: exc for contract_id in contract_ids})
            continue
        for contract_id, records in rows.items():
            found[contract_id] = [{**row, "rule_failures": dict(row["rule_failures"] or {}),
                                   "failed_rules": list(row["failed_rules"] or [])} for row in records]
    return found


def submission_decisions(plan: dict, submission_id: str) -> list[Decision]:
    """The submission's records (its final one and any ``failed`` ones), newest first."""
    from contract_gate.decisions import store_for

    check_submission_id(submission_id)
    return store_for(plan).records(submission_id=submission_id, contract_id=plan["contract"]["id"])


def reruns_of(plan: dict, submission_id: str) -> list[Decision]:
    """Records of the submissions that re-ran ``submission_id`` (``rerun_of``), newest first."""
    address = plan["tables"]["decisions"]
    table = open_table(table_location(address)) if address["kind"] == "path" else None
    if table is None:
        return []
    rows = read_rows(table, list(DECISION_COLUMNS), where=("rerun_of", {submission_id}))
    contract_id = plan["contract"]["id"]
    records = [Decision.from_row(row) for row in rows if row["contract_id"] == contract_id]
    return sorted(records, key=lambda decision: decision.decided_at, reverse=True)


def stored_report(plan: dict, decision: Decision | None, submission_id: str) -> dict | None:
    """The report JSON the gate wrote for the submission, or None when it is not readable here.

    The decision names the file; it is read only when it lies inside the gate's work folder
    (``CONTRACT_GATE_WORK_DIR``), else the file of the work folder's layout is tried
    (``<work dir>/<contract id>/<submission id>/report.json``), so a page never reads a file
    because a table row named it."""
    import json

    from contract_gate.operators.base import work_root

    root = work_root().resolve()
    expected = root / plan["contract"]["id"] / check_submission_id(submission_id) / "report.json"
    candidates = [Path(decision.report_path)] if decision is not None and decision.report_path else []
    for path in [*candidates, expected]:
        resolved = path.resolve()
        if not resolved.is_relative_to(root) or not resolved.is_file():
            continue
        report = json.loads(resolved.read_text(encoding="utf-8"))
        if report.get("submission_id") == submission_id and report.get("contract", {}).get("id") == plan["contract"]["id"]:
            return report
    return None
