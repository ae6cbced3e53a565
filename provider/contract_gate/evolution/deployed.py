"""A deployed path target as ``contract_gate_plan.migration`` reads it, without a JVM (``deltalake``):
its fields as type text (``contract_gate_plan.spark_types.type_text``), and its table properties."""

from __future__ import annotations

import json

from contract_gate.delta_tables import open_table
from contract_gate_plan.spark_types import type_text


def deployed_table(location: str, storage_options: dict[str, str] | None = None
                   ) -> tuple[list[tuple[str, str, bool]], dict[str, str]] | None:
    """(fields, properties) of the Delta table at ``location``, or None when there is none."""
    table = open_table(location, storage_options=storage_options)
    if table is None:
        return None
    schema = json.loads(table.schema().to_json())
    fields = [(field["name"], type_text(field["type"]), field["nullable"]) for field in schema["fields"]]
    return fields, dict(table.metadata().configuration)
