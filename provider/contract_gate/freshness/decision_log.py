"""Reading the decision table (docs/architecture.md, "The decision log") without Spark: latest
decisions and accepted ones.

The gate appends one record per submission. Freshness uses it twice: ``contract-gate status``
shows the latest decisions, and when the target's statistics cannot give max(business date)
the newest accepted record's ``latest_business_date`` does. Only outcomes that put rows in the
target count as accepted (``published``, ``split``): a quarantined submission never refreshes
freshness. The table is the one :mod:`contract_gate.decisions` writes; it is read here through
the same JVM-free layer as the target (:mod:`contract_gate.delta_tables`), and only the files that
can hold the contracts asked for are opened (their partition, or their ``contract_id``
statistics in the earlier layout). A contract's rows are then narrowed to one gated object's
(``of_object``).
"""

from __future__ import annotations

from collections.abc import Iterable

from contract_gate.decisions.record import PUBLISHED_OUTCOMES, ObjectScope
from contract_gate.delta_tables import open_table, read_rows
from contract_gate.object_storage import address_storage_options
from contract_gate_plan.model import Plan

STATUS_COLUMNS = ("submission_id", "contract_id", "outcome", "decided_at", "rerun_of")
FRESHNESS_COLUMNS = ("latest_business_date", "target_version_after")


def read_decisions(location: str, contract_ids: Iterable[str], columns: tuple[str, ...] = STATUS_COLUMNS,
                   limit: int | None = None, storage_options: dict[str, str] | None = None) -> dict[str, list[dict]]:
    """The decision records of ``contract_ids`` in the path table at ``location``, per contract
    and newest first (the ``limit`` newest of each of its objects: narrow them with
    ``of_object``), read in one pass over the log (``contract-gate status`` of every contract
    reads each decision table once). Each row has ``object`` too. ``storage_options``: delta-rs's,
    for a table in S3 (:func:`contract_gate.object_storage.address_storage_options`)."""
    wanted = list(dict.fromkeys([*columns, "contract_id", "object", "decided_at"]))
    ids = set(contract_ids)
    found: dict[str, list[dict]] = {contract_id: [] for contract_id in ids}
    newest = ("decided_at", limit) if limit is not None else None
    table = open_table(location, storage_options=storage_options) if ids else None
    rows = (read_rows(table, wanted, where=("contract_id", ids), newest=newest, per=("object",))
            if table is not None else [])
    for row in sorted(rows, key=lambda row: str(row["decided_at"] or ""), reverse=True):
        found[row["contract_id"]].append(row)
    return found


def of_object(rows: list[dict], plan: Plan, limit: int | None = None) -> list[dict]:
    """The rows (of ``plan``'s contract, newest first) that are ``plan``'s object's: its own and,
    for a contract's only object, those from before records named their object."""
    scope = ObjectScope.of(plan)
    mine = [row for row in rows if scope is None or scope.holds(row.get("object"))]
    return mine if limit is None else mine[:limit]


def contract_decisions(plan: Plan, columns: tuple[str, ...] = STATUS_COLUMNS) -> list[dict] | None:
    """This contract's decision records, newest first: ``[]`` when the table does not exist yet,
    None when it is a catalog table (read it where the catalog is, e.g. a Databricks SQL editor)."""
    address = plan.require_tables().require_decisions()
    if not address.is_path:
        return None
    contract_id = plan.contract_id
    found = read_decisions(address.deltalake_uri, [contract_id], columns,
                           storage_options=address_storage_options(plan, address))
    return of_object(found[contract_id], plan)


def accepted_decisions(plan: Plan) -> list[dict]:
    """Decisions that published rows to the target, newest first."""
    rows = contract_decisions(plan, STATUS_COLUMNS + FRESHNESS_COLUMNS) or []
    return [row for row in rows if row["outcome"] in PUBLISHED_OUTCOMES]
