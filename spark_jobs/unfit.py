"""Values in a CSV or JSON file that do not fit the contract's type for their column.

Files without types of their own are parsed with the contract's types. Spark's FAILFAST mode
would stop the whole read at the first value that does not parse, and print that record,
classified values included, into the job's log. Instead the file is read in PERMISSIVE mode
with Spark's corrupt-record column, which holds the raw record of every row that did not
parse (its other values are parsed as far as they fit). That raw record is parsed once more,
as text, to name the columns whose value was there but did not fit; then it is dropped. What
stays, and is frozen with the candidate, is ``_contract_gate_unfit``: the names of those
columns (``*`` when the record as a whole did not parse), empty for a row that fit.

Each typed column gets the row rule ``<column>.type`` (and the batch ``record.parseable``):
such a row is counted, carries the rule id in ``_errors``, is quarantined and never published,
and its value is never printed. Without the marker column (Delta, Parquet, a DataFrame handed
in) there are no such rules: those inputs carry their own types, which the schema check compares.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from spark_jobs.sql_text import string_literal

UNFIT = "_contract_gate_unfit"
RECORD = "*"
_RAW = "_contract_gate_raw_record"


def read_text(
    spark: SparkSession, path: str, format: str, options: dict[str, str], schema: StructType
) -> DataFrame:
    """``path`` read with ``schema``, plus the ``_contract_gate_unfit`` column."""
    reader_options = {**options, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": _RAW}
    df = (spark.read.options(**reader_options).schema(StructType([*schema.fields, StructField(_RAW, StringType())]))
          .format(format).load(path))
    as_text = StructType([StructField(f.name, StringType()) for f in schema.fields])
    parse = F.from_csv if format == "csv" else F.from_json
    ddl = ", ".join(f"{_quote(f.name)} STRING" for f in schema.fields)
    text = parse(F.col(_RAW), ddl if format == "csv" else as_text, _text_options(format, options))
    typed = [f.name for f in schema.fields if not isinstance(f.dataType, StringType)]
    named = F.filter(
        F.array(*[F.when(F.col(_quote(n)).isNull() & text[n].isNotNull(), F.lit(n)) for n in typed]
                if typed else [F.lit(None).cast("string")]),
        lambda name: name.isNotNull(),
    )
    unfit = (F.when(F.col(_RAW).isNull(), F.array().cast("array<string>"))
             .when(F.size(named) > 0, named)
             .otherwise(F.array(F.lit(RECORD))))
    return df.withColumn(UNFIT, unfit).drop(_RAW)


def _text_options(format: str, options: dict[str, str]) -> dict[str, str]:
    """The reader options that also shape how one raw record splits into values."""
    keep = ("sep", "delimiter", "quote", "escape", "nullValue", "emptyValue", "ignoreLeadingWhiteSpace",
            "ignoreTrailingWhiteSpace", "allowSingleQuotes", "allowUnquotedFieldNames", "allowComments")
    return {k: v for k, v in options.items() if k in keep and (format == "csv" or not k.startswith(("sep", "delim")))}


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def type_rules(plan: dict[str, Any], columns: list[str]) -> list[dict[str, Any]]:
    """The rules over the marker column, for a DataFrame with ``columns`` ([] without it)."""
    if UNFIT not in columns:
        return []
    taken = {rule["id"] for rule in plan["rules"]}
    typed = [c for c in plan["columns"] if c["name"] in columns and c["type"] != "string"]
    rules = [_rule(f"{c['name']}.type", [c["name"]], c["name"],
                   f"the value does not fit type {c['type']}") for c in typed]
    rules.append(_rule("record.parseable", [], RECORD, "the record could not be parsed"))
    return [rule for rule in rules if rule["id"] not in taken]


def _rule(rule_id: str, columns: list[str], marker: str, description: str) -> dict[str, Any]:
    return {
        "id": rule_id, "kind": "type", "scope": "row", "columns": columns, "severity": "error",
        "source": "the landed file's parser", "enforceable": False, "description": description,
        "filter": None, "threshold": None,
        "predicate": f"NOT array_contains({_quote(UNFIT)}, {string_literal(marker)})",
    }
