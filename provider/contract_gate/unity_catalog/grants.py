"""The Databricks access boundary: a contract's ODCS ``roles`` become Unity Catalog GRANTs.

Who may do what with a gate's catalog tables (plan ``tables`` of kind ``table``):

* **consumers**, the roles with ``access: read``: SELECT on the target, nothing else (USE CATALOG
  and USE SCHEMA to reach it; they grant no read of their own);
* the **contract owner**, the roles with ``access: write`` (the producing team: it writes the
  landing, never the gated tables): SELECT on the target, the quarantine and its own candidates,
  so it can see why a batch was rejected;
* the **gate's principal** (``principal`` in the ``contract_gate`` extra of the Databricks
  connection: the service principal the jobs run as): SELECT and MODIFY on the target and the
  quarantine, and the candidate schema (USE SCHEMA, CREATE TABLE, SELECT, MODIFY).

Direct grants on the quarantine table held by anyone else are revoked, and on the candidate
schema (shared by the contracts of a catalog) anything beyond USE SCHEMA, so those are the gate's
and the owner's only; an owner reads its own candidates through a grant on each candidate table. (Privileges inherited from a catalog or schema
are Unity Catalog's business: keep the quarantine out of a schema consumers may read wholesale.)

Every principal is back-quoted as an identifier (``contract_gate_plan.sql_text``): a role name with a
back-quote, a semicolon or ``TO`` in it stays one principal name. The statements go to a SQL
warehouse through the Statement Execution API (``warehouse_id`` in the same extra), by
:meth:`~contract_gate.hooks.databricks.DatabricksWorkspaceHook.run_statement`. Tested against a
local emulation of that API (``tests/jobs_api_emulator.py``), which keeps the grants the
statements make; not against a Databricks workspace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from contract_gate.hooks.errors import StatementFailed
from contract_gate_plan.addresses import candidate_schema as candidate_folder
from contract_gate_plan.model import Plan
from contract_gate_plan.sql_text import quote_identifier, quote_qualified

LOGGER = logging.getLogger("contract_gate.access")
GATE_TABLE_PRIVILEGES = ("SELECT", "MODIFY")
GATE_SCHEMA_PRIVILEGES = ("USE SCHEMA", "CREATE TABLE", "SELECT", "MODIFY")
_MISSING = ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND", "NO_SUCH_CATALOG_EXCEPTION", "DOES_NOT_EXIST")


def principals(plan: Plan) -> dict[str, list[str]]:
    """``{"consumers": [...], "owners": [...]}`` from the plan's ``access`` (compiled from ODCS roles)."""
    access = plan.access
    return {"consumers": list(access.consumers if access else ()), "owners": list(access.owners if access else ())}


def _grant(privileges: tuple[str, ...] | str, securable: str, name: str, principal: str) -> str:
    what = privileges if isinstance(privileges, str) else ", ".join(privileges)
    return f"GRANT {what} ON {securable} {quote_qualified(name)} TO {quote_identifier(principal)}"


def _schema_of(name: str) -> str:
    return name.rsplit(".", 1)[0]


def candidate_schema(plan: Plan) -> str:
    """``catalog.schema`` of the candidates."""
    return candidate_folder(plan.require_tables().require_candidate_schema()).location


def grant_statements(plan: Plan, gate_principal: str | None, candidate: str | None = None) -> list[str]:
    """Every GRANT of the boundary, in a fixed order (``candidate``: a staged candidate table
    whose owner grant is due)."""
    tables = plan.require_tables()
    target, quarantine = tables.require_target().location, tables.require_quarantine().location
    who = principals(plan)
    gate = [gate_principal] if gate_principal else []
    readers = list(dict.fromkeys([*who["consumers"], *who["owners"]]))
    owners = list(dict.fromkeys([*who["owners"], *gate]))
    statements = []
    for catalog in dict.fromkeys(name.split(".")[0] for name in (target, quarantine, candidate_schema(plan))):
        statements += [_grant("USE CATALOG", "CATALOG", catalog, p) for p in dict.fromkeys([*readers, *gate])]
    statements += [_grant("USE SCHEMA", "SCHEMA", _schema_of(target), p) for p in dict.fromkeys([*readers, *gate])]
    statements += [_grant("SELECT", "TABLE", target, p) for p in readers]
    statements += [_grant(GATE_TABLE_PRIVILEGES, "TABLE", target, p) for p in gate]
    if _schema_of(quarantine) != _schema_of(target):
        statements += [_grant("USE SCHEMA", "SCHEMA", _schema_of(quarantine), p) for p in owners]
    statements += [_grant("SELECT", "TABLE", quarantine, p) for p in who["owners"]]
    statements += [_grant(GATE_TABLE_PRIVILEGES, "TABLE", quarantine, p) for p in gate]
    statements += [_grant(GATE_SCHEMA_PRIVILEGES, "SCHEMA", candidate_schema(plan), p) for p in gate]
    if candidate is not None:
        statements += [_grant("USE SCHEMA", "SCHEMA", candidate_schema(plan), p) for p in who["owners"]]
        statements += [_grant("SELECT", "TABLE", candidate, p) for p in who["owners"]]
    return statements


def revoke_statements(securable: str, name: str, grants: list[dict[str, Any]], allowed: list[str],
                      harmless: tuple[str, ...] = ()) -> list[str]:
    """REVOKE what was granted directly on ``name`` to a principal not in ``allowed``, except the
    ``harmless`` privileges (USE SCHEMA on the shared candidate schema reads nothing, and another
    contract's owner needs it for its own candidates). ``grants`` are the rows of ``SHOW GRANTS
    ON <securable> <name>`` (Principal, ActionType, ObjectType, ObjectKey); inherited rows
    (another object) are not this object's to revoke."""
    extra: dict[str, list[str]] = {}
    for row in ({key.lower(): value for key, value in found.items()} for found in grants):  # column case varies
        if (row["principal"] not in allowed and row["actiontype"] not in harmless
                and str(row.get("objectkey", name)).lower() == name.lower()):
            extra.setdefault(row["principal"], []).append(row["actiontype"])
    return [f"REVOKE {', '.join(privileges)} ON {securable} {quote_qualified(name)} FROM {quote_identifier(p)}"
            for p, privileges in extra.items()]


def apply_access(plan: Plan, run_sql: Callable[[str], list[dict[str, Any]]],
                 gate_principal: str | None, candidate: str | None = None) -> list[str]:
    """Issue the boundary for ``plan``'s catalog tables through ``run_sql`` (statement -> rows);
    returns the statements that ran. A table not created yet is skipped: a new Unity Catalog table
    is its creator's (the gate's) alone, and the next job grants it."""
    if plan.require_tables().require_target().is_path:
        return []
    issued = []
    for statement in grant_statements(plan, gate_principal, candidate):
        if _run(run_sql, statement) is not None:
            issued.append(statement)
    gate = [gate_principal] if gate_principal else []
    for securable, name, allowed, harmless in (
        ("TABLE", plan.require_tables().require_quarantine().location, [*principals(plan)["owners"], *gate], ()),
        ("SCHEMA", candidate_schema(plan), gate, ("USE SCHEMA",)),  # shared by every contract's candidates
    ):
        rows = _run(run_sql, f"SHOW GRANTS ON {securable} {quote_qualified(name)}")
        for statement in revoke_statements(securable, name, rows or [], allowed, harmless):
            _run(run_sql, statement)
            issued.append(statement)
    return issued


def _run(run_sql: Callable[[str], list[dict[str, Any]]], statement: str) -> list[dict[str, Any]] | None:
    try:
        return run_sql(statement)
    except StatementFailed as exc:
        if any(code in str(exc) for code in _MISSING):
            LOGGER.info("access: %s skipped, its object does not exist yet", statement.split(" TO ")[0])
            return None
        raise

