"""Profile a sample on Spark for ``contract-gate init``: one aggregate over the sample.

Spark reads the sample exactly as the gate will read its batches, so the types in the draft are
the types the gate checks. Imports pyspark: used by the CLI only, never at DAG-parse time.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from contract_gate.contract.draft import ENUM_SUGGESTION_MAX, ColumnProfile, SampleProfile

_ATOMIC_ORDERED = ("tinyint", "smallint", "int", "bigint", "float", "double", "date", "timestamp", "timestamp_ntz",
                   "string")


def read_sample(spark: SparkSession, source: str, format: str) -> DataFrame:
    """The sample: a catalog table (``format`` ``table``) or files/a Delta table at ``source``.
    CSV and JSON are read with a header and schema inference, as a person would expect of a sample."""
    if format == "table":
        return spark.table(source)
    reader = spark.read.format(format)
    if format == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(source)


def profile_sample(df: DataFrame) -> SampleProfile:
    """Row count and, per top-level column, NULLs, distinct values, range and (for columns with
    few values) the values themselves."""
    fields = df.schema.fields
    aggregates = [F.count(F.lit(1)).alias("rows")]
    for i, field in enumerate(fields):
        column = F.col(f"`{field.name.replace('`', '``')}`")
        kind = field.dataType.simpleString()
        aggregates += [F.sum(F.when(column.isNull(), 1).otherwise(0)).alias(f"n{i}"),
                       F.countDistinct(column).alias(f"d{i}")]
        if kind in _ATOMIC_ORDERED:
            aggregates += [F.min(column).alias(f"lo{i}"), F.max(column).alias(f"hi{i}")]
    (row,) = df.agg(*aggregates).collect()  # an aggregate without grouping: one row, even over no rows
    rows = row["rows"]
    columns = []
    for i, field in enumerate(fields):
        kind = field.dataType.simpleString()
        distinct = row[f"d{i}"]
        values: tuple[Any, ...] = ()
        if kind in _ATOMIC_ORDERED and 0 < distinct <= ENUM_SUGGESTION_MAX:
            column = F.col(f"`{field.name.replace('`', '``')}`")
            values = tuple(sorted(r[0] for r in df.select(column).where(column.isNotNull()).distinct().collect()))
        ordered = kind in _ATOMIC_ORDERED
        columns.append(ColumnProfile(name=field.name, type=kind, nulls=row[f"n{i}"] or 0, distinct=distinct,
                                     minimum=row[f"lo{i}"] if ordered else None,
                                     maximum=row[f"hi{i}"] if ordered else None, values=values))
    return SampleProfile(rows=rows, columns=tuple(columns))
