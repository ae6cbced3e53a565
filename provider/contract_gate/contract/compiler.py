"""Compile a loaded ODCS contract into a ValidationPlan (see docs/plan-format.md).

The plan is deterministic: the same contract and environment give byte-identical JSON
(:func:`render_plan`) and the same ``fingerprint``. Every problem found is collected and
raised together as one :class:`ContractError`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pydantic

from contract_gate.contract import dqx, rules
from contract_gate.contract.environments import freshness_sla, resolve_tables, select_server
from contract_gate.contract.errors import ContractError, ContractIssue, yaml_path
from contract_gate.contract.loader import LoadedContract, load_contract
from contract_gate.contract.settings import GATE_PROPERTY, GateSettings, settings_errors
from contract_gate.contract.spark_types import TypeSyntaxError, is_numeric, spark_type
from contract_gate.contract.sqltext import check_query, quote_identifier

PLAN_VERSION = 1
# Characters Delta refuses in column names unless column mapping is on.
_DELTA_RESERVED_NAME_CHARS = set(" ,;{}()\n\t=")
_PROPERTY_OPTIONS = {"notBlank", "sampleAllowed"}  # our property-level customProperties
_LIBRARY_ROW_METRICS = ("nullValues", "missingValues", "invalidValues")


def compile_plan(contract: str | Path | LoadedContract, env: str | None = None) -> dict:
    """Load (if given a path) and compile a contract. Raises :class:`ContractError`."""
    loaded = contract if isinstance(contract, LoadedContract) else load_contract(contract)
    return _Compiler(loaded, env).compile()


def render_plan(plan: dict) -> str:
    return json.dumps(plan, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def plan_fingerprint(plan: dict) -> str:
    body = {k: v for k, v in plan.items() if k != "fingerprint"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class _Compiler:
    def __init__(self, loaded: LoadedContract, env: str | None):
        self.loaded = loaded
        self.env = env
        self.issues: list[ContractIssue] = []
        self.rules: list[dict] = []
        self.columns: dict[str, str] = {}  # name -> Spark type, contract order
        self.key: list[str] = []

    # -- helpers -------------------------------------------------------------------------
    def error(self, path: str, message: str) -> None:
        self.issues.append(self.loaded.issue(path, message))

    def rule_error(self, base: str, exc: rules.RuleError) -> None:
        key = exc.key if isinstance(exc.key, list) else ([exc.key] if exc.key is not None else [])
        path = yaml_path([base, *key]) if base else yaml_path(key)
        self.error(path, str(exc))

    def add_rule(self, source: str, rule_id: str, explicit_id: bool, **fields) -> None:
        taken = {r["id"] for r in self.rules}
        if rule_id in taken:
            if explicit_id:
                self.error(source, f"duplicate rule id {rule_id!r}")
                return
            n = 2
            while f"{rule_id}_{n}" in taken:
                n += 1
            rule_id = f"{rule_id}_{n}"
        rule = {"id": rule_id, "source": source, "severity": "error", "filter": None, "threshold": None,
                "predicate": None, "description": None, **fields}
        rule["enforceable"] = (rule["scope"] == "row" and rule["filter"] is None and rule["threshold"] is None
                               and rule["severity"] == "error")
        self.rules.append(rule)

    # -- the compile ---------------------------------------------------------------------
    def compile(self) -> dict:
        model = self.loaded.model
        objects = model.schema_ or []
        if len(objects) != 1:
            self.error("schema", f"the gate guards exactly one dataset; found {len(objects)} schema objects")
            raise ContractError(self.loaded.file, sorted(self.issues))
        obj = objects[0]
        columns = self.compile_columns(obj)
        self.key = self.compile_key(obj)
        self.compile_property_rules(obj)
        self.compile_quality(obj.quality or [], "schema[0]", column=None)
        settings = self.gate_settings()
        server = self.pick_server()
        freshness = self.freshness(obj.name)
        tables = None
        if settings is not None and not self.issues:
            tables = resolve_tables(settings, server, obj.name)
        if self.issues:
            raise ContractError(self.loaded.file, sorted(self.issues, key=lambda i: (i.line or 0, i.path, i.message)))
        plan = {
            "plan_version": PLAN_VERSION,
            "contract": {"id": model.id, "version": model.version, "name": model.name, "domain": model.domain},
            "object": obj.name,
            "environment": server.server if server is not None else None,
            "columns": columns,
            "key": self.key,
            "rules": self.rules,
            "schema_policy": settings.schema_policy if settings else "strict",
            "delta_column_mapping": any(set(name) & _DELTA_RESERVED_NAME_CHARS for name in self.columns),
            "freshness": freshness,
            "gate": settings.model_dump(mode="json", by_alias=True) if settings else None,
            "tables": tables,
        }
        plan["fingerprint"] = plan_fingerprint(plan)
        return plan

    def compile_columns(self, obj) -> list[dict]:
        result = []
        for i, prop in enumerate(obj.properties or []):
            base = f"schema[0].properties[{i}]"
            name = prop.name
            if not name or name != name.strip() or any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
                self.error(f"{base}.name", f"unsafe column name {name!r}: it must be non-empty, with no control "
                                           "characters and no leading or trailing spaces")
                continue
            if name in self.columns:
                self.error(f"{base}.name", f"duplicate property name {name!r}")
                continue
            if prop.properties or prop.items:
                self.error(base, "nested properties/items are not supported; give the nested type in physicalType")
            if prop.physicalType is None:
                self.error(base, "physicalType is required: it is the exact Spark type the gate checks")
                continue
            try:
                column_type = spark_type(prop.physicalType)
            except TypeSyntaxError as exc:
                self.error(f"{base}.physicalType", str(exc))
                continue
            self.columns[name] = column_type
            options = self.property_options(prop, base)
            result.append({
                "name": name, "type": column_type, "nullable": not (prop.required or prop.primaryKey),
                "classification": prop.classification, "description": prop.description,
                "sample_allowed": bool(options.get("sampleAllowed")) and prop.classification is None,
            })
        return result

    def property_options(self, prop, base: str) -> dict:
        options = {}
        for j, custom in enumerate(prop.customProperties or []):
            if custom.property in _PROPERTY_OPTIONS:
                options[custom.property] = custom.value
                if custom.property == "sampleAllowed" and not isinstance(custom.value, bool):
                    self.error(f"{base}.customProperties[{j}].value", "sampleAllowed must be true or false")
        return options

    def compile_key(self, obj) -> list[str]:
        keyed = [(i, p) for i, p in enumerate(obj.properties or []) if p.primaryKey and p.name in self.columns]
        if not keyed:
            return []
        positions = [p.primaryKeyPosition for _, p in keyed]
        if len(keyed) > 1 or any(pos not in (None, -1) for pos in positions):
            expected = list(range(1, len(keyed) + 1))
            if sorted(pos if pos is not None else -1 for pos in positions) != expected:
                for i, p in keyed:
                    self.error(f"schema[0].properties[{i}].primaryKeyPosition",
                               f"primary key positions must be 1..{len(keyed)} without gaps or repeats; "
                               f"found {sorted(pos if pos is not None else -1 for pos in positions)}")
                    break
                return [p.name for _, p in keyed]
            keyed.sort(key=lambda item: item[1].primaryKeyPosition)
        return [p.name for _, p in keyed]

    def compile_property_rules(self, obj) -> None:
        for i, prop in enumerate(obj.properties or []):
            name = prop.name
            if name not in self.columns:
                continue
            base = f"schema[0].properties[{i}]"
            column_type = self.columns[name]
            col = quote_identifier(name)
            if prop.required or prop.primaryKey:
                source = f"{base}.required" if prop.required else f"{base}.primaryKey"
                self.add_rule(source, f"{name}.required", False, kind="required", scope="row", columns=[name],
                              predicate=f"{col} IS NOT NULL")
            if prop.unique and self.key != [name]:
                self.add_rule(f"{base}.unique", f"{name}.unique", False, kind="unique", scope="group",
                              columns=[name], nulls_distinct=False)
            self.compile_type_options(prop, base, name, column_type)
            if prop.enum:
                self.compile_enum(prop, base, name, column_type)
            options = self.property_options(prop, base)
            if "notBlank" in options:
                j = next(j for j, c in enumerate(prop.customProperties) if c.property == "notBlank")
                if column_type != "string":
                    self.error(f"{base}.customProperties[{j}]", "notBlank applies to string columns")
                else:
                    try:
                        self.add_rule(f"{base}.customProperties[{j}]", f"{name}.not_blank", False, kind="not_blank",
                                      scope="row", columns=[name], predicate=rules.not_blank(name, options["notBlank"]))
                    except rules.RuleError as exc:
                        self.rule_error(f"{base}.customProperties[{j}].value", exc)
            self.compile_quality(prop.quality or [], base, column=name)
        if self.key:
            index = next(i for i, p in enumerate(obj.properties) if p.name == self.key[0])
            self.add_rule(f"schema[0].properties[{index}].primaryKey", "key.unique", False, kind="unique",
                          scope="group", columns=list(self.key), nulls_distinct=False)

    def compile_type_options(self, prop, base: str, name: str, column_type: str) -> None:
        options = prop.logicalTypeOptions or {}
        known = set(rules.RANGE_OPTIONS) | {"minLength", "maxLength", "pattern", "format", "multipleOf",
                                            "timezone", "defaultTimezone"}
        for option in sorted(set(options) - known):
            self.error(f"{base}.logicalTypeOptions.{option}", f"unknown logicalTypeOptions key {option!r}")
        bounds = {}
        for option, (kind, operator) in rules.RANGE_OPTIONS.items():
            if option not in options:
                continue
            path = f"{base}.logicalTypeOptions.{option}"
            if not (is_numeric(column_type) or column_type in ("date", "timestamp", "timestamp_ntz")):
                self.error(path, f"{option} applies to numeric, date and timestamp columns, not {column_type}")
                continue
            try:
                literal = rules.literal_for(options[option], column_type)
            except rules.RuleError as exc:
                self.error(path, str(exc))
                continue
            bounds[option] = options[option]
            self.add_rule(path, f"{name}.{kind}", False, kind=kind, scope="row", columns=[name],
                          predicate=rules.comparison(name, column_type, operator, literal))
        lows = [bounds[k] for k in ("minimum", "exclusiveMinimum") if k in bounds]
        highs = [bounds[k] for k in ("maximum", "exclusiveMaximum") if k in bounds]
        if lows and highs and str(type(lows[0])) == str(type(highs[0])) and max(lows) > min(highs):
            self.error(f"{base}.logicalTypeOptions", f"the lower bound {max(lows)!r} is above the upper bound {min(highs)!r}")
        if "multipleOf" in options:
            path = f"{base}.logicalTypeOptions.multipleOf"
            if not is_numeric(column_type):
                self.error(path, f"multipleOf applies to numeric columns, not {column_type}")
            else:
                try:
                    literal = rules.literal_for(options["multipleOf"], column_type)
                    self.add_rule(path, f"{name}.multiple_of", False, kind="multiple_of", scope="row", columns=[name],
                                  predicate=rules.nullable_check(name, f"{quote_identifier(name)} % {literal} = 0"))
                except rules.RuleError as exc:
                    self.error(path, str(exc))
        lengths = {}
        for option, kind, operator in (("minLength", "min_length", ">="), ("maxLength", "max_length", "<=")):
            if option not in options:
                continue
            path = f"{base}.logicalTypeOptions.{option}"
            value = options[option]
            if column_type != "string":
                self.error(path, f"{option} applies to string columns, not {column_type}")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                self.error(path, f"{option} must be a whole number >= 0, got {value!r}")
            else:
                lengths[option] = value
                self.add_rule(path, f"{name}.{kind}", False, kind=kind, scope="row", columns=[name],
                              predicate=rules.nullable_check(name, f"char_length({quote_identifier(name)}) {operator} {value}"))
        if lengths.get("minLength", 0) > lengths.get("maxLength", float("inf")):
            self.error(f"{base}.logicalTypeOptions", f"minLength {lengths['minLength']} is above maxLength {lengths['maxLength']}")
        if "pattern" in options:
            path = f"{base}.logicalTypeOptions.pattern"
            pattern = options["pattern"]
            if column_type != "string":
                self.error(path, f"pattern applies to string columns, not {column_type}")
            elif not isinstance(pattern, str) or not pattern:
                self.error(path, "pattern must be a non-empty string")
            else:
                self.add_rule(path, f"{name}.pattern", False, kind="pattern", scope="row", columns=[name],
                              predicate=rules.nullable_check(name, f"{quote_identifier(name)} RLIKE {rules.string_literal(pattern)}"))

    def compile_enum(self, prop, base: str, name: str, column_type: str) -> None:
        literals = []
        for j, item in enumerate(prop.enum):
            try:
                literals.append(rules.literal_for(item.value, column_type))
            except rules.RuleError as exc:
                self.error(f"{base}.enum[{j}].value", f"enum value of the wrong type: {exc}")
        if len(literals) == len(prop.enum):
            self.add_rule(f"{base}.enum", f"{name}.enum", False, kind="enum", scope="row", columns=[name],
                          predicate=rules.nullable_check(name, rules.in_list(name, literals)))

    # -- quality entries -----------------------------------------------------------------
    def compile_quality(self, entries, base: str, column: str | None) -> None:
        for j, quality in enumerate(entries):
            path = f"{base}.quality[{j}]"
            entry = quality.model_dump(exclude_none=True)
            try:
                self.compile_quality_entry(entry, path, column)
            except rules.RuleError as exc:
                self.rule_error(path, exc)

    def compile_quality_entry(self, entry: dict, path: str, column: str | None) -> None:
        kind = entry.get("type") or ("library" if "metric" in entry or "rule" in entry else "library")
        severity = _severity(entry.get("severity"))
        explicit = entry.get("id") or entry.get("name")
        common = {"severity": severity, "description": entry.get("description")}
        if kind == "text":
            self.add_rule(path, explicit or f"{column or 'dataset'}.text", bool(explicit), kind="text", scope="text",
                          columns=[column] if column else [], **common)
        elif kind == "library":
            self.compile_metric(entry, path, column, explicit, common)
        elif kind == "sql":
            placeholders = {"object", "property"} if column else {"object"}
            try:
                check_query(entry["query"], placeholders)
            except ValueError as exc:
                raise rules.RuleError(f"unsafe or invalid query: {exc}", "query") from exc
            self.add_rule(path, explicit or f"{column or 'dataset'}.sql", bool(explicit), kind="sql", scope="query",
                          columns=[column] if column else [], query=entry["query"].strip().rstrip(";").strip(),
                          threshold=rules.threshold_from(entry), **common)
        elif kind == "custom":
            engine = entry.get("engine")
            if engine == "spark-sql":
                if not isinstance(entry.get("implementation"), str):
                    raise rules.RuleError("engine spark-sql needs a boolean expression as implementation", "implementation")
                predicate = rules.custom_expression(entry["implementation"])
                used = [column] if column else rules.referenced_columns(entry["implementation"], list(self.columns))
                self.add_rule(path, explicit or f"{column or 'dataset'}.custom_sql", bool(explicit), kind="custom_sql",
                              scope="row", columns=used, predicate=predicate, **common)
            elif engine == "dqx":
                self.compile_dqx(entry, path, column, explicit, common)
            else:
                raise rules.RuleError(f"unsupported custom engine {engine!r}; supported: spark-sql, dqx", "engine")

    def compile_metric(self, entry: dict, path: str, column: str | None, explicit, common: dict) -> None:
        metric = entry.get("metric") or entry.get("rule")
        threshold = rules.threshold_from(entry)
        arguments = entry.get("arguments") or {}
        rule_id = explicit or f"{column or 'dataset'}.{metric}"
        if metric == "rowCount":
            if arguments:
                raise rules.RuleError("rowCount takes no arguments", "arguments")
            self.add_rule(path, rule_id, bool(explicit), kind="row_count", scope="dataset", columns=[],
                          threshold=threshold, **common)
            return
        if metric == "duplicateValues":
            key = [column] if column else arguments.get("properties")
            if column and arguments:
                raise rules.RuleError("duplicateValues on a property takes no arguments", "arguments")
            if not column and (not isinstance(key, list) or not key):
                raise rules.RuleError("schema-level duplicateValues needs arguments.properties: a list of columns", "arguments")
            for name in key:
                if name not in self.columns:
                    raise rules.RuleError(f"duplicateValues refers to unknown column {name!r}", ["arguments", "properties"])
            self.add_rule(path, rule_id, bool(explicit), kind="unique", scope="group", columns=list(key),
                          nulls_distinct=False, threshold=threshold, metric=metric, **common)
            return
        if metric not in _LIBRARY_ROW_METRICS:
            raise rules.RuleError(f"unknown metric {metric!r}", "metric")
        if column is None:
            raise rules.RuleError(f"{metric} belongs on a property, not on the schema object", "metric")
        col = quote_identifier(column)
        column_type = self.columns[column]
        if metric == "nullValues":
            if arguments:
                raise rules.RuleError("nullValues takes no arguments", "arguments")
            predicate = f"{col} IS NOT NULL"
        elif metric == "missingValues":
            _only(arguments, {"missingValues"})
            missing = arguments.get("missingValues", [])
            literals = [rules.literal_for(v, column_type, ["arguments", "missingValues", k])
                        for k, v in enumerate(missing) if v is not None]
            predicate = f"({col} IS NOT NULL AND NOT {rules.in_list(column, literals)})" if literals else f"{col} IS NOT NULL"
        else:
            _only(arguments, {"validValues", "pattern"})
            if ("validValues" in arguments) == ("pattern" in arguments):
                raise rules.RuleError("invalidValues needs exactly one of arguments.validValues or arguments.pattern", "arguments")
            if "validValues" in arguments:
                valid = arguments["validValues"]
                if not isinstance(valid, list) or not valid:
                    raise rules.RuleError("validValues must be a non-empty list", ["arguments", "validValues"])
                literals = [rules.literal_for(v, column_type, ["arguments", "validValues", k]) for k, v in enumerate(valid)]
                predicate = rules.nullable_check(column, rules.in_list(column, literals))
            else:
                pattern = arguments["pattern"]
                if not isinstance(pattern, str) or not pattern:
                    raise rules.RuleError("pattern must be a non-empty string", ["arguments", "pattern"])
                predicate = rules.nullable_check(column, f"{col} RLIKE {rules.string_literal(pattern)}")
        self.add_rule(path, rule_id, bool(explicit), kind="metric", scope="dataset", columns=[column], metric=metric,
                      predicate=predicate, threshold=threshold, **common)

    def compile_dqx(self, entry: dict, path: str, column: str | None, explicit, common: dict) -> None:
        check = dqx.parse_implementation(entry.get("implementation"))
        arguments = check["check"].setdefault("arguments", {}) or {}
        if column and "column" in dqx.FUNCTIONS.get(check["check"]["function"], ((), {}))[0]:
            arguments.setdefault("column", column)
            check["check"]["arguments"] = arguments
        fields = dqx.compile_check(check, self.columns)
        rule_id = fields.pop("name") or explicit or f"{'.'.join(fields['columns']) or 'dataset'}.{fields['function']}"
        severity = fields.pop("severity")
        self.add_rule(path, rule_id, bool(fields.get("name") or explicit or check.get("name")),
                      **{**common, **fields, "severity": severity})

    # -- settings, servers, SLA ----------------------------------------------------------
    def gate_settings(self) -> GateSettings | None:
        entries = [(i, c) for i, c in enumerate(self.loaded.model.customProperties or []) if c.property == GATE_PROPERTY]
        if not entries:
            return None
        if len(entries) > 1:
            self.error(f"customProperties[{entries[1][0]}]", f"{GATE_PROPERTY} is given more than once")
            return None
        index, entry = entries[0]
        try:
            return GateSettings.model_validate(entry.value)
        except pydantic.ValidationError as exc:
            for parts, message in settings_errors(exc):
                self.error(yaml_path([f"customProperties[{index}].value", *parts]), message)
            return None

    def pick_server(self):
        try:
            return select_server(self.loaded.model.servers or [], self.env)
        except ValueError as exc:
            self.error("servers", str(exc))
            return None

    def freshness(self, object_name: str) -> dict | None:
        try:
            return freshness_sla(self.loaded.model.slaProperties or [], object_name, self.columns)
        except rules.RuleError as exc:
            self.rule_error(f"slaProperties[{exc.key[0]}]" if isinstance(exc.key, list) else "slaProperties",
                            rules.RuleError(str(exc), exc.key[1:] if isinstance(exc.key, list) else None))
            return None


def _severity(value) -> str:
    if value in (None, "error"):
        return "error"
    if value in ("warning", "warn", "info"):
        return "warning"
    raise rules.RuleError(f"severity must be error, warning, warn or info, got {value!r}", "severity")


def _only(arguments: dict, allowed: set[str]) -> None:
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise rules.RuleError(f"unknown argument(s): {', '.join(unknown)}", ["arguments", unknown[0]])
