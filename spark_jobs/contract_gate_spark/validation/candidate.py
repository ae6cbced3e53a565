"""Open the exact data a gate judges.

A Delta candidate is always read at one pinned version (``versionAsOf``): the report names
that version and publication later reads the same one, so what was validated is what is
published. Files without types of their own (CSV, JSON) are read with the contract's types;
a value that does not fit is neither coerced nor silently NULL: its row is marked
(``contract_gate_spark.validation.unparseable_values``) and fails that column's ``<column>.type`` rule. An empty file has the
plan's columns and no rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DataType, StructField, StructType

from contract_gate_spark.runtime.errors import NOTHING_TO_INFER, has_condition
from contract_gate_spark.validation.unparseable_values import read_text
from contract_gate_plan import model
from contract_gate_plan.addresses import looks_like_path
from contract_gate_plan.sql_text import quote_identifier, quote_qualified

FORMATS = ("delta", "parquet", "csv", "json")


@dataclass(frozen=True)
class Candidate:
    """The DataFrame under validation and where it came from (for the report)."""

    df: DataFrame
    table: str | None = None
    version: int | None = None
    format: str | None = None
    many_batches: bool = False
    """A published target, holding every batch the gate accepted (``validate --target``): a rule
    whose threshold counts rows bounds one batch, so it is not judged here."""


def read_candidate(
    spark: SparkSession,
    source: str,
    *,
    format: str = "delta",
    version: int | None = None,
    options: dict[str, str] | None = None,
    columns: Sequence[model.Column] | None = None,
) -> Candidate:
    """Open ``source`` (a path or a catalog table) as a candidate.

    Delta: read at ``version``, or at the latest version, looked up once and then pinned.
    CSV/JSON: ``columns`` (the plan's) give the types of the columns they name; other columns
    keep what the file says (strings for CSV, inferred types for JSON), so the schema check
    still sees extra columns. Missing columns stay missing.
    """
    if format not in FORMATS:
        raise ValueError(f"format {format!r} is not one of {', '.join(FORMATS)}")
    options = dict(options or {})
    path = looks_like_path(source)
    if format == "delta":
        return _read_delta(spark, source, path, version, options)
    if version is not None:
        raise ValueError(f"--version applies to Delta tables, not {format}")
    if not path:
        return Candidate(spark.read.options(**options).table(source), source, None, format)
    if format in ("csv", "json"):
        return Candidate(_read_text(spark, source, format, options, columns or []), source, None, format)
    return Candidate(spark.read.options(**options).parquet(source), source, None, format)


def _read_delta(
    spark: SparkSession, source: str, path: bool, version: int | None, options: dict[str, str]
) -> Candidate:
    identifier = f"delta.{quote_identifier(source)}" if path else quote_qualified(source)
    if version is None:
        newest = spark.sql(f"DESCRIBE HISTORY {identifier} LIMIT 1").first()
        assert newest is not None  # a Delta table has at least one commit
        version = int(newest["version"])
    reader = spark.read.format("delta").options(**options).option("versionAsOf", version)
    df = reader.load(source) if path else reader.table(source)
    return Candidate(df, source, version, "delta")


def _read_text(
    spark: SparkSession,
    path: str,
    format: str,
    options: dict[str, str],
    columns: Sequence[model.Column],
) -> DataFrame:
    if format == "csv":
        options.setdefault("header", "true")
    expected = {c.name: DataType.fromDDL(c.type) for c in columns}
    try:
        found = spark.read.options(**options).format(format).load(path).schema.fields
    except AnalysisException as exc:  # a folder without a file: nothing to infer a schema from
        if not has_condition(exc, NOTHING_TO_INFER):
            raise
        found = []
    # Spark's own column of the records its inference could not parse is no column of the file:
    # read_text marks those records itself (unless the contract names such a column)
    corrupt = options.get("columnNameOfCorruptRecord") or spark.conf.get("spark.sql.columnNameOfCorruptRecord")
    found = [f for f in found if f.name != corrupt or f.name in expected]
    if not found:
        # An empty file (or folder) says nothing about its columns: read it as the plan's, so
        # the batch is judged as empty (``submission.not_empty``), not as one missing them all.
        found = [StructField(name, data_type) for name, data_type in expected.items()]
    elif format == "json":
        # JSON records have no header: a key that no record names is a NULL in every record, which
        # an optional column allows (a required one is still missing from the batch's schema)
        named = {f.name for f in found}
        found += [StructField(c.name, expected[c.name]) for c in columns if c.nullable and c.name not in named]
    schema = StructType([StructField(f.name, expected.get(f.name, f.dataType), True) for f in found])
    allowed = frozenset(c.name for c in columns if c.allow_non_finite)
    json_text = frozenset(c.name for c in columns if c.json_text)
    return read_text(spark, path, format, options, schema, allowed, json_text)
