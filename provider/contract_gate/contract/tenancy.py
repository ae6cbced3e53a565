"""Which connections and tables a contract may name when one gate serves several teams.

A contract names Airflow connections (``execution.connectionId``, a table's ``connection``) and
the tables it reads besides its own (its ``landing``, its query ``references``). Where one team
runs the gate, the server's root, ``[contract_gate] landing_roots`` and the connections' own
grants bound them. Where several teams share it, the gate's connections and principal reach
every team's data: team A's contract could name team B's landing table, or B's connection, and
freeze B's rows into a candidate and a quarantine that A may read. ``[contract_gate] tenants``
binds each contract file to what its team may name::

    {"billing*.yaml": {"connections": ["databricks_billing"],
                       "reads": ["main.drops.billing_*", "/data/drops/billing"]}}

* Keys are glob patterns of contract **file names**, the patterns a CODEOWNERS file guards: a
  team cannot put its file under another team's pattern without that team's review, while the
  contract's ``id`` is whatever its author writes. A file no pattern matches is refused; a file
  several match may name what any of them allows.
* ``connections``: the connection ids its contracts may name. Naming none keeps the execution
  mode's default connection, which the platform team chooses.
* ``reads``: where its landings and references may be. An entry with ``/`` or ``://`` is a folder
  or URI (relative: to the gate's home): the table is that folder or lies below it, no symbolic
  link leading out. Any other entry is a catalog name pattern (``*``, ``?``), matched without
  regard to case against the table's full name. A contract's own target and quarantine are
  always its to read.

Unset, the deployment has one tenant and nothing here applies. The compiler reports each problem
at its YAML path; every gate task compiles its contract again, so the worker's setting binds
before any job starts. Standard library, the plan's addresses and :mod:`contract_gate.config` only.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contract_gate import config
from contract_gate.contract.table_locations import canonical, under
from contract_gate_plan.addresses import Address

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class TenancySettingError(ValueError):
    """``[contract_gate] tenants`` is not a JSON object of file-name patterns and what each may name."""


@dataclass(frozen=True)
class Tenant:
    """What the contract files of one or more patterns may name."""

    patterns: tuple[str, ...]
    connections: frozenset[str]
    reads: tuple[str, ...]

    def may_read(self, address: Address) -> bool:
        return any(_reads(entry, address) for entry in self.reads)

    def read_refusal(self, address: Address) -> str | None:
        """Why the tenant may not read ``address``; None when it may."""
        if self.may_read(address):
            return None
        return (f"{address.location!r} is not where the contract's tenant ({', '.join(self.patterns) or 'none'} in "
                f"{config.describe('tenants')}) may read; its reads: {', '.join(self.reads) or 'none'}")


def tenant_of(file_name: str) -> Tenant | None:
    """The tenant of the contract file ``file_name`` (its name, not its path): every entry whose
    pattern matches it, together. None when the deployment sets no tenants (one team). Raises
    :class:`TenancySettingError` for a malformed option."""
    entries = _tenants()
    if entries is None:
        return None
    matched = [(pattern, entry) for pattern, entry in entries.items() if fnmatch.fnmatchcase(file_name, pattern)]
    return Tenant(patterns=tuple(pattern for pattern, _ in matched),
                  connections=frozenset(c for _, entry in matched for c in entry.get("connections", ())),
                  reads=tuple(r for _, entry in matched for r in entry.get("reads", ())))


def tenancy_problems(file_name: str, settings: Any, tables: dict, sources: Sequence[tuple[str, dict]]
                     ) -> list[tuple[str, str]]:
    """(YAML path, message) of each connection and read of the contract that its tenant does not
    allow; empty when the deployment sets no tenants.

    ``settings``: the validated gate settings; ``tables``: their resolved addresses;
    ``sources``: (YAML path, value) of the ``contractGate`` entries, the object's own last."""
    try:
        tenant = tenant_of(file_name)
    except TenancySettingError as exc:
        return [("", str(exc))]
    if tenant is None:
        return []
    if not tenant.patterns:
        return [("", f"no entry of {config.describe('tenants')} matches the contract file name {file_name!r}, so "
                     "no team's connections and landings are its to name; ask the platform team to add its file "
                     "name pattern")]
    where = _Where(sources)
    problems = []
    for keys, connection in _connections(settings):
        if connection not in tenant.connections:
            allowed = ", ".join(sorted(tenant.connections)) or "none"
            problems.append((where(*keys), f"connection {connection!r} is not one the contract's tenant "
                                           f"({', '.join(tenant.patterns)} in {config.describe('tenants')}) may "
                                           f"name; it may name: {allowed}"))
    own = {canonical(Address.as_written(tables[role])) for role in ("target", "quarantine")}
    reads: list[tuple[tuple[str, ...], dict]] = [
        (("landing", "path" if settings.landing.path is not None else "table"), tables["landing"])]
    reads += [(("references", alias, "table"), address) for alias, address in (tables.get("references") or {}).items()]
    for keys, document in reads:
        address = Address.as_written(document)
        refusal = None if canonical(address) in own else tenant.read_refusal(address)
        if refusal:
            problems.append((where(*keys), refusal))
    return problems


def _tenants() -> dict[str, dict] | None:
    text = config.get("tenants")
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise TenancySettingError(f"{config.describe('tenants')} is not JSON: {exc}") from exc
    if not isinstance(value, dict) or not all(_entry_ok(entry) for entry in value.values()):
        raise TenancySettingError(
            f"{config.describe('tenants')} must be a JSON object of contract file name patterns, each with "
            'the "connections" and "reads" its contracts may name, e.g. {"billing*.yaml": {"connections": '
            '["databricks_billing"], "reads": ["main.drops.billing_*"]}}')
    return value


def _entry_ok(entry: object) -> bool:
    return isinstance(entry, dict) and set(entry) <= {"connections", "reads"} and all(
        isinstance(entry.get(key, []), list) and all(isinstance(item, str) and item for item in entry.get(key, []))
        for key in ("connections", "reads"))


def _connections(settings: Any) -> list[tuple[tuple[str, ...], str]]:
    """(settings keys, connection id) of every connection the contract names."""
    named: list[tuple[tuple[str, ...], str | None]] = [(("execution", "connectionId"), settings.execution.connection_id)]
    named += [((key, "connection"), ref.connection) for key, ref in
              (("landing", settings.landing), ("target", settings.target), ("quarantine", settings.quarantine),
               ("decisions", settings.decisions)) if ref is not None]
    named += [(("references", alias, "connection"), ref.connection) for alias, ref in settings.references.items()]
    return [(keys, connection) for keys, connection in named if connection is not None]


def _reads(entry: str, address: Address) -> bool:
    if "/" not in entry:  # a catalog name pattern
        return not address.is_path and fnmatch.fnmatchcase(address.location.lower(), entry.lower())
    if not address.is_path:
        return False
    if _URI.match(entry) or _URI.match(address.location):
        return address.location.rstrip("/") == entry.rstrip("/") or under(address.location, entry)
    # the folder itself or below it, compared as the files are reached: symbolic links followed
    real, folder = (os.path.realpath(Address(kind="path", path=p).resolved().location)
                    for p in (address.location, entry))
    return real == folder or real.startswith(folder.rstrip("/") + "/")


class _Where:
    """The YAML path of a settings key: in the object's own ``contractGate`` entry where it is
    given there, else in the contract's."""

    def __init__(self, sources: Sequence[tuple[str, dict]]) -> None:
        self.sources = sources

    def __call__(self, *keys: str) -> str:
        for path, value in reversed(self.sources):
            node: Any = value
            for key in keys:
                node = node.get(key) if isinstance(node, dict) else None
            if node is not None:
                return ".".join((path, *keys))
        return self.sources[0][0] if self.sources else ""
