"""Values in a CSV or JSON file that do not fit the contract's type for their column.

Files without types of their own are parsed with the contract's types. Spark's FAILFAST mode
would stop the whole read at the first value that does not parse, and print that record,
classified values included, into the job's log. Instead the file is read in PERMISSIVE mode
with Spark's corrupt-record column, which holds the raw record of every row that did not
parse (its other values are parsed as far as they fit). That raw record is parsed once more,
as text, to name the columns whose value was there but did not fit; then it is dropped. What
stays, and is frozen with the candidate, is ``_contract_gate_unfit``: the names of those
columns (``*`` when the record as a whole did not parse), empty for a row that fit.

Spark's readers also coerce values that do parse, and those are marked too, never kept as if
they fit:

* a JSON object or array (or number, or boolean) in a string column, which Spark would store as
  its JSON text: JSON string columns are read as VARIANT, and only a JSON string (or null) fits;
* a float or double that is not finite: a numeral that overflows (``1e999`` parses as
  +Infinity) or a NaN/Infinity token (``NaN``, ``Inf``, ``-Infinity``, quoted or not). A column
  whose contract property says ``allowNonFinite: true`` accepts the tokens: it is read as text
  and converted here, so a numeral that overflows still fails.

Integers and decimals that overflow do not parse at all, so they are marked like any other
value that does not fit. The marker column's metadata lists the columns the parser checked
(:data:`CHECKED`); each gets the row rule ``<column>.type`` (and the batch ``record.parseable``):
such a row is counted, carries the rule id in ``_errors``, is quarantined and never published,
and its value is never printed. Without the marker column (Delta, Parquet, a DataFrame handed
in) there are no such rules: those inputs carry their own types, which the schema check compares.
"""

from __future__ import annotations

from dataclasses import replace

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, FloatType, StringType, StructField, StructType, VariantType

from contract_gate_plan.model import Plan, Rule
from contract_gate_plan.sql_text import quote_identifier, string_literal

UNFIT = "_contract_gate_unfit"
RECORD = "*"
CHECKED = "contract_gate.checked"
"""Metadata key of the marker column: the columns whose values the parser checked."""
_RAW = "_contract_gate_raw_record"
# What Spark's readers and casts take for NaN and the infinities, in any case, with a sign.
_NON_FINITE_TOKEN = r"^\s*[+-]?(?i:nan|inf|infinity)\s*$"


def read_text(
    spark: SparkSession,
    path: str,
    format: str,
    options: dict[str, str],
    schema: StructType,
    non_finite_allowed: frozenset[str] = frozenset(),
    json_text: frozenset[str] = frozenset(),
) -> DataFrame:
    """``path`` read with ``schema``, plus the ``_contract_gate_unfit`` column.

    ``non_finite_allowed``: float/double columns whose NaN and Infinity tokens fit.
    ``json_text``: string columns of JSON text, where any JSON value fits (kept as its text)."""
    kinds = {f.name: _read_kind(f, format, non_finite_allowed, json_text) for f in schema.fields}
    read_types = {"variant": VariantType(), "text": StringType()}
    read_schema = StructType([StructField(f.name, read_types.get(kinds[f.name], f.dataType)) for f in schema.fields])
    reader_options = {**options, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": _RAW}
    df = (spark.read.options(**reader_options).schema(StructType([*read_schema.fields, StructField(_RAW, StringType())]))
          .format(format).load(path))
    as_text = StructType([StructField(f.name, StringType()) for f in schema.fields])
    ddl = ", ".join(f"{quote_identifier(f.name)} STRING" for f in schema.fields)
    # no options at all rather than none: Spark Connect sends an empty dict as a typeless map()
    text_options = _text_options(format, options) or None
    if format == "csv":
        text = F.from_csv(F.col(_RAW), ddl, text_options)
    else:
        text = F.from_json(F.col(_RAW), as_text, text_options)
    values, checks = {}, []
    for field in schema.fields:
        name, column = field.name, F.col(quote_identifier(field.name))
        kind = kinds[name]
        if kind in ("typed", "finite"):  # a value that was there but did not parse
            checks.append(F.when(column.isNull() & text[name].isNotNull(), F.lit(name)))
        if kind == "finite":  # parsed, but as NaN or an infinity
            checks.append(F.when(_non_finite(column), F.lit(name)))
        elif kind == "variant":  # only a JSON string fits; an object keeps its JSON text for quarantine
            checks.append(F.when(column.isNotNull() & ~F.is_variant_null(column)
                                 & (F.schema_of_variant(column) != F.lit("STRING")), F.lit(name)))
            values[name] = column.cast("string")
        elif kind == "text":
            value, token = _number_from_text(column, field.dataType, options)
            overflow = _non_finite(value) & ~token
            checks.append(F.when(column.isNotNull() & (value.isNull() | overflow), F.lit(name)))
            values[name] = value
    named = F.filter(F.array(*checks) if checks else F.array().cast("array<string>"), lambda n: n.isNotNull())
    # A record the reader could not parse at all (malformed, or a value past the parser's limits)
    # leaves every column NULL: the record is unfit, not the values the text parse may still pick
    # out of it.
    nothing_read = F.lit(True)
    for field in schema.fields:
        nothing_read = nothing_read & F.col(quote_identifier(field.name)).isNull()
    unfit = (F.when(F.col(_RAW).isNull() & (F.size(named) == 0), F.array().cast("array<string>"))
             .when((F.col(_RAW).isNotNull() & nothing_read) | (F.size(named) == 0), F.array(F.lit(RECORD)))
             .otherwise(named))
    checked = [name for name, kind in kinds.items() if kind != "string"]
    # the marker first: it reads the columns as they were read (a VARIANT, a float's text). Its
    # metadata through withMetadata: Spark Connect drops an alias's metadata in withColumn, and
    # without the list a string column's JSON object would pass as fitting
    marked = df.withColumn(UNFIT, unfit).withMetadata(UNFIT, {CHECKED: checked})
    # an empty withColumns is a no-op in a classic session, an error over Spark Connect
    return (marked.withColumns(values) if values else marked).drop(_RAW)


def _read_kind(field: StructField, format: str, non_finite_allowed: frozenset[str], json_text: frozenset[str]) -> str:
    """How a column is read: ``string`` (CSV text, or a JSON text column, which Spark's JSON reader
    gives an object or array as its JSON text: nothing to check), ``variant`` (a JSON string
    column), ``text`` (a float/double that takes NaN/Infinity tokens, converted here),
    ``finite`` (a float/double read by Spark), ``typed`` (any other type read by Spark)."""
    if isinstance(field.dataType, StringType):
        return "variant" if format == "json" and field.name not in json_text else "string"
    if isinstance(field.dataType, (FloatType, DoubleType)):
        return "text" if field.name in non_finite_allowed else "finite"
    return "typed"


def _non_finite(column: Column) -> Column:
    return F.isnan(column) | (F.abs(column) == F.lit(float("inf")))


def _number_from_text(column: Column, data_type, options: dict[str, str]) -> tuple[Column, Column]:
    """(value, is a NaN/Infinity token) of a float/double's text: the value as the CSV reader
    takes it (its ``nanValue``, ``positiveInf`` and ``negativeInf`` options first), NULL when
    the text is not a number."""
    special = [(options.get(option), meaning) for option, meaning in
               (("nanValue", "NaN"), ("positiveInf", "Infinity"), ("negativeInf", "-Infinity"))
               if options.get(option)]
    value, token = F.trim(column), column.rlike(_NON_FINITE_TOKEN)
    for text, meaning in special:
        value = F.when(column == F.lit(text), F.lit(meaning)).otherwise(value)
        token = token | (column == F.lit(text))
    return value.try_cast(data_type), token


def _text_options(format: str, options: dict[str, str]) -> dict[str, str]:
    """The reader options that also shape how one raw record splits into values."""
    keep = ("sep", "delimiter", "quote", "escape", "nullValue", "emptyValue", "ignoreLeadingWhiteSpace",
            "ignoreTrailingWhiteSpace", "allowSingleQuotes", "allowUnquotedFieldNames", "allowComments")
    return {k: v for k, v in options.items() if k in keep and (format == "csv" or not k.startswith(("sep", "delim")))}


def type_rules(plan: Plan, schema: StructType) -> list[Rule]:
    """The rules over the marker column, for a DataFrame with ``schema`` ([] without it)."""
    if UNFIT not in schema.fieldNames():
        return []
    taken = {rule.id for rule in plan.rules}
    checked = schema[UNFIT].metadata.get(CHECKED)
    if checked is None:  # a candidate staged before the marker listed its columns
        checked = [f.name for f in schema.fields if f.dataType != StringType()]
    typed = [c for c in plan.columns if c.name in checked]
    rules = [_rule(f"{c.name}.type", [c.name], c.name,
                   f"the value does not fit type {c.type}") for c in typed]
    rules.append(_rule("record.parseable", [], RECORD, "the record could not be parsed"))
    return [rule for rule in rules if rule.id not in taken]


def parsed_records_only(rules: list[Rule], schema: StructType) -> list[Rule]:
    """``rules`` with each row rule judging only the records that parsed: an unparseable record
    fails ``record.parseable``, and nothing else of it is judged (its values are all NULL, and
    would fail every ``required`` as if the producer had left them out)."""
    if UNFIT not in schema.fieldNames():
        return rules
    parsed = f"NOT array_contains({quote_identifier(UNFIT)}, {string_literal(RECORD)})"
    return [replace(rule, filter=f"({rule.filter}) AND {parsed}" if rule.filter else parsed)
            if rule.scope == "row" else rule for rule in rules]


def _rule(rule_id: str, columns: list[str], marker: str, description: str) -> Rule:
    return Rule(
        id=rule_id, kind="type", scope="row", columns=tuple(columns), severity="error",
        source="the landed file's parser", description=description,
        predicate=f"NOT array_contains({quote_identifier(UNFIT)}, {string_literal(marker)})",
    )
