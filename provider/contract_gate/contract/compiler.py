"""Compile a loaded ODCS contract into a ValidationPlan (see docs/plan-format.md).

The plan is deterministic: the same contract and environment give byte-identical JSON
(``contract_plan.document.render_plan``) and the same ``fingerprint``. Every problem found is collected and
raised together as one :class:`ContractError`.
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from pathlib import Path

import pydantic

from contract_gate.contract import dqx, patterns, rules
from contract_gate.contract.environments import freshness_sla, resolve_tables, select_server
from contract_gate.contract.errors import ContractError, ContractIssue, yaml_path
from contract_gate.contract.loader import LoadedContract, load_contract
from contract_gate.contract.nested import MAX_DEPTH, FieldPath
from contract_gate.contract.physical_types import (TIME_PATTERN, TYPES_DOC, UnmappedType, dialect_of, is_container,
                                                   map_logical, map_physical)
from contract_gate.contract.settings import GATE_PROPERTY, GateSettings, settings_errors
from contract_plan.spark_types import field_name_text, is_numeric, spark_type
from contract_gate.contract.table_locations import IDENTIFIER, IDENTIFIER_FORM, location_problems
from contract_plan.sql_allowlist import SqlNotSpark, check_query, has_lambda, is_deterministic
from contract_plan.sql_text import quote_identifier
from contract_plan.document import PLAN_VERSION, fingerprint
from contract_plan.model import Plan, compiled_plan
from contract_plan.names import gate_names
from contract_plan.empty_batch import RULE_ID as EMPTY_BATCH_RULE_ID
from contract_plan import keys_across_batches

# Characters Delta refuses in column names unless column mapping is on.
_DELTA_RESERVED_NAME_CHARS = set(" ,;{}()\n\t=")
# Our property-level customProperties.
_PROPERTY_OPTIONS = ("notBlank", "sampleAllowed", "allowNonFinite")
_BOOLEAN_PROPERTY_OPTIONS = ("sampleAllowed", "allowNonFinite")
_LIBRARY_ROW_METRICS = ("nullValues", "missingValues", "invalidValues")
# logicalTypeOptions keys that only document (the gate checks the Spark type), or that chose it
# (format, timezone, elementType: physical_types.map_logical). An object's fields all exist in its struct.
_DOCUMENTING_OPTIONS = {"format", "timezone", "defaultTimezone", "minProperties", "maxProperties", "required",
                        "elementType", "distanceMetric", "embeddingModel", "embeddingModelVersion", "normalized"}
# Array options: logicalTypeOptions key -> (rule kind, comparison with the array's size).
_ARRAY_SIZE_OPTIONS = {"minItems": ("min_items", ">="), "maxItems": ("max_items", "<="), "dimensions": ("dimensions", "=")}
_CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f]")
_SAFE_NAME = "it must be non-empty, with no control characters, no '${' and no leading or trailing spaces"
# Rule ids of the Spark side's own checks of a landing (spark_jobs.validation.unparseable_values, contract_plan.empty_batch),
# besides ``<column>.type``, and of the cross-batch key rule (in the plan only when the gate appends).
_GATE_RULE_IDS = ("record.parseable", EMPTY_BATCH_RULE_ID, keys_across_batches.RULE_ID)
_KNOWN_OPTIONS = {*rules.RANGE_OPTIONS, "minLength", "maxLength", "pattern", "multipleOf", *_DOCUMENTING_OPTIONS,
                  *_ARRAY_SIZE_OPTIONS, "uniqueItems"}
# Other tools' names of a query's placeholders (datacontract-cli's {model}, the ODCS schema's
# ${table} and ${column}); the plan carries ours only.
_PLACEHOLDER_SYNONYMS = {"model": "object", "table": "object", "column": "property"}


@dataclass(frozen=True)
class CompiledContract:
    """A contract compiled object by object: one plan per schema object (in contract order) and,
    for the objects that are documentation only, why they are not gated."""

    loaded: LoadedContract
    plans: dict[str, Plan]
    not_gated: dict[str, str]

    @property
    def gated(self) -> dict[str, Plan]:
        """The plans of the objects the gate guards (a landing and tables on the server)."""
        return {name: plan for name, plan in self.plans.items() if name not in self.not_gated}

    def plan(self, object_name: str | None = None) -> Plan:
        """The plan of ``object_name``; without one, of the contract's only object, else of its only
        gated object. Raises :class:`ContractError` naming the objects to choose from."""
        if object_name is not None:
            if object_name not in self.plans:
                raise ContractError(self.loaded.file, [self.loaded.issue(
                    "schema", f"no schema object {object_name!r}; the contract has {_listing(self.plans)}")])
            return self.plans[object_name]
        if len(self.plans) == 1:
            return next(iter(self.plans.values()))
        if len(self.gated) == 1:
            return next(iter(self.gated.values()))
        raise ContractError(self.loaded.file, [self.loaded.issue(
            "schema", f"the contract has {len(self.plans)} schema objects ({_listing(self.plans)}): name one")])


def compile_plans(contract: str | Path | LoadedContract, env: str | None = None) -> CompiledContract:
    """Load (if given a path) and compile every schema object of a contract. Every problem of
    every object is raised together as one :class:`ContractError`."""
    loaded = contract if isinstance(contract, LoadedContract) else load_contract(contract)
    objects = loaded.model.schema_ or []
    if not objects:
        raise ContractError(loaded.file, [loaded.issue("schema", "the contract has no schema object: nothing to gate")])
    issues: list[ContractIssue] = []
    plans: dict[str, Plan] = {}
    not_gated: dict[str, str] = {}
    for index, obj in enumerate(objects):
        compiler = _Compiler(loaded, env, index)
        if obj.name in plans:
            issues.append(loaded.issue(f"schema[{index}].name", f"duplicate schema object name {obj.name!r}"))
            continue
        try:
            plans[obj.name] = compiled_plan(compiler.compile())
        except ContractError as exc:
            issues.extend(exc.issues)
            continue
        if compiler.not_gated:
            not_gated[obj.name] = compiler.not_gated
    if issues:
        raise ContractError(loaded.file, sorted(set(issues), key=lambda i: (i.line or 0, i.path, i.message)))
    return CompiledContract(loaded, plans, not_gated)


def compile_plan(contract: str | Path | LoadedContract, env: str | None = None, object_name: str | None = None) -> Plan:
    """The plan of one schema object (see :meth:`CompiledContract.plan`). Raises :class:`ContractError`."""
    return compile_plans(contract, env).plan(object_name)


def _column_name(prop) -> str:
    """The column of a property in the data: its physicalName where given, else its name."""
    return prop.physicalName or prop.name


def _unsafe_name(name) -> bool:
    """Whether a column or nested field name is refused (:data:`_SAFE_NAME`). Any other text is a
    name: it is back-quoted in every SQL text and type text the gate writes."""
    # "${": Spark replaces ${...} in SQL text with a variable (${env:NAME}) before parsing it
    return not isinstance(name, str) or not name or name != name.strip() or bool(_CONTROL_CHARACTER.search(name)) \
        or "${" in name


def _listing(plans: dict) -> str:
    return ", ".join(repr(name) for name in plans)


def _near_miss(name, known) -> str | None:
    """The known name ``name`` was probably meant to be (``notblank``, ``not_blank``), or None."""
    if not isinstance(name, str) or name in known:
        return None
    folded = re.sub(r"[\W_]", "", name).lower()
    return next((k for k in known if k.lower() == folded), None)


class _Compiler:
    """Compiles schema object ``index`` of a contract into its plan."""

    def __init__(self, loaded: LoadedContract, env: str | None, index: int = 0):
        self.loaded = loaded
        self.env = env
        self.index = index
        self.base = f"schema[{index}]"
        self.not_gated: str | None = None  # why this object is documentation only
        self.settings_sources: list[tuple[str, dict]] = []  # (YAML path, value) of its contractGate entries
        self.issues: list[ContractIssue] = []
        self.rules: list[dict] = []
        self.columns: dict[str, str] = {}  # column (physicalName, else name) -> Spark type, contract order
        self.labels: dict[str, str] = {}  # column -> the property's name, where physicalName differs from it
        self.options: dict[str, dict] = {}  # column -> {option: (customProperties index, value)}
        self.key: list[str] = []
        self.settings: GateSettings | None = None
        self.server_type: str | None = None  # its dialect reads physicalType (physical_types)
        self.field_types: dict[str, tuple[str, str, object]] = {}  # YAML path -> (Spark type, type's path, Mapped)
        self.field_names: set[str] = set()  # of nested fields (Delta needs column mapping for some)
        self.nested_fields: dict[str, tuple[FieldPath, str]] = {}  # dotted path -> (FieldPath, Spark type)

    # -- helpers -------------------------------------------------------------------------
    def error(self, path: str, message: str) -> None:
        self.issues.append(self.loaded.issue(path, message))

    def label(self, column: str) -> str:
        """The property name of a column: what rule ids and reports call it."""
        return self.labels.get(column, column)

    def id_prefix(self, column: str | None) -> str:
        """What a generated rule id starts with: the property name, or ``dataset`` for an object's rule."""
        return self.label(column) if column else "dataset"

    def rule_error(self, base: str, exc: rules.RuleError) -> None:
        self.error(yaml_path([base, *exc.keys()]), str(exc))

    def add_rule(self, source: str, rule_id: str, id_path: str | None = None, first: bool = False, **fields) -> None:
        """Queue a rule; ids are settled in :meth:`assign_ids` once every rule is known.
        ``id_path``: where the contract gave ``rule_id`` (None for a generated id); ``first``: this
        generated rule keeps its id even when another generated rule wants it."""
        rule = {"id": rule_id, "source": source, "severity": "error", "filter": None, "threshold": None,
                "predicate": None, "description": None, **fields}
        rule["enforceable"] = _enforceable(rule)
        self.rules.append({"rule": rule, "id_path": id_path, "first": first})

    def assign_ids(self) -> list[dict]:
        """Contract-given ids must be unique and must not take a generated id (those are
        predictable, and a consumer may look them up). Generated ids that clash get ``_2``,
        ``_3``... in contract order, except ``key.unique`` (a column may be called ``key``)."""
        generated = {e["rule"]["id"]: e["rule"]["source"] for e in self.rules if e["id_path"] is None}
        taken: dict[str, str] = {}
        for entry in self.rules:
            rule, id_path = entry["rule"], entry["id_path"]
            if id_path is None:
                continue
            if rule["id"] in taken:
                self.error(id_path, f"duplicate rule id {rule['id']!r}: also used by {taken[rule['id']]}")
            elif rule["id"] in generated:
                self.error(id_path, f"rule id {rule['id']!r} is the generated id of the rule from "
                                    f"{generated[rule['id']]}; choose another")
            elif rule["id"] in _GATE_RULE_IDS or rule["id"] in {f"{name}.type" for name in self.columns}:
                # the Spark side adds these for every landing; a contract rule must not stand in for one
                self.error(id_path, f"rule id {rule['id']!r} is reserved for the gate's own checks of "
                                    "the landed data; choose another")
            taken[rule["id"]] = rule["source"]
        pending = sorted((e for e in self.rules if e["id_path"] is None), key=lambda e: not e["first"])
        for rule in (e["rule"] for e in pending):
            wanted, n = rule["id"], 2
            while rule["id"] in taken:
                rule["id"], n = f"{wanted}_{n}", n + 1
            taken[rule["id"]] = rule["source"]
        return [entry["rule"] for entry in self.rules]

    # -- the compile ---------------------------------------------------------------------
    def compile(self) -> dict:
        """The plan document (docs/plan-format.md) of the object, with its fingerprint."""
        model = self.loaded.model
        objects = model.schema_
        obj = objects[self.index]
        self.server_type = self.chosen_server_type()
        columns = self.compile_columns(obj)
        self.key = self.compile_key(obj)
        settings = self.settings = self.gate_settings(obj)  # before the rules: queries may use its references
        self.compile_property_rules(obj)
        self.compile_quality(obj.quality or [], self.base, column=None)
        server = self.pick_server()
        freshness = self.freshness(obj.name)
        tables = self.table_addresses(settings, server, obj.name) if settings else None
        access = self.access(server) if settings else None
        plan_rules = self.assign_ids()
        if self.issues:
            raise ContractError(self.loaded.file, sorted(self.issues, key=lambda i: (i.line or 0, i.path, i.message)))
        environment = server.server if server is not None else None
        document = {
            "plan_version": PLAN_VERSION,
            "contract": {"id": model.id, "version": model.version, "name": model.name, "domain": model.domain},
            "object": obj.name,
            "names": gate_names(model.id, obj.name, len(objects), environment),
            "environment": environment,
            "columns": columns,
            "key": self.key,
            "rules": plan_rules,
            "schema_policy": settings.schema_policy if settings else "strict",
            "delta_column_mapping": any(set(name) & _DELTA_RESERVED_NAME_CHARS
                                        for name in (*self.columns, *self.field_names)),
            "freshness": freshness,
            "gate": settings.model_dump(mode="json", by_alias=True) if settings else None,
            "tables": tables,
            **({"access": access} if access else {}),
        }
        document["fingerprint"] = fingerprint(document)
        return document

    # -- columns and key -----------------------------------------------------------------
    def compile_columns(self, obj) -> list[dict]:
        result = []
        for i, prop in enumerate(obj.properties or []):
            base = f"{self.base}.properties[{i}]"
            column_type = self.column_type(prop, base)
            if column_type is None:
                continue
            name = _column_name(prop)
            self.columns[name] = column_type
            if name != prop.name:
                self.labels[name] = prop.name
            options = self.options[name] = self.property_options(prop, base)
            sample_allowed = options.get("sampleAllowed", (None, False))[1]
            column = {
                "name": name, **({"label": prop.name} if name != prop.name else {}),
                "type": column_type, "nullable": not (prop.required or prop.primaryKey),
                "classification": prop.classification, "description": prop.description,
                "sample_allowed": sample_allowed is True and prop.classification is None,
            }
            index, allow_non_finite = options.get("allowNonFinite", (None, False))
            if allow_non_finite is True and column_type not in ("float", "double"):
                self.error(f"{base}.customProperties[{index}].property",
                           f"allowNonFinite applies to float and double columns, not {column_type}")
            elif allow_non_finite is True:  # NaN/Infinity tokens of a CSV/JSON landing fit (spark_jobs.validation.unparseable_values)
                column["allow_non_finite"] = True
            result.append(column)
        return result

    def column_type(self, prop, base: str) -> str | None:
        """The Spark type of a usable column, or None after reporting why it is not one."""
        for key, name in (("name", prop.name), ("physicalName", prop.physicalName)):
            if key == "name" or name is not None:
                if _unsafe_name(name):
                    self.error(f"{base}.{key}", f"unsafe column name {name!r}: {_SAFE_NAME}")
                    return None
        if prop.name in {self.label(column) for column in self.columns}:
            self.error(f"{base}.name", f"duplicate property name {prop.name!r}")
            return None
        if _column_name(prop) in self.columns:  # the column is physicalName, where given
            self.error(f"{base}.physicalName", f"duplicate column {prop.physicalName!r}: another property "
                                               "has it as its name or physicalName")
            return None
        return self.field_type(prop, base)

    # -- types as contracts write them (physical_types), nested fields (nested) ---------------------
    def chosen_server_type(self) -> str | None:
        """The type of the environment's server (``pick_server`` reports a wrong environment)."""
        try:
            server = select_server(self.loaded.model.servers or [], self.env)
        except ValueError:
            return None
        return server.type if server is not None else None

    def dialect_label(self) -> str:
        server = f"server type {self.server_type!r}" if self.server_type else "no server type"
        return f"in the {dialect_of(self.server_type) or 'Spark'} dialect ({server})"

    def field_type(self, prop, base: str, depth: int = 0) -> str | None:
        """The Spark type of a property or nested field, or None after reporting why it has none:
        from its nested properties or items, else its physicalType in the server's dialect, else
        its logicalType (docs/contracts.md#types)."""
        if depth > MAX_DEPTH:
            self.error(base, f"properties nested more than {MAX_DEPTH} levels deep are not supported")
            return None
        if prop.properties or prop.items or (prop.logicalType == "map" and prop.map):
            spark = self.nested_type(prop, base, depth)
            if spark is not None:
                self.field_types[base] = (spark, base, None)
            return spark
        mapped = None
        # a container word (object, struct, RECORD...) without nested detail leaves the type to the logicalType
        container = prop.physicalType is not None and is_container(prop.physicalType) and prop.logicalType is not None
        if prop.physicalType is not None:
            source = f"{base}.physicalType"
            try:
                mapped = map_physical(prop.physicalType, self.server_type)
            except UnmappedType as exc:
                if not container:
                    self.error(source, f"physicalType {prop.physicalType!r} has no Spark type {self.dialect_label()}: "
                                       f"{exc} (the type tables: {TYPES_DOC})")
                    return None
        if mapped is None and prop.logicalType is not None:
            source = f"{base}.logicalType"
            try:
                mapped = map_logical(prop.logicalType, prop.logicalTypeOptions)
            except UnmappedType as exc:
                self.error(source, f"{exc} (the type tables: {TYPES_DOC})")
                return None
        elif mapped is None:
            self.error(base, f"a property needs a physicalType or a logicalType to have a column type ({TYPES_DOC})")
            return None
        self.field_types[base] = (mapped.type, source, mapped)
        return mapped.type

    def nested_type(self, prop, base: str, depth: int) -> str | None:
        """``struct<...>`` of nested properties, ``array<...>`` of items, ``map<...>`` of a map. A
        physicalType beside them may only say the same type, or be a container word (``object``,
        ``RECORD``, ``repeated message``...) or a source's own name the nested properties spell out."""
        if prop.properties:
            fields, seen = [], set()
            for j, child in enumerate(prop.properties):
                path = f"{base}.properties[{j}]"
                if _unsafe_name(child.name):
                    self.error(f"{path}.name", f"unsafe nested field name {child.name!r}: {_SAFE_NAME}")
                elif child.name in seen:
                    self.error(f"{path}.name", f"duplicate nested field name {child.name!r}")
                else:
                    seen.add(child.name)
                    self.field_names.add(child.name)
                    fields.append((child.name, self.field_type(child, path, depth + 1)))
            if len(fields) != len(prop.properties) or any(t is None for _, t in fields):
                return None
            spark = f"struct<{','.join(f'{field_name_text(name)}:{t}' for name, t in fields)}>"
        elif prop.items:
            element = self.field_type(prop.items, f"{base}.items", depth + 1)
            if element is None:
                return None
            spark = f"array<{element}>"
        else:
            key = self.field_type(prop.map.key, f"{base}.map.key", depth + 1)
            value = self.field_type(prop.map.value, f"{base}.map.value", depth + 1)
            if key is None or value is None:
                return None
            spark = f"map<{key},{value}>"
        spark = spark_type(spark)
        if prop.physicalType is not None and not is_container(prop.physicalType):
            try:
                stated = map_physical(prop.physicalType, self.server_type).type
            except UnmappedType:
                stated = None
            if stated is not None and stated != spark:
                self.error(f"{base}.physicalType", f"physicalType {prop.physicalType!r} is {stated} "
                                                   f"{self.dialect_label()}, but the nested properties describe {spark}")
                return None
        return spark

    def property_options(self, prop, base: str) -> dict:
        """Our property-level customProperties: {name: (index, value)}; misspellings are errors."""
        options = {}
        for j, custom in enumerate(prop.customProperties or []):
            path = f"{base}.customProperties[{j}]"
            meant = _near_miss(custom.property, _PROPERTY_OPTIONS)
            if meant:
                self.error(f"{path}.property", f"unknown custom property {custom.property!r}; did you mean {meant!r}?")
            elif custom.property in _PROPERTY_OPTIONS:
                if custom.property in options:
                    self.error(f"{path}.property", f"{custom.property} is given more than once")
                options[custom.property] = (j, custom.value)
        for name in _BOOLEAN_PROPERTY_OPTIONS:
            if not isinstance(options.get(name, (0, False))[1], bool):
                self.error(f"{base}.customProperties[{options[name][0]}].value", f"{name} must be true or false")
        return options

    def compile_key(self, obj) -> list[str]:
        """The business key (its columns): the columns with a ``primaryKeyPosition`` in that order,
        then those without one in declaration order. Gaps and repeats in the positions only order
        the key; a position without ``primaryKey: true`` says nothing."""
        keyed = [(prop.primaryKeyPosition if prop.primaryKeyPosition not in (None, -1) else None, i, prop)
                 for i, prop in enumerate(obj.properties or []) if prop.primaryKey]
        keyed.sort(key=lambda item: (item[0] is None, item[0] or 0, item[1]))
        return [_column_name(prop) for _, _, prop in keyed]

    # -- property rules ------------------------------------------------------------------
    def compile_property_rules(self, obj) -> None:
        for i, prop in enumerate(obj.properties or []):
            name = _column_name(prop)
            if name not in self.columns:
                continue
            base = f"{self.base}.properties[{i}]"
            column_type = self.columns[name]
            if prop.required or prop.primaryKey:
                source = f"{base}.required" if prop.required else f"{base}.primaryKey"
                self.add_rule(source, f"{self.label(name)}.required", kind="required", scope="row", columns=[name],
                              predicate=f"{quote_identifier(name)} IS NOT NULL")
            if prop.unique and self.key != [name]:  # a one-column key already is this rule
                # NULLs are distinct, as in SQL UNIQUE: duplicateValues with nullsDistinct: false says otherwise
                self.add_rule(f"{base}.unique", f"{self.label(name)}.unique", kind="unique", scope="group",
                              columns=[name], nulls_distinct=True)
            self.compile_type_options(prop.logicalTypeOptions or {}, f"{base}.logicalTypeOptions", name, column_type)
            if prop.enum:
                self.compile_enum(prop, base, name, column_type)
            if "notBlank" in self.options[name]:
                self.compile_not_blank(base, name, column_type)
            self.compile_quality(prop.quality or [], base, column=name)
            self.compile_type_rules(prop, base, name, column_type)
            self.compile_nested_rules(prop, base, FieldPath(name))
        if self.key:
            index = next(i for i, p in enumerate(obj.properties) if _column_name(p) == self.key[0])
            self.add_rule(f"{self.base}.properties[{index}].primaryKey", "key.unique", first=True, kind="unique",
                          scope="group", columns=list(self.key), nulls_distinct=True)
            if self.settings is not None and self.settings.publication.mode == "append":
                self.add_rule(self.append_source(index), keys_across_batches.RULE_ID, first=True,
                              kind=keys_across_batches.KIND, scope=keys_across_batches.SCOPE, columns=list(self.key))

    def compile_type_rules(self, prop, base: str, name: str, column_type: str) -> None:
        """The rules a field's contract type brings beside its Spark type (the length of a
        ``varchar(n)``, JSON text, a time of day) and its array options."""
        _, source, mapped = self.field_types.get(base, (None, None, None))
        col = quote_identifier(name)
        if mapped is not None:
            if mapped.max_length is not None and "maxLength" not in (prop.logicalTypeOptions or {}):
                self.compile_lengths({"maxLength": mapped.max_length}, base, name, "string", source=source)
            if mapped.json:
                self.add_rule(source, f"{name}.json", kind="json", scope="row", columns=[name],
                              predicate=rules.nullable_check(name, f"get_json_object({col}, '$') IS NOT NULL"))
            if mapped.time:
                self.add_rule(source, f"{name}.time", kind="pattern", scope="row", columns=[name],
                              predicate=rules.nullable_check(name, patterns.rlike(col, TIME_PATTERN)))
        options = prop.logicalTypeOptions or {}
        base = f"{base}.logicalTypeOptions"
        for option in sorted({*_ARRAY_SIZE_OPTIONS, "uniqueItems"} & set(options)):
            value = options[option]
            if not column_type.startswith("array<"):
                self.error(f"{base}.{option}", f"{option} applies to array columns, not {column_type}")
            elif option == "uniqueItems":
                if value is True:
                    self.add_rule(f"{base}.{option}", f"{name}.unique_items", kind="unique_items", scope="row",
                                  columns=[name], predicate=rules.nullable_check(
                                      name, f"size(array_distinct({col})) = size({col})"))
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                self.error(f"{base}.{option}", f"{option} must be a whole number >= 0, got {value!r}")
            else:
                kind, operator = _ARRAY_SIZE_OPTIONS[option]
                self.add_rule(f"{base}.{option}", f"{name}.{kind}", kind="array_size", scope="row", columns=[name],
                              predicate=rules.nullable_check(name, f"size({col}) {operator} {value}"))

    def compile_nested_rules(self, prop, base: str, path: FieldPath) -> None:
        """The rules of each nested field (:mod:`nested`), as predicates on the top-level column."""
        if prop.properties:
            children = [(f"{base}.properties[{j}]", child, path.field(child.name))
                        for j, child in enumerate(prop.properties)]
        else:
            children = [(f"{base}.items", prop.items, path.element())] if prop.items else []
        for child_base, child, child_path in children:
            if child_base in self.field_types:
                self.compile_nested_field(child, child_base, child_path)

    def compile_nested_field(self, prop, base: str, path: FieldPath) -> None:
        name, field_type = path.name, self.field_types[base][0]
        start = len(self.rules)
        if prop.required:  # not null where its parent is not null
            self.add_rule(f"{base}.required", f"{name}.required", kind="required", scope="row", columns=[name],
                          predicate=f"{quote_identifier(name)} IS NOT NULL")
        self.nested_fields.setdefault(name, (path, field_type))
        for key in ("primaryKey", "unique"):
            if getattr(prop, key):
                self.error(f"{base}.{key}", f"{key} on a nested field is not supported: the gate counts keys "
                                            "and duplicates of top-level properties")
        self.options[name] = self.property_options(prop, base)
        self.compile_type_options(prop.logicalTypeOptions or {}, f"{base}.logicalTypeOptions", name, field_type)
        if prop.enum:
            self.compile_enum(prop, base, name, field_type)
        if "notBlank" in self.options[name]:
            self.compile_not_blank(base, name, field_type)
        self.compile_type_rules(prop, base, name, field_type)
        for entry in self.rules[start:]:
            rule = entry["rule"]
            rule["columns"] = [path.column]
            rule["predicate"] = path.predicate(rule["predicate"])
            rule.pop("passes_when", None)  # a shortcut of the stand-in column
            rule["enforceable"] = _enforceable(rule)
        self.compile_quality(prop.quality or [], base, column=name)
        self.compile_nested_rules(prop, base, path)

    def append_source(self, key_index: int) -> str:
        """Where the cross-batch key rule comes from: the gate's ``publication.mode: append`` when
        the contract writes it, else the key (``append`` is the default publication)."""
        for path, value in reversed(self.settings_sources):  # the object's own entry wins
            if isinstance(value.get("publication"), dict) and "mode" in value["publication"]:
                return f"{path}.publication.mode"
        return f"{self.base}.properties[{key_index}].primaryKey"

    def compile_not_blank(self, base: str, name: str, column_type: str) -> None:
        j, mode = self.options[name]["notBlank"]
        path = f"{base}.customProperties[{j}]"
        if mode is False:
            return
        if column_type != "string":
            self.error(path, f"notBlank applies to string columns, not {column_type}")
            return
        try:
            predicate = rules.not_blank(name, mode)
        except rules.RuleError as exc:
            self.rule_error(f"{path}.value", exc)
            return
        self.add_rule(path, f"{self.label(name)}.not_blank", kind="not_blank", scope="row", columns=[name],
                      predicate=predicate, passes_when=rules.not_blank_shortcut(name))

    def compile_type_options(self, options: dict, base: str, name: str, column_type: str) -> None:
        if not options:
            return
        for option in sorted(set(options) - _KNOWN_OPTIONS):
            self.error(f"{base}.{option}", f"logicalTypeOptions key {option!r} is not supported by the gate")
        bounds = self.compile_ranges(options, base, name, column_type)
        self.check_bounds_order(bounds, base, column_type)
        if "multipleOf" in options:
            self.compile_multiple_of(options["multipleOf"], f"{base}.multipleOf", name, column_type)
        self.compile_lengths(options, base, name, column_type)
        if "pattern" in options:
            self.compile_pattern(options["pattern"], f"{base}.pattern", name, column_type)

    def compile_ranges(self, options: dict, base: str, name: str, column_type: str) -> dict:
        """minimum/maximum/exclusive* rules; returns {option: value} of the bounds that compiled."""
        bounds = {}
        for option, (kind, operator) in rules.RANGE_OPTIONS.items():
            if option not in options:
                continue
            path = f"{base}.{option}"
            # a string bound compares as text: right for times of day (HH:MM:SS) and codes of one length
            if not (is_numeric(column_type) or column_type in rules.TEMPORAL or column_type == "string"):
                self.error(path, f"{option} applies to numeric, date, timestamp and string columns, not {column_type}")
                continue
            try:
                literal = rules.literal_for(options[option], column_type)
            except rules.RuleError as exc:
                self.error(path, str(exc))
                continue
            bounds[option] = options[option]
            self.add_rule(path, f"{self.label(name)}.{kind}", kind=kind, scope="row", columns=[name],
                          predicate=rules.comparison(name, column_type, operator, literal))
        return bounds

    def check_bounds_order(self, bounds: dict, base: str, column_type: str) -> None:
        """A lower bound above the upper one (or equal, when either is exclusive) admits no value."""
        values = {option: rules.bound_value(value, column_type) for option, value in bounds.items()}
        for low in ("minimum", "exclusiveMinimum"):
            for high in ("maximum", "exclusiveMaximum"):
                if low not in values or high not in values:
                    continue
                try:
                    empty = values[low] > values[high] or (values[low] == values[high] and "exclusive" in low + high)
                except TypeError:  # a time-zone-aware and a naive timestamp: Spark decides, not us
                    continue
                if empty:
                    self.error(f"{base}.{low}", f"{low} {bounds[low]!r} and {high} {bounds[high]!r} admit no value")

    def compile_multiple_of(self, value, path: str, name: str, column_type: str) -> None:
        if not is_numeric(column_type):
            self.error(path, f"multipleOf applies to numeric columns, not {column_type}")
            return
        try:
            literal = rules.literal_for(value, column_type)
        except rules.RuleError as exc:
            self.error(path, str(exc))
            return
        col = quote_identifier(name)
        check = f"{col} % {literal} = 0"
        if column_type in ("float", "double"):
            # 0.1 has no exact double, so x % 0.1 is rarely exactly 0; a multiple that is exactly
            # representable (0.5, 0.25, 3) divides exactly.
            if isinstance(value, float) and decimal.Decimal(repr(value)) != decimal.Decimal(value):
                self.error(path, f"multipleOf {value!r} cannot be checked exactly on a {column_type} column "
                                 "(it is not a binary fraction); declare the column as a decimal")
                return
            check = f"(NOT isnan({col}) AND {check})"
        self.add_rule(path, f"{self.label(name)}.multiple_of", kind="multiple_of", scope="row", columns=[name],
                      predicate=rules.nullable_check(name, check))

    def compile_lengths(self, options: dict, base: str, name: str, column_type: str, source: str | None = None) -> None:
        """minLength/maxLength rules; ``source``: where the length was given, when not in ``options``
        (the ``n`` of a ``varchar(n)`` physicalType)."""
        lengths = {}
        for option, kind, operator in (("minLength", "min_length", ">="), ("maxLength", "max_length", "<=")):
            if option not in options:
                continue
            path = source or f"{base}.{option}"
            value = options[option]
            if column_type not in ("string", "binary"):
                self.error(path, f"{option} applies to string and binary columns, not {column_type}")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                self.error(path, f"{option} must be a whole number >= 0, got {value!r}")
            else:
                lengths[option] = value
                text = column_type == "string"  # characters of a string, bytes of a binary value
                shortcut = {"passes_when": rules.max_length_shortcut(name, value)} if kind == "max_length" and text else {}
                measure = "char_length" if text else "length"
                self.add_rule(path, f"{self.label(name)}.{kind}", kind=kind, scope="row", columns=[name],
                              predicate=rules.nullable_check(name, f"{measure}({quote_identifier(name)}) {operator} {value}"),
                              **shortcut)
        if lengths.get("minLength", 0) > lengths.get("maxLength", float("inf")):
            self.error(f"{base}.minLength", f"minLength {lengths['minLength']} is above maxLength {lengths['maxLength']}")

    def compile_pattern(self, pattern, path: str, name: str, column_type: str) -> None:
        if column_type != "string":
            self.error(path, f"pattern applies to string columns, not {column_type}")
        else:
            try:
                match = patterns.rlike(quote_identifier(name), pattern)
            except patterns.PatternError as exc:
                self.error(path, str(exc))
                return
            self.add_rule(path, f"{self.label(name)}.pattern", kind="pattern", scope="row", columns=[name],
                          predicate=rules.nullable_check(name, match))

    def compile_enum(self, prop, base: str, name: str, column_type: str) -> None:
        literals, valid = [], True
        for j, item in enumerate(prop.enum):
            if item.value is None:  # NULL is allowed unless the property is required
                continue
            try:
                literals.append(rules.literal_for(item.value, column_type))
            except rules.RuleError as exc:
                self.error(f"{base}.enum[{j}].value", f"enum value of the wrong type: {exc}")
                valid = False
        if valid:
            predicate = rules.nullable_check(name, rules.in_list(name, literals)) if literals \
                else f"{quote_identifier(name)} IS NULL"
            self.add_rule(f"{base}.enum", f"{self.label(name)}.enum", kind="enum", scope="row", columns=[name],
                          predicate=predicate)

    # -- quality entries -----------------------------------------------------------------
    def value_types(self) -> dict[str, str]:
        """Column -> Spark type of what a check may name: the columns, then the nested fields by
        their dotted path (``user_profile.age``, ``lines[].sku``)."""
        return {**{name: field_type for name, (_, field_type) in self.nested_fields.items()}, **self.columns}

    def compile_quality(self, entries, base: str, column: str | None) -> None:
        for j, quality in enumerate(entries):
            path = f"{base}.quality[{j}]"
            try:
                self.compile_quality_entry(quality.model_dump(exclude_none=True), path, column)
            except rules.RuleError as exc:
                self.rule_error(path, exc)

    def compile_quality_entry(self, entry: dict, path: str, column: str | None) -> None:
        kind = entry.get("type", "library")
        common = {"severity": _severity(entry.get("severity")), "description": entry.get("description")}
        id_key = "id" if "id" in entry else "name" if "name" in entry else None
        given = (entry[id_key], f"{path}.{id_key}") if id_key else (None, None)
        start = len(self.rules)
        self.compile_quality_kind(kind, entry, path, column, given, common)
        self.nest_rules(start, path, column, given, common)

    def compile_quality_kind(self, kind: str, entry: dict, path: str, column: str | None, given: tuple,
                             common: dict) -> None:
        if kind == "text":
            self.add_rule(path, given[0] or f"{self.id_prefix(column)}.text", given[1], kind="text", scope="text",
                          columns=[column] if column else [], **common)
        elif kind == "library":
            self.compile_metric(entry, path, column, given, common)
        elif kind == "sql":
            self.compile_sql(entry, path, column, given, common)
        elif entry.get("engine") == "spark-sql":
            self.compile_custom_sql(entry, path, column, given, common)
        elif entry.get("engine") == "dqx":
            self.compile_dqx(entry, path, column, given, common)
        else:
            self.unsupported(path, column, given, common, f"a check of engine {entry.get('engine')!r} (the gate runs "
                             "custom checks of engines spark-sql and dqx)", "engine")

    def nest_rules(self, start: int, path: str, column: str | None, given: tuple, common: dict) -> None:
        """The rules of one quality entry from ``start`` on that name a nested field (a check on a
        nested property, a DQX ``column: user_profile.age``) as rules on its top-level column: a
        field's row predicate is wrapped for each level above it (:meth:`FieldPath.predicate`); a
        row expression a contract writes (spark-sql, DQX sql_expression) reads the record as
        written. A group or query over a field, or a count of array elements, cannot be run:
        an unsupported check (:meth:`unsupported`)."""
        for entry in self.rules[start:]:
            rule = entry["rule"]
            paths = [self.nested_fields[c][0] for c in rule["columns"] if c in self.nested_fields]
            if not paths:
                continue
            expression = rule["kind"] == "custom_sql" or rule.get("function") == "sql_expression"
            if rule["predicate"] is not None and not expression:
                runnable = len(rule["columns"]) == 1 and (
                    rule["scope"] == "row" or (rule["scope"] == "dataset" and None not in paths[0].steps))
                if not runnable:
                    del self.rules[start:]
                    self.unsupported(path, column, given, common, f"a {rule['kind']} check of nested field "
                                     f"{paths[0].name!r} over {'array elements' if rule['scope'] == 'dataset' else 'rows'} "
                                     "(nested fields take row checks and metrics)", None)
                    self.nest_rules(start, path, column, given, common)
                    return
                rule["predicate"] = paths[0].predicate(rule["predicate"])
                rule.pop("passes_when", None)  # a shortcut of the stand-in column
            elif rule["scope"] not in ("text",) and not expression:
                del self.rules[start:]
                self.unsupported(path, column, given, common, f"a {rule['kind']} check of nested field "
                                 f"{paths[0].name!r} (nested fields take row checks and metrics)", None)
                self.nest_rules(start, path, column, given, common)
                return
            top = (self.nested_fields[c][0].column if c in self.nested_fields else c for c in rule["columns"])
            rule["columns"] = list(dict.fromkeys(top))
            rule["enforceable"] = _enforceable(rule)

    def unsupported(self, path: str, column: str | None, given: tuple, common: dict, what: str, key) -> None:
        """A check the gate cannot run. A gated object refuses it unless its settings say
        ``unsupportedChecks: warn``; then, and in an object that is documentation only, it is a
        rule the Spark side reports ``not_evaluated`` (a warning: the batch is not judged on it)."""
        if self.settings is not None and self.settings.unsupported_checks != "warn":
            raise rules.RuleError(f"{what} cannot be run by the gate; set unsupportedChecks: warn in the "
                                  f"{GATE_PROPERTY} settings to list it as not evaluated instead", key)
        self.add_rule(path, given[0] or f"{self.id_prefix(column)}.unsupported", given[1], kind="unsupported",
                      scope="text", columns=[column] if column else [], reason=f"not run by the gate: {what}",
                      **{**common, "severity": "warning"})

    def compile_sql(self, entry: dict, path: str, column: str | None, given: tuple, common: dict) -> None:
        # A query reads its batch ({object}) and the tables the gate settings list as references.
        references = set(self.settings.references) if self.settings else set()
        placeholders = {"object", *references, *(["property"] if column else [])}
        obj = self.loaded.model.schema_[self.index]
        try:
            query = check_query(entry["query"], placeholders, _PLACEHOLDER_SYNONYMS,
                                batch_names=[name for name in (obj.name, obj.physicalName) if name])
        except SqlNotSpark as exc:
            self.unsupported(path, column, given, common, f"a query that is not Spark SQL the gate allows ({exc})",
                             "query")
            return
        except ValueError as exc:
            raise rules.RuleError(f"unsafe or invalid query: {exc}", "query") from exc
        self.add_rule(path, given[0] or f"{self.id_prefix(column)}.sql", given[1], kind="sql", scope="query",
                      columns=[column] if column else [],
                      query=query, threshold=rules.threshold_from(entry, percent_allowed=False), **common)

    def compile_custom_sql(self, entry: dict, path: str, column: str | None, given: tuple, common: dict) -> None:
        text = entry.get("implementation")
        if not isinstance(text, str):
            raise rules.RuleError("engine spark-sql needs a boolean expression as implementation", "implementation")
        predicate = rules.custom_expression(text)
        others = [c for c in rules.referenced_columns(text, list(self.columns)) if c != column]
        self.add_rule(path, given[0] or f"{self.id_prefix(column)}.custom_sql", given[1], kind="custom_sql",
                      scope="row", columns=[column, *others] if column else others, predicate=predicate, **common)

    def compile_metric(self, entry: dict, path: str, column: str | None, given: tuple, common: dict) -> None:
        metric = entry.get("metric") or entry.get("rule")
        if metric is None:
            raise rules.RuleError("a quality entry needs a type (text, library, sql, custom) or a metric", "type")
        rule_id, id_path = given[0] or f"{self.id_prefix(column)}.{metric}", given[1]
        arguments = entry.get("arguments") or {}
        if metric == "rowCount":
            _only(arguments, set())
            self.add_rule(path, rule_id, id_path, kind="row_count", scope="dataset", columns=[],
                          threshold=rules.threshold_from(entry, percent_allowed=False), metric=metric, **common)
        elif metric == "duplicateValues":
            key = self.duplicate_key(arguments, column)
            nulls_distinct = arguments.get("nullsDistinct", True)
            if not isinstance(nulls_distinct, bool):
                raise rules.RuleError("nullsDistinct must be true or false", ["arguments", "nullsDistinct"])
            self.add_rule(path, rule_id, id_path, kind="unique", scope="group", columns=key,
                          nulls_distinct=nulls_distinct, threshold=rules.threshold_from(entry), metric=metric, **common)
        elif metric in _LIBRARY_ROW_METRICS:
            if column is None:
                raise rules.RuleError(f"{metric} belongs on a property, not on the schema object", "metric")
            predicate = self.metric_predicate(metric, arguments, column)
            threshold = rules.threshold_from(entry)
            if _zero_tolerance(threshold):  # every counted row breaks it: a row rule, like DQX's mustBe: 0
                self.add_rule(path, rule_id, id_path, kind="metric", scope="row", columns=[column], metric=metric,
                              predicate=predicate, **common)
            else:
                self.add_rule(path, rule_id, id_path, kind="metric", scope="dataset", columns=[column], metric=metric,
                              predicate=predicate, threshold=threshold, **common)
        else:
            self.unsupported(path, column, given, common, f"metric {metric!r} (the gate runs nullValues, missingValues, "
                             "invalidValues, duplicateValues and rowCount)", "metric")

    def duplicate_key(self, arguments: dict, column: str | None) -> list[str]:
        if column is not None:
            _only(arguments, {"nullsDistinct"})
            return [column]
        _only(arguments, {"properties", "nullsDistinct"})
        key = arguments.get("properties")
        if not isinstance(key, list) or not key:
            raise rules.RuleError("schema-level duplicateValues needs arguments.properties: a list of columns", "arguments")
        columns = {self.label(column): column for column in self.columns}  # a property by its name
        for k, name in enumerate(key):
            if name not in columns and name not in self.columns:
                raise rules.RuleError(f"duplicateValues refers to unknown column {name!r}", ["arguments", "properties", k])
        return [columns.get(name, name) for name in key]

    def metric_predicate(self, metric: str, arguments: dict, column: str) -> str:
        """TRUE when the row is *not* counted by the metric."""
        col = quote_identifier(column)
        column_type = self.value_types()[column]
        if metric == "nullValues":
            _only(arguments, set())
            return f"{col} IS NOT NULL"
        if metric == "missingValues":
            _only(arguments, {"missingValues"})
            missing = arguments.get("missingValues", [])
            if not isinstance(missing, list):
                raise rules.RuleError("missingValues must be a list", ["arguments", "missingValues"])
            literals = [rules.literal_for(v, column_type, ["arguments", "missingValues", k])
                        for k, v in enumerate(missing) if v is not None]
            return f"({col} IS NOT NULL AND NOT {rules.in_list(column, literals)})" if literals else f"{col} IS NOT NULL"
        _only(arguments, {"validValues", "pattern"})
        if ("validValues" in arguments) == ("pattern" in arguments):
            raise rules.RuleError("invalidValues needs exactly one of arguments.validValues or arguments.pattern", "arguments")
        if "validValues" in arguments:
            valid = arguments["validValues"]
            if not isinstance(valid, list) or not valid:
                raise rules.RuleError("validValues must be a non-empty list", ["arguments", "validValues"])
            # NULL is never an invalid value (nullValues and missingValues count it): a null listed
            # as valid says so explicitly
            literals = [rules.literal_for(v, column_type, ["arguments", "validValues", k])
                        for k, v in enumerate(valid) if v is not None]
            return rules.nullable_check(column, rules.in_list(column, literals)) if literals else f"{col} IS NULL"
        if column_type != "string":
            raise rules.RuleError(f"pattern applies to string columns, not {column_type}", ["arguments", "pattern"])
        try:
            return rules.nullable_check(column, patterns.rlike(col, arguments["pattern"]))
        except patterns.PatternError as exc:
            raise rules.RuleError(str(exc), ["arguments", "pattern"]) from exc

    def compile_dqx(self, entry: dict, path: str, column: str | None, given: tuple, common: dict) -> None:
        try:
            check = dqx.parse_implementation(entry.get("implementation"))
        except rules.RuleError as exc:
            if exc.keys() != ["implementation", "check", "function"]:
                raise
            self.unsupported(path, column, given, common, f"a DQX check ({exc})", exc.key)
            return
        for one, item_key in dqx.for_each_column(check):
            try:
                fields = dqx.compile_check(one, self.value_types(), default_column=column)
            except rules.RuleError as exc:
                if item_key is not None and exc.keys()[:4] == ["implementation", "check", "arguments", "column"
                                                               if one["check"]["function"] != "is_unique" else "columns"]:
                    raise rules.RuleError(str(exc), item_key) from exc  # the column came from for_each_column
                raise
            name, name_key = fields.pop("name"), fields.pop("name_key")
            if "severity" in entry and common["severity"] != fields["severity"]:
                raise rules.RuleError(f"severity {entry['severity']!r} contradicts the DQX criticality "
                                      f"{check.get('criticality', 'error')!r}", "severity")
            rule_id, id_path = given
            if name:
                rule_id, id_path = name, yaml_path([path, *name_key])
            elif rule_id and item_key is not None:  # one id per column
                rule_id = f"{rule_id}.{'.'.join(fields['columns'])}"
            rule_id = rule_id or f"{'.'.join(map(self.label, fields['columns'])) or 'dataset'}.{fields['function']}"
            self.add_rule(path, rule_id, id_path, **{**common, **fields})

    # -- settings, servers, SLA ----------------------------------------------------------
    def gate_settings(self, obj) -> GateSettings | None:
        """The object's gate settings: its own ``contractGate`` entry over the contract's (key by
        key, nested mappings merged), ``{object}`` in the landing made the object's name. An object
        without a landing is documentation only (``self.not_gated``), not an error."""
        contract_level = self.settings_entry(self.loaded.model.customProperties, "customProperties")
        object_level = self.settings_entry(obj.customProperties, f"{self.base}.customProperties")
        if contract_level is None and object_level is None:
            self.not_gated = "no contractGate settings, so no landing"
            return None
        entries = self.settings_sources = [entry for entry in (contract_level, object_level) if entry is not None]
        value: dict = {}
        for _, given in entries:
            value = _merged(value, given)
        landing = value.get("landing")
        if landing is None:
            self.not_gated = "no landing in its contractGate settings"
            return None
        if isinstance(landing, dict):
            landing_from_contract = object_level is None or "landing" not in object_level[1]
            if landing_from_contract and len(self.loaded.model.schema_) > 1 \
                    and not any("{object}" in str(v) for v in (landing.get("path"), landing.get("table"))):
                self.error(f"{contract_level[0]}.landing", "a contract with several schema objects gives each its "
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
                self.error(yaml_path([where[0], *parts]), message)
            return None

    def settings_entry(self, custom_properties, base: str) -> tuple[str, dict] | None:
        """(YAML path of its value, value) of the one ``contractGate`` entry in ``custom_properties``."""
        entries = []
        for i, custom in enumerate(custom_properties or []):
            meant = _near_miss(custom.property, (GATE_PROPERTY,))
            if meant:
                self.error(f"{base}[{i}].property", f"unknown custom property {custom.property!r}; did you mean {meant!r}?")
            elif custom.property == GATE_PROPERTY:
                entries.append((i, custom))
        if not entries:
            return None
        if len(entries) > 1:
            self.error(f"{base}[{entries[1][0]}]", f"{GATE_PROPERTY} is given more than once")
            return None
        index, entry = entries[0]
        if not isinstance(entry.value, dict):
            self.error(f"{base}[{index}].value", f"{GATE_PROPERTY} settings must be a mapping")
            return None
        return f"{base}[{index}].value", entry.value

    def table_addresses(self, settings: GateSettings, server, object_name: str) -> dict:
        """The plan's table addresses, after every name and path that leads there is checked
        (``table_locations``: identifiers, under the server's root, no overlaps). The object's
        ``physicalName``, where given, is its table: the target's default name (and its quarantine's)."""
        table_name = self.loaded.model.schema_[self.index].physicalName or object_name
        tables = resolve_tables(settings, server, table_name, self.loaded.model.version)
        index = next((i for i, s in enumerate(self.loaded.model.servers or []) if s is server), None)
        for path, message in location_problems(self.loaded.raw, settings, server, index, object_name, tables):
            self.error(path, message)
        if not IDENTIFIER.fullmatch(table_name) and (settings.target is None or settings.quarantine is None):
            self.error(f"{self.base}.physicalName", f"physicalName {table_name!r} names the target table and its "
                       f"quarantine: it must be {IDENTIFIER_FORM}, or name them in the {GATE_PROPERTY} settings")
        return tables

    def access(self, server) -> dict | None:
        """Who may read the gate's tables on Databricks (``unity_catalog.grants``), from the
        ODCS ``roles`` of the chosen server, else of the contract: ``access: read`` roles are
        consumers (the target only), ``access: write`` roles the contract owner (also the
        quarantine and its candidates). Role names are principals, quoted wherever they are used."""
        servers = self.loaded.model.servers or []
        index = next((i for i, s in enumerate(servers) if s is server), None)
        roles, base = (server.roles, f"servers[{index}].roles") if server is not None and server.roles \
            else (self.loaded.model.roles or [], "roles")
        access: dict[str, list[str]] = {"consumers": [], "owners": []}
        for j, role in enumerate(roles):
            kind = {"read": "consumers", "write": "owners"}.get((role.access or "").lower())
            if kind is None:
                self.error(f"{base}[{j}].access", f"access {role.access!r} is not one the gate can grant: 'read' (a "
                                                  "consumer: SELECT on the target) or 'write' (the contract owner: "
                                                  "also the quarantine and its candidates; only the gate writes)")
            elif not role.role or _CONTROL_CHARACTER.search(role.role):
                self.error(f"{base}[{j}].role", "a role names a principal: non-empty, without control characters")
            else:
                access[kind].append(role.role)
        return access if roles else None

    def pick_server(self):
        try:
            return select_server(self.loaded.model.servers or [], self.env)
        except ValueError as exc:
            self.error("servers", str(exc))
            return None

    def freshness(self, object_name: str) -> dict | None:
        try:
            others = tuple(o.name for o in self.loaded.model.schema_ if o.name and o.name != object_name)
            return freshness_sla(self.loaded.model.slaProperties or [], object_name, self.columns,
                                 self.loaded.model.slaDefaultElement, others)
        except rules.RuleError as exc:
            index, *keys = exc.keys()
            self.error(yaml_path([f"slaProperties[{index}]", *keys]), str(exc))
            return None


def _enforceable(rule: dict) -> bool:
    """Whether Delta can hold the rule as a CHECK constraint: an error on every row, deterministic,
    and without a lambda (Delta's constraint parser cannot read ``->``)."""
    return (rule["scope"] == "row" and rule["filter"] is None and rule["threshold"] is None
            and rule["severity"] == "error"
            and (rule["kind"] not in ("custom_sql", "dqx") or is_deterministic(rule["predicate"]))
            and not (rule["predicate"] and has_lambda(rule["predicate"])))


def _merged(base: dict, override: dict) -> dict:
    """``override`` over ``base``, nested mappings merged key by key."""
    result = dict(base)
    for key, value in override.items():
        result[key] = _merged(result[key], value) if isinstance(value, dict) and isinstance(result.get(key), dict) else value
    return result


def _has_key(value: dict, parts: list) -> bool:
    """Whether ``value`` (a settings mapping) holds the first key of an error's path."""
    return bool(parts) and isinstance(value, dict) and parts[0] in value


def _severity(value) -> str:
    if value in (None, "error"):
        return "error"
    if value in ("warning", "warn", "info"):
        return "warning"
    raise rules.RuleError(f"severity must be error, warning, warn or info, got {value!r}", "severity")


def _zero_tolerance(threshold: dict) -> bool:
    """Whether a metric threshold admits no counted row at all: 0 passes, any count above fails.
    Row counts are whole numbers, so ``mustBeLessThan: 1`` (rows) allows none; a percentage can be
    arbitrarily small, so ``mustBeLessThan: 1`` with ``unit: percent`` is a real tolerance."""
    operator, value, rows = threshold["operator"], threshold["value"], threshold["unit"] == "rows"
    if operator == "mustBe":
        return value == 0
    if operator == "mustBeLessThan":
        return rows and 0 < value <= 1
    if operator == "mustBeLessOrEqualTo":
        return 0 <= value < 1 if rows else value == 0
    if operator == "mustBeBetween":
        low, high = value
        return low <= 0 and (0 <= high < 1 if rows else high == 0)
    return False


def _only(arguments, allowed: set[str]) -> None:
    if not isinstance(arguments, dict):
        raise rules.RuleError("arguments must be a mapping", "arguments")
    unknown = sorted(set(arguments) - allowed, key=str)
    if unknown:
        raise rules.RuleError(f"unknown argument(s): {', '.join(map(str, unknown))}", ["arguments", unknown[0]])
