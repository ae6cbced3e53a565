"""Table ownership: which contract a table belongs to, and in which role.

Every table the gate creates carries two table properties: ``contract_gate.contract`` (the
contract id) and ``contract_gate.role`` (``target``, ``quarantine``, ``candidate``). The
decision table is shared by every contract of a deployment, so it carries the role only.
Every step that writes a table (publish, quarantine, split, stage, retention, the decision
store, target creation) reads them first and refuses a table that another contract owns, or
that this contract owns in another role: a contract whose quarantine is set to another
contract's target must never write a row there.

A table without the properties was not created by the gate (or by an earlier version): it is
refused too, with the ``ALTER TABLE ... SET TBLPROPERTIES`` statement that claims it, so taking
over an existing table is a deliberate act of whoever may alter it, never a contract's choice.

Standard library only: the Spark steps pass their session (anything with ``.sql``), the decision
store passes the properties it read with ``deltalake`` or Databricks SQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contract_gate_plan.sql_text import string_literal

if TYPE_CHECKING:
    from contract_gate_plan.addresses import Address
    from contract_gate_plan.model import Plan

CONTRACT = "contract_gate.contract"
ROLE = "contract_gate.role"
ROLES = ("target", "quarantine", "candidate", "decisions")
SHARED_ROLES = ("decisions",)  # one table per deployment, written by every contract


class OwnershipError(PermissionError):
    """A write step refused a table that is not this contract's table in this role."""


def owner_properties(contract_id: str | None, role: str) -> dict[str, str]:
    """The properties a table created for ``contract_id`` in ``role`` carries (a shared role's
    carry the role only: ``contract_id`` may then be None)."""
    if role not in ROLES:
        raise ValueError(f"unknown table role {role!r}; one of {', '.join(ROLES)}")
    if role in SHARED_ROLES:
        return {ROLE: role}
    if contract_id is None:
        raise ValueError(f"a table in role {role!r} belongs to one contract: its id is needed")
    return {CONTRACT: contract_id, ROLE: role}


def properties_clause(properties: dict[str, str]) -> str:
    """``'k' = 'v', ...``: the body of a TBLPROPERTIES clause."""
    return ", ".join(f"{string_literal(key)} = {string_literal(value)}" for key, value in properties.items())


def claim_statement(table_sql: str, contract_id: str | None, role: str) -> str:
    """The statement an operator runs to hand an existing table to ``contract_id`` in ``role``."""
    return f"ALTER TABLE {table_sql} SET TBLPROPERTIES ({properties_clause(owner_properties(contract_id, role))})"


def ownership_problem(
    properties: dict[str, str], table: str, table_sql: str, contract_id: str | None, role: str
) -> str | None:
    """Why contract ``contract_id`` may not write ``table`` as its ``role`` (None: it may).

    ``table`` is what the message shows (path or name), ``table_sql`` what the claim
    statement uses."""
    wanted = owner_properties(contract_id, role)
    found = {key: properties[key] for key in (CONTRACT, ROLE) if key in properties}
    if found.get(ROLE) == role and (role in SHARED_ROLES or found.get(CONTRACT) == contract_id):
        return None
    who = f"contract {contract_id!r}" if role not in SHARED_ROLES else "the gate"
    refusal = f"refusing to write {table} as the {role} of {who}"
    if not found:
        return (f"{refusal}: the table has no contract-gate ownership properties ({', '.join(wanted)}), so "
                f"the gate did not create it. If it is meant to be this {role}, claim it first with:\n"
                f"  {claim_statement(table_sql, contract_id, role)}")
    owner = found.get(CONTRACT)
    held = f"contract {owner!r}" if owner is not None else "the deployment"
    return f"{refusal}: the table belongs to {held} as its {found.get(ROLE, '(no role)')}"


def check_owner(properties: dict[str, str], address: Address, contract_id: str | None, role: str) -> None:
    """Raise :class:`OwnershipError` unless the properties say ``address`` is ours in ``role``."""
    problem = ownership_problem(properties, address.location, address.sql_name, contract_id, role)
    if problem is not None:
        raise OwnershipError(problem)


def read_properties(spark: Any, address: Address) -> dict[str, str]:
    """The table's properties from its metadata (``SHOW TBLPROPERTIES``: no Spark job)."""
    rows = spark.sql(f"SHOW TBLPROPERTIES {address.sql_name}").collect()
    return {row["key"]: row["value"] for row in rows}


def require_owner(spark: Any, plan: Plan, address: Address, role: str) -> dict[str, str]:
    """Check that the existing table at ``address`` is ``plan``'s ``role``; returns its properties
    (a caller that compares other properties, like the target's drift check, reuses them)."""
    properties = read_properties(spark, address)
    check_owner(properties, address, plan.contract_id, role)
    return properties
