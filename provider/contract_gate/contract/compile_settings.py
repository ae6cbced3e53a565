"""A schema object's gate settings (its ``contractGate`` entry over the contract's), the
environment's server and its type, the table addresses there, who may read them, and the
freshness SLA."""

from __future__ import annotations

from pathlib import Path

import pydantic

from contract_gate.contract import rules
from contract_gate.contract.compile_state import CONTROL_CHARACTER, CompileState, near_miss
from contract_gate.contract.environments import freshness_sla, object_level_slas, resolve_tables, select_server
from contract_gate.contract.errors import yaml_path
from contract_gate.contract.settings import GATE_PROPERTY, GateSettings, settings_errors
from contract_gate.contract.table_locations import IDENTIFIER, IDENTIFIER_FORM, location_problems
from contract_gate.contract.tenancy import tenancy_problems


class SettingsCompiler:
    """Gate settings, servers and SLA of a schema object, recorded in the compile's ``state``."""

    def __init__(self, state: CompileState) -> None:
        self.state = state

    # -- settings, servers, SLA ----------------------------------------------------------
    def chosen_server_type(self) -> str | None:
        """The type of the environment's server (``pick_server`` reports a wrong environment)."""
        try:
            server = select_server(self.state.loaded.model.servers or [], self.state.env)
        except ValueError:
            return None
        return server.type if server is not None else None

    def gate_settings(self, obj) -> GateSettings | None:
        """The object's gate settings: its own ``contractGate`` entry over the contract's (key by
        key, nested mappings merged), ``{object}`` in the landing made the object's name. An object
        without a landing is documentation only (``self.state.not_gated``), not an error."""
        contract_level = self.settings_entry(self.state.loaded.model.customProperties, "customProperties")
        object_level = self.settings_entry(obj.customProperties, f"{self.state.base}.customProperties")
        if contract_level is None and object_level is None:
            self.state.not_gated = "no contractGate settings, so no landing"
            return None
        entries = self.state.settings_sources = [entry for entry in (contract_level, object_level) if entry is not None]
        value: dict = {}
        for _, given in entries:
            value = _merged(value, given)
        landing = value.get("landing")
        if landing is None:
            self.state.not_gated = "no landing in its contractGate settings"
            return None
        if isinstance(landing, dict):
            landing_from_contract = object_level is None or "landing" not in object_level[1]
            if landing_from_contract and len(self.state.objects) > 1 \
                    and not any("{object}" in str(v) for v in (landing.get("path"), landing.get("table"))):
                assert contract_level is not None  # the landing came from it
                self.state.error(f"{contract_level[0]}.landing", "a contract with several schema objects gives each its "
                           "landing: in the object's own contractGate entry, or here with {object} in the path "
                           "or table name")
                return None
            value["landing"] = {key: v.replace("{object}", obj.name) if key in ("path", "table") and isinstance(v, str)
                                else v for key, v in landing.items()}
        try:
            return GateSettings.model_validate(value)
        except pydantic.ValidationError as exc:
            for parts, message in settings_errors(exc):
                where = object_level if object_level is not None and _has_key(object_level[1], parts) else entries[0]
                self.state.error(yaml_path([where[0], *parts]), message)
            return None

    def settings_entry(self, custom_properties, base: str) -> tuple[str, dict] | None:
        """(YAML path of its value, value) of the one ``contractGate`` entry in ``custom_properties``."""
        entries = []
        for i, custom in enumerate(custom_properties or []):
            meant = near_miss(custom.property, (GATE_PROPERTY,))
            if meant:
                self.state.error(f"{base}[{i}].property", f"unknown custom property {custom.property!r}; did you mean {meant!r}?")
            elif custom.property == GATE_PROPERTY:
                entries.append((i, custom))
        if not entries:
            return None
        if len(entries) > 1:
            self.state.error(f"{base}[{entries[1][0]}]", f"{GATE_PROPERTY} is given more than once")
            return None
        index, entry = entries[0]
        if not isinstance(entry.value, dict):
            self.state.error(f"{base}[{index}].value", f"{GATE_PROPERTY} settings must be a mapping")
            return None
        return f"{base}[{index}].value", entry.value

    def table_addresses(self, settings: GateSettings, server, object_name: str) -> dict:
        """The plan's table addresses, after every name and path that leads there is checked
        (``table_locations``: identifiers, under the server's root, no overlaps; ``tenancy``: the
        connections and reads the deployment allows the contract file). The object's
        ``physicalName``, where given, is its table: the target's default name (and its quarantine's)."""
        table_name = self.state.objects[self.state.index].physicalName or object_name
        tables = resolve_tables(settings, server, table_name, self.state.loaded.model.version)
        index = next((i for i, s in enumerate(self.state.loaded.model.servers or []) if s is server), None)
        problems = location_problems(self.state.loaded.raw, settings, server, index, object_name, tables)
        if not problems:  # a tenant's reads are judged on addresses that are sound
            problems = tenancy_problems(Path(self.state.loaded.file).name, settings, tables, self.state.settings_sources)
        for path, message in problems:
            self.state.error(path, message)
        if not IDENTIFIER.fullmatch(table_name) and (settings.target is None or settings.quarantine is None):
            self.state.error(f"{self.state.base}.physicalName", f"physicalName {table_name!r} names the target table and its "
                       f"quarantine: it must be {IDENTIFIER_FORM}, or name them in the {GATE_PROPERTY} settings")
        return tables

    def access(self, server) -> dict | None:
        """Who may read the gate's tables on Databricks (``unity_catalog.grants``), from the
        ODCS ``roles`` of the chosen server, else of the contract: ``access: read`` roles are
        consumers (the target only), ``access: write`` roles the contract owner (also the
        quarantine and its candidates). Role names are principals, quoted wherever they are used."""
        servers = self.state.loaded.model.servers or []
        index = next((i for i, s in enumerate(servers) if s is server), None)
        roles, base = (server.roles, f"servers[{index}].roles") if server is not None and server.roles \
            else (self.state.loaded.model.roles or [], "roles")
        access: dict[str, list[str]] = {"consumers": [], "owners": []}
        for j, role in enumerate(roles):
            kind = {"read": "consumers", "write": "owners"}.get((role.access or "").lower())
            if kind is None:
                self.state.error(f"{base}[{j}].access", f"access {role.access!r} is not one the gate can grant: 'read' (a "
                                                  "consumer: SELECT on the target) or 'write' (the contract owner: "
                                                  "also the quarantine and its candidates; only the gate writes)")
            elif not role.role or CONTROL_CHARACTER.search(role.role):
                self.state.error(f"{base}[{j}].role", "a role names a principal: non-empty, without control characters")
            else:
                access[kind].append(role.role)
        return access if roles else None

    def pick_server(self):
        try:
            return select_server(self.state.loaded.model.servers or [], self.state.env)
        except ValueError as exc:
            self.state.error("servers", str(exc))
            return None

    def freshness(self, object_name: str) -> dict | None:
        slas = self.state.loaded.model.slaProperties or []
        physical_name = self.state.objects[self.state.index].physicalName
        own_names = (object_name, *([physical_name] if physical_name else []))
        for index in object_level_slas(slas, own_names):
            self.state.warn(f"slaProperties[{index}].element", f"element {slas[index].element!r} is the object itself: "
                            "the gate measures freshness on a date or timestamp column "
                            f"({object_name}.<column>), so it does not check this SLA")
        try:
            others = tuple(o.name for o in self.state.objects if o.name and o.name != object_name)
            return freshness_sla(slas, object_name, self.state.columns, self.state.loaded.model.slaDefaultElement,
                                 others, own_names)
        except rules.RuleError as exc:
            index, *keys = exc.keys()
            self.state.error(yaml_path([f"slaProperties[{index}]", *keys]), str(exc))
            return None


def _merged(base: dict, override: dict) -> dict:
    """``override`` over ``base``, nested mappings merged key by key."""
    result = dict(base)
    for key, value in override.items():
        result[key] = _merged(result[key], value) if isinstance(value, dict) and isinstance(result.get(key), dict) else value
    return result


def _has_key(value: dict, parts: list) -> bool:
    """Whether ``value`` (a settings mapping) holds the first key of an error's path."""
    return bool(parts) and isinstance(value, dict) and parts[0] in value
