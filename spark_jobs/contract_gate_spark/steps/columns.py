"""Adding the columns a table lacks: the one way the gate widens a quarantine or a candidate."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql.types import StructField

from contract_gate_plan.addresses import Address
from contract_gate_plan.spark_types import type_text
from contract_gate_plan.sql_text import quote_identifier


def add_missing_columns(spark: SparkSession, table: Address, fields: Iterable[StructField]) -> list[str]:
    """Add the ``fields`` the table lacks (nullable: rows already there have none), one at a time,
    each after reading the table's columns again, so a kill between two leaves a table the next
    run finishes, and a twin run's column is not added twice; the names added. A column the
    table has and ``fields`` lacks stays."""
    added = []
    for field in fields:
        if field.name in spark.table(table.sql_name).schema.names:
            continue
        statement = (f"ALTER TABLE {table.sql_name} ADD COLUMNS"
                     f" ({quote_identifier(field.name)} {type_text(field.dataType.jsonValue())})")
        try:
            spark.sql(statement)
        except AnalysisException:
            if field.name not in spark.table(table.sql_name).schema.names:  # not a twin's addition
                raise
        added.append(field.name)
    return added
