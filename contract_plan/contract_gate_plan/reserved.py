"""The names the gate keeps for itself in every server root; a contract's tables stay out of them.

Beside a contract's tables the gate keeps its own: every run's plan, report and results
(``_runs``), the freshness status consumers read (``_contract_gate_status``), the frozen
candidates (the candidate schema, ``_contract_gate_candidates`` unless the gate settings name
another) and the decision log (``contract_gate_decisions``). A target or quarantine there would
write into them, a landing there would read them as a batch. Every other name that starts with
``_`` is kept too: for the gate's next folder, and because Spark and Delta read such names as
hidden (``_delta_log``).

A target, quarantine, landing or query reference that is one of these names, or lies inside one,
anywhere below the server root, is refused (a reference would let a query measure another
contract's candidates or the decision log): by the compiler (``contract_gate.contract.table_locations``) and
again when a plan is loaded to run (``contract_gate_plan.document``), before any step writes.
The root is where the plan's candidate schema is, so both sides judge a plan alike.

Standard library only: both sides import it.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from contract_gate_plan.addresses import Address

RUNS_FOLDER = "_runs"
STATUS_FOLDER = "_contract_gate_status"
CANDIDATE_SCHEMA = "_contract_gate_candidates"
DECISIONS_TABLE = "contract_gate_decisions"
RESERVED_NAMES = (RUNS_FOLDER, STATUS_FOLDER, CANDIDATE_SCHEMA, DECISIONS_TABLE)
RESERVED_PREFIX = "_"
CHECKED_ROLES = ("target", "quarantine", "landing")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def reserved_problems(tables: dict[str, Any], candidate_schema: str = CANDIDATE_SCHEMA) -> list[tuple[str, str]]:
    """(role, message) for each target, quarantine, landing or reference (role
    ``references.<alias>``) of ``tables`` (a plan's table addresses) that is a reserved name or lies
    inside one. ``candidate_schema``: the gate settings' candidate schema name, whose address in
    ``tables`` tells where the root is."""
    schema_address = tables.get("candidate_schema")
    root = gate_root(Address.as_written(schema_address) if schema_address else None, candidate_schema)
    if root is None:
        return []
    reserved = {*RESERVED_NAMES, candidate_schema.split(".")[-1]}
    checked = [(role, role, tables[role]) for role in CHECKED_ROLES if tables.get(role)]
    checked += [(f"references.{alias}", f"reference {alias}", address)
                for alias, address in (tables.get("references") or {}).items()]
    problems = []
    for role, what, document in checked:
        address = Address.as_written(document)
        parts = _below(address, root)
        found = next((i for i, part in enumerate(parts or ()) if part in reserved or part.startswith(RESERVED_PREFIX)), None)
        if parts is None or found is None:
            continue
        shown = address.location
        where = "is named" if found == len(parts) - 1 else "lies inside"
        problems.append((role, f"the {what} {shown!r} {where} {parts[found]!r}, a name the gate keeps for itself: "
                               f"in every server root {', '.join(RESERVED_NAMES[:3])} (the candidates), "
                               f"{DECISIONS_TABLE} and every name starting with '{RESERVED_PREFIX}' are reserved"))
    return problems


def gate_root(candidate_schema: Address | None, name: str) -> Address | None:
    """The root the plan's tables are under: the candidate schema's address without the parts its
    ``name`` adds (a folder, or ``catalog.schema``). None when the plan has no candidate schema."""
    if not candidate_schema or not name:
        return None
    added = len(name.split("."))
    if candidate_schema.is_path:
        path = _path(candidate_schema)
        return Address(kind="path", path=path.rsplit("/", added)[0] if path.count("/") >= added else "")
    return Address(kind="table", name=".".join(candidate_schema.location.split(".")[:-added]))


def _below(address: Address, root: Address) -> list[str] | None:
    """The parts of ``address`` below ``root`` (None: it is not below it, or of another kind).
    A catalog table in the root's catalog but another schema is below the catalog."""
    if address.kind != root.kind:
        return None
    if address.is_path:
        path, base = _path(address), root.location.rstrip("/")
        return path[len(base) + 1:].split("/") if base and path.startswith(base + "/") else None
    parts, root_parts = address.location.split("."), root.location.lower().split(".") if root.location else []
    lowered = [part.lower() for part in parts]
    for kept in (root_parts, root_parts[:1]):  # the root's schema, else its catalog
        if kept and len(parts) > len(kept) and lowered[:len(kept)] == kept:
            return parts[len(kept):]
    return None


def _path(address: Address) -> str:
    path = address.resolved().location
    return path.rstrip("/") if _URI.match(path) else posixpath.normpath(path)
