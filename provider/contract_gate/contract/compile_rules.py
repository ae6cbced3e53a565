"""The rules a schema object's properties bring: ``required``, ``unique``, the key,
``logicalTypeOptions`` (ranges, lengths, pattern, multipleOf, array sizes), ``enum``, ``notBlank``,
the rules a contract type brings (a varchar's length, JSON text, a time of day), and nested
fields' rules as predicates on their top-level column (``nested``)."""

from __future__ import annotations

import decimal
from typing import Any

from contract_gate.contract import patterns, rules
from contract_gate.contract.compile_columns import ColumnCompiler
from contract_gate.contract.compile_quality import QualityCompiler
from contract_gate.contract.compile_state import CompileState, column_name, enforceable
from contract_gate.contract.nested import FieldPath
from contract_gate.contract.physical_types import TIME_PATTERN
from contract_gate_plan import keys_across_batches
from contract_gate_plan.spark_types import is_numeric
from contract_gate_plan.sql_text import quote_identifier

# logicalTypeOptions keys that only document (the gate checks the Spark type), or that chose it
# (format, timezone, elementType: physical_types.map_logical). An object's fields all exist in its struct.
_DOCUMENTING_OPTIONS = {"format", "timezone", "defaultTimezone", "minProperties", "maxProperties", "required",
                        "elementType", "distanceMetric", "embeddingModel", "embeddingModelVersion", "normalized"}
# Array options: logicalTypeOptions key -> (rule kind, comparison with the array's size).
_ARRAY_SIZE_OPTIONS = {"minItems": ("min_items", ">="), "maxItems": ("max_items", "<="), "dimensions": ("dimensions", "=")}
_KNOWN_OPTIONS = {*rules.RANGE_OPTIONS, "minLength", "maxLength", "pattern", "multipleOf", *_DOCUMENTING_OPTIONS,
                  *_ARRAY_SIZE_OPTIONS, "uniqueItems"}


class PropertyRuleCompiler:
    """Rules of properties and nested fields (a property's quality entries included), added to the
    compile's ``state``; after ``columns`` has compiled the columns it reads."""

    def __init__(self, state: CompileState, columns: ColumnCompiler, quality: QualityCompiler) -> None:
        self.state = state
        self.column_compiler = columns
        self.quality_compiler = quality

    # -- property rules ------------------------------------------------------------------
    def compile_property_rules(self, obj) -> None:
        for i, prop in enumerate(obj.properties or []):
            name = column_name(prop)
            if name not in self.state.columns:
                continue
            base = f"{self.state.base}.properties[{i}]"
            column_type = self.state.columns[name]
            if prop.required or prop.primaryKey:
                source = f"{base}.required" if prop.required else f"{base}.primaryKey"
                self.state.add_rule(source, f"{self.state.label(name)}.required", kind="required", scope="row", columns=[name],
                              predicate=f"{quote_identifier(name)} IS NOT NULL")
            if prop.unique and self.state.key != [name]:  # a one-column key already is this rule
                # NULLs are distinct, as in SQL UNIQUE: duplicateValues with nullsDistinct: false says otherwise
                self.state.add_rule(f"{base}.unique", f"{self.state.label(name)}.unique", kind="unique", scope="group",
                              columns=[name], nulls_distinct=True)
            self.compile_type_options(prop.logicalTypeOptions or {}, f"{base}.logicalTypeOptions", name, column_type)
            if prop.enum:
                self.compile_enum(prop, base, name, column_type)
            if "notBlank" in self.state.options[name]:
                self.compile_not_blank(base, name, column_type)
            self.quality_compiler.compile_quality(prop.quality or [], base, column=name)
            self.compile_type_rules(prop, base, name, column_type)
            self.compile_nested_rules(prop, base, FieldPath(name))
        if self.state.key:
            index = next(i for i, p in enumerate(obj.properties) if column_name(p) == self.state.key[0])
            self.state.add_rule(f"{self.state.base}.properties[{index}].primaryKey", "key.unique", first=True, kind="unique",
                          scope="group", columns=list(self.state.key), nulls_distinct=True)
            if self.state.settings is not None and self.state.settings.publication.mode == "append":
                self.state.add_rule(self.append_source(index), keys_across_batches.RULE_ID, first=True,
                              kind=keys_across_batches.KIND, scope=keys_across_batches.SCOPE, columns=list(self.state.key))

    def compile_type_rules(self, prop, base: str, name: str, column_type: str) -> None:
        """The rules a field's contract type brings beside its Spark type (the length of a
        ``varchar(n)``, JSON text, a time of day) and its array options."""
        _, source, mapped = self.state.field_types.get(base, ("", "", None))
        col = quote_identifier(name)
        if mapped is not None:
            if mapped.max_length is not None and "maxLength" not in (prop.logicalTypeOptions or {}):
                self.compile_lengths({"maxLength": mapped.max_length}, base, name, "string", source=source)
            if mapped.json:
                self.state.add_rule(source, f"{name}.json", kind="json", scope="row", columns=[name],
                              predicate=rules.nullable_check(name, f"get_json_object({col}, '$') IS NOT NULL"))
            if mapped.time:
                self.state.add_rule(source, f"{name}.time", kind="pattern", scope="row", columns=[name],
                              predicate=rules.nullable_check(name, patterns.rlike(col, TIME_PATTERN)))
        options = prop.logicalTypeOptions or {}
        base = f"{base}.logicalTypeOptions"
        for option in sorted({*_ARRAY_SIZE_OPTIONS, "uniqueItems"} & set(options)):
            value = options[option]
            if not column_type.startswith("array<"):
                self.state.error(f"{base}.{option}", f"{option} applies to array columns, not {column_type}")
            elif option == "uniqueItems":
                if value is True:
                    self.state.add_rule(f"{base}.{option}", f"{name}.unique_items", kind="unique_items", scope="row",
                                  columns=[name], predicate=rules.nullable_check(
                                      name, f"size(array_distinct({col})) = size({col})"))
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                self.state.error(f"{base}.{option}", f"{option} must be a whole number >= 0, got {value!r}")
            else:
                kind, operator = _ARRAY_SIZE_OPTIONS[option]
                self.state.add_rule(f"{base}.{option}", f"{name}.{kind}", kind="array_size", scope="row", columns=[name],
                              predicate=rules.nullable_check(name, f"size({col}) {operator} {value}"))

    def compile_nested_rules(self, prop, base: str, path: FieldPath) -> None:
        """The rules of each nested field (:mod:`nested`), as predicates on the top-level column."""
        if prop.properties:
            children = [(f"{base}.properties[{j}]", child, path.field(child.name))
                        for j, child in enumerate(prop.properties)]
        else:
            children = [(f"{base}.items", prop.items, path.element())] if prop.items else []
        for child_base, child, child_path in children:
            if child_base in self.state.field_types:
                self.compile_nested_field(child, child_base, child_path)

    def compile_nested_field(self, prop, base: str, path: FieldPath) -> None:
        name, field_type = path.name, self.state.field_types[base][0]
        start = len(self.state.rules)
        if prop.required:  # not null where its parent is not null
            self.state.add_rule(f"{base}.required", f"{name}.required", kind="required", scope="row", columns=[name],
                          predicate=f"{quote_identifier(name)} IS NOT NULL")
        self.state.nested_fields.setdefault(name, (path, field_type))
        for key in ("primaryKey", "unique"):
            if getattr(prop, key):
                self.state.error(f"{base}.{key}", f"{key} on a nested field is not supported: the gate counts keys "
                                            "and duplicates of top-level properties")
        self.state.options[name] = self.column_compiler.property_options(prop, base)
        self.compile_type_options(prop.logicalTypeOptions or {}, f"{base}.logicalTypeOptions", name, field_type)
        if prop.enum:
            self.compile_enum(prop, base, name, field_type)
        if "notBlank" in self.state.options[name]:
            self.compile_not_blank(base, name, field_type)
        self.compile_type_rules(prop, base, name, field_type)
        for entry in self.state.rules[start:]:
            rule = entry["rule"]
            rule["columns"] = [path.column]
            rule["predicate"] = path.predicate(rule["predicate"])
            rule.pop("passes_when", None)  # a shortcut of the stand-in column
            rule["enforceable"] = enforceable(rule)
        self.quality_compiler.compile_quality(prop.quality or [], base, column=name)
        self.compile_nested_rules(prop, base, path)

    def append_source(self, key_index: int) -> str:
        """Where the cross-batch key rule comes from: the gate's ``publication.mode: append`` when
        the contract writes it, else the key (``append`` is the default publication)."""
        for path, value in reversed(self.state.settings_sources):  # the object's own entry wins
            if isinstance(value.get("publication"), dict) and "mode" in value["publication"]:
                return f"{path}.publication.mode"
        return f"{self.state.base}.properties[{key_index}].primaryKey"

    def compile_not_blank(self, base: str, name: str, column_type: str) -> None:
        j, mode = self.state.options[name]["notBlank"]
        path = f"{base}.customProperties[{j}]"
        if mode is False:
            return
        if column_type != "string":
            self.state.error(path, f"notBlank applies to string columns, not {column_type}")
            return
        try:
            predicate = rules.not_blank(name, mode)
        except rules.RuleError as exc:
            self.state.rule_error(f"{path}.value", exc)
            return
        self.state.add_rule(path, f"{self.state.label(name)}.not_blank", kind="not_blank", scope="row", columns=[name],
                      predicate=predicate, passes_when=rules.not_blank_shortcut(name))

    def compile_type_options(self, options: dict, base: str, name: str, column_type: str) -> None:
        if not options:
            return
        for option in sorted(set(options) - _KNOWN_OPTIONS):
            self.state.error(f"{base}.{option}", f"logicalTypeOptions key {option!r} is not supported by the gate")
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
                self.state.error(path, f"{option} applies to numeric, date, timestamp and string columns, not {column_type}")
                continue
            try:
                literal = rules.literal_for(options[option], column_type)
            except rules.RuleError as exc:
                self.state.error(path, str(exc))
                continue
            bounds[option] = options[option]
            self.state.add_rule(path, f"{self.state.label(name)}.{kind}", kind=kind, scope="row", columns=[name],
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
                    self.state.error(f"{base}.{low}", f"{low} {bounds[low]!r} and {high} {bounds[high]!r} admit no value")

    def compile_multiple_of(self, value, path: str, name: str, column_type: str) -> None:
        if not is_numeric(column_type):
            self.state.error(path, f"multipleOf applies to numeric columns, not {column_type}")
            return
        try:
            literal = rules.literal_for(value, column_type)
        except rules.RuleError as exc:
            self.state.error(path, str(exc))
            return
        col = quote_identifier(name)
        check = f"{col} % {literal} = 0"
        if column_type in ("float", "double"):
            # 0.1 has no exact double, so x % 0.1 is rarely exactly 0; a multiple that is exactly
            # representable (0.5, 0.25, 3) divides exactly.
            if isinstance(value, float) and decimal.Decimal(repr(value)) != decimal.Decimal(value):
                self.state.error(path, f"multipleOf {value!r} cannot be checked exactly on a {column_type} column "
                                 "(it is not a binary fraction); declare the column as a decimal")
                return
            check = f"(NOT isnan({col}) AND {check})"
        self.state.add_rule(path, f"{self.state.label(name)}.multiple_of", kind="multiple_of", scope="row", columns=[name],
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
                self.state.error(path, f"{option} applies to string and binary columns, not {column_type}")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                self.state.error(path, f"{option} must be a whole number >= 0, got {value!r}")
            else:
                lengths[option] = value
                text = column_type == "string"  # characters of a string, bytes of a binary value
                shortcut: dict[str, Any] = \
                    {"passes_when": rules.max_length_shortcut(name, value)} if kind == "max_length" and text else {}
                measure = "char_length" if text else "length"
                self.state.add_rule(path, f"{self.state.label(name)}.{kind}", kind=kind, scope="row", columns=[name],
                              predicate=rules.nullable_check(name, f"{measure}({quote_identifier(name)}) {operator} {value}"),
                              **shortcut)
        if lengths.get("minLength", 0) > lengths.get("maxLength", float("inf")):
            self.state.error(f"{base}.minLength", f"minLength {lengths['minLength']} is above maxLength {lengths['maxLength']}")

    def compile_pattern(self, pattern, path: str, name: str, column_type: str) -> None:
        if column_type != "string":
            self.state.error(path, f"pattern applies to string columns, not {column_type}")
        else:
            try:
                match = patterns.rlike(quote_identifier(name), pattern)
            except patterns.PatternError as exc:
                self.state.error(path, str(exc))
                return
            self.state.add_rule(path, f"{self.state.label(name)}.pattern", kind="pattern", scope="row", columns=[name],
                          predicate=rules.nullable_check(name, match))

    def compile_enum(self, prop, base: str, name: str, column_type: str) -> None:
        literals, valid = [], True
        for j, item in enumerate(prop.enum):
            if item.value is None:  # NULL is allowed unless the property is required
                continue
            try:
                literals.append(rules.literal_for(item.value, column_type))
            except rules.RuleError as exc:
                self.state.error(f"{base}.enum[{j}].value", f"enum value of the wrong type: {exc}")
                valid = False
        if valid:
            predicate = rules.nullable_check(name, rules.in_list(name, literals)) if literals \
                else f"{quote_identifier(name)} IS NULL"
            self.state.add_rule(f"{base}.enum", f"{self.state.label(name)}.enum", kind="enum", scope="row", columns=[name],
                          predicate=predicate)
