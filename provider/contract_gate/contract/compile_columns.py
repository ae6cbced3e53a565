"""The columns of a schema object: names, Spark types from each server dialect and logical
type (``physical_types``), struct/array/map types of nested properties, our property options,
and the business key."""

from __future__ import annotations

from contract_gate.contract.compile_state import CONTROL_CHARACTER, CompileState, column_name, near_miss
from contract_gate.contract.nested import MAX_DEPTH
from contract_gate.contract.physical_types import (TYPES_DOC, Mapped, UnknownTypeName, UnmappedType, dialect_of,
                                                   is_container, map_logical, map_physical)
from contract_gate_plan.spark_types import field_name_text, spark_type

# Our property-level customProperties.
_PROPERTY_OPTIONS = ("notBlank", "sampleAllowed", "allowNonFinite")
_BOOLEAN_PROPERTY_OPTIONS = ("sampleAllowed", "allowNonFinite")
_SAFE_NAME = "it must be non-empty, with no control characters, no '${' and no leading or trailing spaces"


def _unsafe_name(name) -> bool:
    """Whether a column or nested field name is refused (:data:`_SAFE_NAME`). Any other text is a
    name: it is back-quoted in every SQL text and type text the gate writes."""
    # "${": Spark replaces ${...} in SQL text with a variable (${env:NAME}) before parsing it
    return not isinstance(name, str) or not name or name != name.strip() or bool(CONTROL_CHARACTER.search(name)) \
        or "${" in name


class ColumnCompiler:
    """Columns and key of a schema object, recorded in the compile's ``state``."""

    def __init__(self, state: CompileState) -> None:
        self.state = state

    # -- columns and key -----------------------------------------------------------------
    def compile_columns(self, obj) -> list[dict]:
        result = []
        for i, prop in enumerate(obj.properties or []):
            base = f"{self.state.base}.properties[{i}]"
            column_type = self.column_type(prop, base)
            if column_type is None:
                continue
            name = column_name(prop)
            self.state.columns[name] = column_type
            if name != prop.name:
                self.state.labels[name] = prop.name
            options = self.state.options[name] = self.property_options(prop, base)
            sample_allowed = options.get("sampleAllowed", (None, False))[1]
            column = {
                "name": name, **({"label": prop.name} if name != prop.name else {}),
                "type": column_type, "nullable": not (prop.required or prop.primaryKey),
                "classification": prop.classification, "description": prop.description,
                "sample_allowed": sample_allowed is True and prop.classification is None,
            }
            index, allow_non_finite = options.get("allowNonFinite", (None, False))
            if allow_non_finite is True and column_type not in ("float", "double"):
                self.state.error(f"{base}.customProperties[{index}].property",
                           f"allowNonFinite applies to float and double columns, not {column_type}")
            elif allow_non_finite is True:  # NaN/Infinity tokens of a CSV/JSON landing fit (contract_gate_spark.validation.unparseable_values)
                column["allow_non_finite"] = True
            result.append(column)
        return result

    def column_type(self, prop, base: str) -> str | None:
        """The Spark type of a usable column, or None after reporting why it is not one."""
        for key, name in (("name", prop.name), ("physicalName", prop.physicalName)):
            if key == "name" or name is not None:
                if _unsafe_name(name):
                    self.state.error(f"{base}.{key}", f"unsafe column name {name!r}: {_SAFE_NAME}")
                    return None
        if prop.name in {self.state.label(column) for column in self.state.columns}:
            self.state.error(f"{base}.name", f"duplicate property name {prop.name!r}")
            return None
        if column_name(prop) in self.state.columns:  # the column is physicalName, where given
            self.state.error(f"{base}.physicalName", f"duplicate column {prop.physicalName!r}: another property "
                                               "has it as its name or physicalName")
            return None
        return self.field_type(prop, base)

    # -- types as contracts write them (physical_types), nested fields (nested) ---------------------
    def dialect_label(self) -> str:
        server = f"server type {self.state.server_type!r}" if self.state.server_type else "no server type"
        return f"in the {dialect_of(self.state.server_type) or 'Spark'} dialect ({server})"

    def field_type(self, prop, base: str, depth: int = 0) -> str | None:
        """The Spark type of a property or nested field, or None after reporting why it has none:
        from its nested properties or items, else its physicalType in the server's dialect, else
        its logicalType (docs/contracts.md#types)."""
        if depth > MAX_DEPTH:
            self.state.error(base, f"properties nested more than {MAX_DEPTH} levels deep are not supported")
            return None
        if prop.properties or prop.items or (prop.logicalType == "map" and prop.map):
            if (text := self.json_text(prop, base)) is not None:
                self.state.field_types[base] = ("string", f"{base}.physicalType", text)
                return "string"
            spark = self.nested_type(prop, base, depth)
            if spark is not None:
                self.state.field_types[base] = (spark, base, None)
            return spark
        mapped = None
        # a container word (object, struct, RECORD...) without nested detail leaves the type to the logicalType
        container = prop.physicalType is not None and is_container(prop.physicalType) and prop.logicalType is not None
        if prop.physicalType is not None:
            source = f"{base}.physicalType"
            try:
                mapped = map_physical(prop.physicalType, self.state.server_type)
            except UnknownTypeName as exc:
                if prop.logicalType is None:
                    self.state.error(source, f"physicalType {prop.physicalType!r} has no Spark type {self.dialect_label()}: "
                                       f"{exc} (the type tables: {TYPES_DOC}); a logicalType would stand in for it")
                    return None
                if not container:
                    self.state.warn(source, f"physicalType {prop.physicalType!r} has no Spark type {self.dialect_label()}"
                                      f" ({exc}): the column is checked as its logicalType {prop.logicalType!r}")
            except UnmappedType as exc:
                if not container:
                    self.state.error(source, f"physicalType {prop.physicalType!r} has no Spark type {self.dialect_label()}: "
                                       f"{exc} (the type tables: {TYPES_DOC})")
                    return None
        if mapped is None and prop.logicalType is not None:
            source = f"{base}.logicalType"
            try:
                mapped = map_logical(prop.logicalType, prop.logicalTypeOptions)
            except UnmappedType as exc:
                self.state.error(source, f"{exc} (the type tables: {TYPES_DOC})")
                return None
        elif mapped is None:
            self.state.error(base, f"a property needs a physicalType or a logicalType to have a column type ({TYPES_DOC})")
            return None
        self.state.field_types[base] = (mapped.type, source, mapped)
        return mapped.type

    def json_text(self, prop, base: str) -> Mapped | None:
        """A text column holding JSON (``jsonb``, ``STRING``) whose nested properties or items
        document the structure inside the text: a string column with the JSON rule, or None when
        the physicalType is not text. Its nested fields are not columns the gate can check, so a
        rule on one is a lint warning."""
        if prop.physicalType is None or is_container(prop.physicalType):
            return None
        try:
            mapped = map_physical(prop.physicalType, self.state.server_type)
        except UnmappedType:
            return None
        if mapped.type != "string":
            return None
        children = [(f"{base}.properties[{j}]", child) for j, child in enumerate(prop.properties or [])]
        children += [(f"{base}.items", prop.items)] if prop.items else []
        for path, child in children:
            ruled = [key for key in ("required", "primaryKey", "unique", "enum", "quality", "logicalTypeOptions")
                     if getattr(child, key)]
            if ruled:
                self.state.warn(path, f"{ruled[0]} of a field inside the JSON text of {prop.name!r} "
                                      f"({prop.physicalType}) documents it: the gate checks that the text is JSON")
        return Mapped("string", max_length=mapped.max_length, json=True)

    def nested_type(self, prop, base: str, depth: int) -> str | None:
        """``struct<...>`` of nested properties, ``array<...>`` of items, ``map<...>`` of a map. A
        physicalType beside them may only say the same type, or be a container word (``object``,
        ``RECORD``, ``repeated message``...) or a source's own name the nested properties spell out."""
        if prop.properties:
            fields, seen = [], set()
            for j, child in enumerate(prop.properties):
                path = f"{base}.properties[{j}]"
                if _unsafe_name(child.name):
                    self.state.error(f"{path}.name", f"unsafe nested field name {child.name!r}: {_SAFE_NAME}")
                elif child.name in seen:
                    self.state.error(f"{path}.name", f"duplicate nested field name {child.name!r}")
                else:
                    seen.add(child.name)
                    self.state.field_names.add(child.name)
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
                stated = map_physical(prop.physicalType, self.state.server_type).type
            except UnmappedType:
                stated = None
            if stated is not None and stated != spark:
                self.state.error(f"{base}.physicalType", f"physicalType {prop.physicalType!r} is {stated} "
                                                   f"{self.dialect_label()}, but the nested properties describe {spark}")
                return None
        return spark

    def property_options(self, prop, base: str) -> dict:
        """Our property-level customProperties: {name: (index, value)}; misspellings are errors."""
        options = {}
        for j, custom in enumerate(prop.customProperties or []):
            path = f"{base}.customProperties[{j}]"
            meant = near_miss(custom.property, _PROPERTY_OPTIONS)
            if meant:
                self.state.error(f"{path}.property", f"unknown custom property {custom.property!r}; did you mean {meant!r}?")
            elif custom.property in _PROPERTY_OPTIONS:
                if custom.property in options:
                    self.state.error(f"{path}.property", f"{custom.property} is given more than once")
                options[custom.property] = (j, custom.value)
        for name in _BOOLEAN_PROPERTY_OPTIONS:
            if not isinstance(options.get(name, (0, False))[1], bool):
                self.state.error(f"{base}.customProperties[{options[name][0]}].value", f"{name} must be true or false")
        return options

    def compile_key(self, obj) -> list[str]:
        """The business key (its columns): the columns with a ``primaryKeyPosition`` in that order,
        then those without one in declaration order. Gaps and repeats in the positions only order
        the key; a position without ``primaryKey: true`` says nothing."""
        keyed = [(prop.primaryKeyPosition if prop.primaryKeyPosition not in (None, -1) else None, i, prop)
                 for i, prop in enumerate(obj.properties or []) if prop.primaryKey]
        keyed.sort(key=lambda item: (item[0] is None, item[0] or 0, item[1]))
        return [column_name(prop) for _, _, prop in keyed]
