"""What the pages read, without Spark and without Airflow: the contracts of a folder (an entry
per schema object: ``contract`` + ``object``), their decision records and the report JSON a gate
wrote for a submission.

Everything here is read-only. Contracts are compiled through the contract folder's cache (one
compilation per version of a file), decision tables are read through ``deltalake`` the way
``contract-gate status`` reads them (each table once for every contract shown, only their
partitions opened), and a report is read only from inside the gate's work folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from contract_gate.config import work_root
from contract_gate.contract.errors import ContractError
from contract_gate.contract_folder import compiled, contract_files
from contract_gate.decisions import store_for
from contract_gate.decisions.record import COLUMNS, Decision, ObjectScope
from contract_gate.delta_tables import open_table, read_rows
from contract_gate.freshness.decision_log import of_object, read_decisions
from contract_gate.object_storage import address_storage_options
from contract_gate_plan.model import Plan
from contract_gate.submission import check_submission_id
from contract_gate.work_folders import submission_folder

DECISION_COLUMNS = tuple(name for name, _, _ in COLUMNS)
LISTED_COLUMNS = ("submission_id", "contract_id", "outcome", "decided_at", "rows_published", "rows_quarantined",
                  "failed_rules", "rule_failures", "rerun_of", "contract_version", "migration")  # what the contracts page shows of a decision


@dataclass(frozen=True)
class ContractEntry:
    """One schema object of a contract file: its compiled plan (and why it is not gated, when it
    is documentation only), or the file's error when it does not compile."""

    file: Path
    plan: Plan | None
    error: str | None
    not_gated: str | None = None

    def require_plan(self) -> Plan:
        """The plan, for an entry that compiled (every gated one)."""
        if self.plan is None:
            raise LookupError(f"{self.file} did not compile, so it has no plan: {self.error}")
        return self.plan

    @property
    def contract_id(self) -> str | None:
        return self.plan.contract_id if self.plan else None

    @property
    def object(self) -> str | None:
        return self.plan.object if self.plan else None

    @property
    def several_objects(self) -> bool:
        """Whether the contract has other schema objects (their names then tell the entries apart)."""
        return self.plan is not None and not ObjectScope.of(self.plan).sole

    @property
    def dag_id(self) -> str | None:
        """The contract's gate DAG (derived from its id, ``contract_gate_plan.names``)."""
        return self.plan.names.dag_id if self.plan else None

    @property
    def gated(self) -> bool:
        """Whether the object is gated (so tables, decisions and a task group in the gate DAG)."""
        return self.plan is not None and self.not_gated is None and self.plan.gated


def load_contracts(folder: Path, env: str | None = None) -> list[ContractEntry]:
    """An entry per schema object of every ``*.yaml``/``*.yml`` of ``folder``, compiled (a
    contract that does not compile is one entry with its error: one broken file must not hide
    the others)."""
    entries = []
    for file in contract_files(Path(folder)):
        try:
            contract = compiled(file, env)
        except ContractError as exc:
            entries.append(ContractEntry(file, None, str(exc)))
            continue
        entries += [ContractEntry(file, plan, None, contract.not_gated.get(name)) for name, plan in contract.plans.items()]
    return entries


def find_contract(entries: list[ContractEntry], contract_id: str, object_name: str | None = None) -> ContractEntry | None:
    """The gated entry of ``contract_id``'s object ``object_name``; without a name, of its only
    gated object (None when it has several: the name is needed)."""
    found = [entry for entry in entries if entry.gated and entry.contract_id == contract_id
             and (object_name is None or entry.object == object_name)]
    return found[0] if len(found) == 1 else None


def recent_decisions(plans: list[Plan], limit: int) -> dict[str, list[dict] | Exception]:
    """Per gate (the plan's ``names.gate``), its object's ``limit`` newest decision records (newest
    first) with the columns the contracts page shows (``LISTED_COLUMNS``; ``rule_failures`` a dict),
    or the error its decision table raised. Each path decision table is read once for all its contracts, only those columns
    (a table of one small file per decision, before the retention DAG compacts it, costs a file
    read per decision); a catalog table is not read here (its contracts are left out)."""
    wanted: dict[str, set[str]] = {}
    reached: dict[str, Plan] = {}  # a plan whose connections reach the table's bucket
    for plan in plans:
        address = plan.require_tables().require_decisions()
        if address.is_path:
            wanted.setdefault(address.deltalake_uri, set()).add(plan.contract_id)
            reached.setdefault(address.deltalake_uri, plan)
    tables: dict[str, dict[str, list[dict]] | Exception] = {}
    for location, contract_ids in wanted.items():
        try:
            plan = reached[location]
            options = address_storage_options(plan, plan.require_tables().require_decisions())
            tables[location] = read_decisions(location, contract_ids, LISTED_COLUMNS, limit, options)
        except Exception as exc:  # one unreadable table must not hide the other contracts
            tables[location] = exc
    found: dict[str, list[dict] | Exception] = {}
    for plan in plans:
        address = plan.require_tables().require_decisions()
        if not address.is_path:
            continue
        table = tables[address.deltalake_uri]
        found[plan.names.gate] = table if isinstance(table, Exception) else [
            {**row, "rule_failures": dict(row["rule_failures"] or {}), "failed_rules": list(row["failed_rules"] or [])}
            for row in of_object(table[plan.contract_id], plan, limit)]
    return found


def submission_decisions(plan: Plan, submission_id: str) -> list[Decision]:
    """The submission's records (its final one and any ``failed`` ones), newest first."""
    check_submission_id(submission_id)
    return store_for(plan).records(submission_id=submission_id, contract_id=plan.contract_id,
                                   scope=ObjectScope.of(plan))


def reruns_of(plan: Plan, submission_id: str) -> list[Decision]:
    """Records of the submissions that re-ran ``submission_id`` (``rerun_of``), newest first."""
    address = plan.require_tables().require_decisions()
    table = (open_table(address.deltalake_uri, storage_options=address_storage_options(plan, address))
             if address.is_path else None)
    if table is None:
        return []
    rows = read_rows(table, list(DECISION_COLUMNS), where=("rerun_of", {submission_id}))
    contract_id, scope = plan.contract_id, ObjectScope.of(plan)
    records = [Decision.from_row(row) for row in rows
               if row["contract_id"] == contract_id and (scope is None or scope.holds(row["object"]))]
    return sorted(records, key=lambda decision: decision.decided_at, reverse=True)


def stored_report(plan: Plan, decision: Decision | None, submission_id: str) -> dict | None:
    """The report JSON the gate wrote for the submission, or None when it is not readable here.

    The decision names the file; it is read only when it lies inside the gate's work folder
    (``[contract_gate] work_dir``), else the file of the work folder's layout is tried
    (``<work dir>/<gate>/<submission id>/report.json``, the gate named as in the plan's ``names``),
    so a page never reads a file because a table row named it."""
    root = work_root().resolve()
    expected = submission_folder(plan, submission_id) / "report.json"
    candidates = [Path(decision.report_path)] if decision is not None and decision.report_path else []
    for path in [*candidates, expected]:
        resolved = path.resolve()
        if not resolved.is_relative_to(root) or not resolved.is_file():
            continue
        report = json.loads(resolved.read_text(encoding="utf-8"))
        if report.get("submission_id") == submission_id and report.get("contract", {}).get("id") == plan.contract_id:
            return report
    return None
