"""A deployed path target as ``contract_plan.migration`` reads it, without a JVM (``deltalake``):
its fields as Spark's simpleString types, and its table properties."""

from __future__ import annotations

import json
from typing import Any

from contract_gate.delta_tables import open_table

# Delta's JSON schema names -> Spark's simpleString (the rest are the same word)
_SIMPLE = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint"}


def deployed_table(location: str, storage_options: dict[str, str] | None = None
                   ) -> tuple[list[tuple[str, str, bool]], dict[str, str]] | None:
    """(fields, properties) of the Delta table at ``location``, or None when there is none."""
    table = open_table(location, storage_options=storage_options)
    if table is None:
        return None
    schema = json.loads(table.schema().to_json())
    fields = [(field["name"], simple_string(field["type"]), field["nullable"]) for field in schema["fields"]]
    return fields, dict(table.metadata().configuration)


def simple_string(delta_type: Any) -> str:
    if isinstance(delta_type, str):
        return _SIMPLE.get(delta_type, delta_type)
    kind = delta_type["type"]
    if kind == "array":
        return f"array<{simple_string(delta_type['elementType'])}>"
    if kind == "map":
        return f"map<{simple_string(delta_type['keyType'])},{simple_string(delta_type['valueType'])}>"
    return "struct<" + ",".join(f"{f['name']}:{simple_string(f['type'])}" for f in delta_type["fields"]) + ">"
