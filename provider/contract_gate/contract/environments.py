"""Environments (DTAP) and time: pick a ``servers`` entry, resolve table addresses, read the SLA.

Rules are the same in every environment; only addresses change. A server with ``catalog`` and
``schema`` (Databricks, Unity Catalog) gives ``catalog.schema.table`` names; a server with a
``path`` (``type: local`` and file stores) gives path-based Delta tables under that root.
"""

from __future__ import annotations

import posixpath
import re

from contract_gate.contract.rules import RuleError
from contract_gate.contract.settings import GateSettings, TableRef
from contract_gate_plan.migration import versioned_suffix
from contract_gate_plan.reserved import DECISIONS_TABLE

DEFAULT_ROOT = "lakehouse"
_STORE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/]+)")
_SAME_STORE = {"s3a": "s3", "s3n": "s3"}  # three schemes of one S3 bucket

# "m" is left out on purpose: in ODCS units it could be minutes or months.
_UNIT_SECONDS = {
    "s": 1, "sec": 1, "second": 1, "seconds": 1,
    "min": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}
# An SLA value written with its unit, as many contracts do: 25h, 2 d, 1.5hours.
_VALUE_WITH_UNIT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*")


def select_server(servers: list, env: str | None):
    """The server named ``env`` (by ``server`` or ``environment``); the first one when ``env`` is None."""
    if not servers:
        if env is not None:
            raise ValueError(f"environment {env!r} requested but the contract has no servers")
        return None
    if env is None:
        return servers[0]
    matches = [s for s in servers if env in (s.server, s.environment)]
    if not matches:
        names = sorted({s.server for s in servers if s.server} | {s.environment for s in servers if s.environment})
        raise ValueError(f"no server for environment {env!r}; known: {', '.join(names)}")
    return matches[0]


def _address(ref: TableRef, server) -> dict:
    address: dict[str, object] = {"format": ref.format}
    if ref.options:
        address["options"] = dict(sorted(ref.options.items()))
    if ref.connection is not None:
        address["connection"] = ref.connection
    if ref.path is not None:
        root = _root(server)
        path = ref.path if posixpath.isabs(ref.path) or "://" in ref.path else posixpath.join(root, ref.path)
        return {"kind": "path", "path": posixpath.normpath(path) if "://" not in path else path, **address}
    name = ref.table
    if not name:  # TableRef checks that one of table and path is given, not that a name is not empty
        raise ValueError("a table name is empty: name the table or give its 'path'")
    if server is not None and server.catalog and server.schema_:
        parts = name.split(".")
        qualified = {1: [server.catalog, server.schema_], 2: [server.catalog]}.get(len(parts), [])
        return {"kind": "table", "name": ".".join([*qualified, *parts]), **address}
    return {"kind": "path", "path": posixpath.join(_root(server), *name.split(".")), **address}


def _root(server) -> str:
    return (server.path or DEFAULT_ROOT) if server is not None else DEFAULT_ROOT


def resolve_tables(settings: GateSettings, server, object_name: str, version: str | None = None) -> dict:
    """The plan's table addresses. With ``evolution.breaking: newTarget``, contract ``version``
    2.x and later publishes to ``<target>_v<major>`` (quarantine likewise), so a breaking major
    version gets a table of its own and the old one stays for its consumers."""
    suffix = versioned_suffix(settings.evolution.breaking, version)

    def table(ref: TableRef | None, default: str) -> dict:
        if ref is not None and suffix:
            ref = ref.model_copy(update={"table": ref.table and ref.table + suffix,
                                         "path": ref.path and ref.path.rstrip("/") + suffix})
        return _address(ref or TableRef(table=default), server)

    return _shared_connections({
        "landing": _address(settings.landing, server),
        "candidate_schema": _address(TableRef(table=settings.candidate.schema_), server),
        "target": table(settings.target, object_name + suffix),
        "quarantine": table(settings.quarantine, f"{object_name}{suffix}_quarantine"),
        "decisions": table(settings.decisions, DECISIONS_TABLE),
        **({"references": {alias: _address(ref, server) for alias, ref in sorted(settings.references.items())}}
           if settings.references else {}),
    })


def _store(address: dict) -> tuple[str, str] | None:
    """(scheme family, bucket or container) of an object-storage path; None for anything else."""
    match = _STORE.match(address.get("path") or "") if address.get("kind") == "path" else None
    if match is None or match.group(1).lower() == "file":
        return None
    scheme = match.group(1).lower()
    return _SAME_STORE.get(scheme, scheme), match.group(2)


def _shared_connections(tables: dict) -> dict:
    """An object-storage path that names no connection (the candidates under an ``s3a://`` root,
    the decision log) takes the one another of the contract's addresses names for the same bucket:
    every reader of the plan (a job, the landing watch, the decision log) then finds it there."""
    named: dict[tuple[str, str], str] = {}
    for address in tables.values():
        if "kind" in address and (store := _store(address)) and address.get("connection"):
            named.setdefault(store, address["connection"])
    for address in tables.values():
        if "kind" in address and (store := _store(address)) in named and not address.get("connection"):
            address["connection"] = named[store]
    return tables


def freshness_sla(sla_properties: list, object_name: str, columns: dict[str, str],
                  default_element: str | None = None, other_objects: tuple[str, ...] = (),
                  own_names: tuple[str, ...] = ()) -> dict | None:
    """The freshness/latency SLA as max age in seconds on a date or timestamp column.

    ``element`` is ``table.column`` or just ``column`` (``slaDefaultElement`` when absent); an
    SLA whose element names another of the contract's ``other_objects`` is that object's, and one
    without an element, or whose element is the object itself (one of ``own_names``, see
    :func:`object_level_slas`), checks nothing. ``value`` is a number with ``unit``, or a text
    with its unit (``25h``). Of several, the strictest holds. RuleError keys are ``[index, key]``
    into ``slaProperties``."""
    found = None
    for index, sla in enumerate(sla_properties):
        if sla.property not in ("freshness", "latency"):
            continue
        element = sla.element or default_element or ""
        if not element or element in own_names:  # it names no column the gate could check
            continue
        if not element.startswith(object_name + ".") and any(element.startswith(o + ".") for o in other_objects):
            continue
        if other_objects and _resolved_column(element, object_name, columns) is None:
            continue  # in a contract of several objects, an element none of ours is another object's
        column = _sla_column(element, object_name, columns, index)
        value, unit = _value_and_unit(sla, index)
        if unit not in _UNIT_SECONDS:
            raise RuleError(f"unknown SLA unit {sla.unit!r}; use one of {', '.join(sorted(_UNIT_SECONDS))}", [index, "unit"])
        sla_found = {"column": column, "column_type": columns[column], "property": sla.property, "value": value,
                     "unit": sla.unit or unit, "max_age_seconds": int(value * _UNIT_SECONDS[unit])}
        if found is None or sla_found["max_age_seconds"] < found["max_age_seconds"]:
            found = sla_found  # several SLAs (freshness and latency): the strictest is the one checked
    return found


def object_level_slas(sla_properties: list, own_names: tuple[str, ...]) -> list[int]:
    """The indexes of freshness/latency SLAs whose element is the object itself (its name or
    physicalName): an expectation on the whole object that names no date column to measure."""
    return [index for index, sla in enumerate(sla_properties)
            if sla.property in ("freshness", "latency") and sla.element in own_names]


def _value_and_unit(sla, index: int) -> tuple[float, str]:
    """An SLA's positive value and its unit (lower case): ``value`` and ``unit``, or a text
    ``value`` that carries its unit (``25h``), agreeing with ``unit`` where both say one."""
    value, unit = sla.value, (sla.unit or "").lower()
    if isinstance(value, str) and (match := _VALUE_WITH_UNIT.fullmatch(value)):
        written = match.group(2).lower()
        if unit and written != unit:
            raise RuleError(f"SLA value {value!r} says unit {written!r}, unit says {sla.unit!r}", [index, "unit"])
        value, unit = float(match.group(1)), written
        value = int(value) if value.is_integer() else value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise RuleError(f"SLA value must be a positive number, or one with its unit (25h), got {value!r}",
                        [index, "value"])
    return value, unit


def _resolved_column(element: str, object_name: str, columns: dict[str, str]) -> str | None:
    """The column of ours ``element`` names, or None. A column name may itself contain dots, so
    whole names are matched rather than split; the table part may be the object's physical name
    (``tab1.txn_ref_dt`` for object ``tbl``), so a column of ours after the last dot counts."""
    column = element[len(object_name) + 1:] if element.startswith(object_name + ".") else element
    if column in columns:
        return column
    if "." in element and element.rsplit(".", 1)[1] in columns:
        return element.rsplit(".", 1)[1]
    return None


def _sla_column(element: str, object_name: str, columns: dict[str, str], index: int) -> str:
    column = _resolved_column(element, object_name, columns)
    if column is None:
        raise RuleError(f"element {element!r} is not a column of {object_name!r}", [index, "element"])
    if columns[column] not in ("date", "timestamp", "timestamp_ntz"):
        raise RuleError(f"freshness needs a date or timestamp column; {column!r} is {columns[column]}", [index, "element"])
    return column
