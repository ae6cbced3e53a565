"""Types as contracts write them (contract_gate.contract.physical_types) and nested data
(contract_gate.contract.nested): every row of the dialect tables, the logical types, the rules a
type brings (varchar length, JSON, time of day), nested rules with dotted ids, and the error of a
type that has no Spark type."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contract_gate.contract import physical_types as pt
from contract_gate.contract.physical_types import UnmappedType, map_logical, map_physical
from contract_gate_plan.spark_types import spark_type
from contract_gate_plan.sql_allowlist import check_expression
from contract_gate_plan.table_ddl import expected_constraints
from tests.contracts._contract_texts import HEADER, compile_text, issues_of, rule

DOCS = Path(__file__).resolve().parents[2] / "docs" / "contracts.md"


_SERVER_FIELDS = {"postgres": "host: db, port: 5432, database: d, schema: s",
                  "snowflake": "account: a, database: d, schema: s", "bigquery": "project: p, dataset: d",
                  "local": "path: lakehouse, format: delta"}


def _server(server_type: str, name: str = "dev") -> str:
    return f"  - {{server: {name}, type: {server_type}, {_SERVER_FIELDS[server_type]}}}\n"


def _text(properties: str, server_type: str | None = None) -> str:
    import textwrap

    text = HEADER + textwrap.indent(textwrap.dedent(properties).strip("\n"), "      ") + "\n"
    return text + ("servers:\n" + _server(server_type) if server_type else "")


# -- every row of every table --------------------------------------------------------------------

def _rows():
    for dialect, table in {**pt.DIALECTS, "common": pt.COMMON, "spark": pt.SPARK}.items():
        for name, spec in table.items():
            yield dialect, name, spec


@pytest.mark.parametrize("dialect, name, spec", list(_rows()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_row_of_every_table_maps_to_a_spark_type_or_says_why_not(dialect, name, spec):
    server = {"common": None, "spark": None}.get(dialect, dialect)
    if dialect == "common" and name in pt.SPARK:
        server = "postgres"  # a Spark server reads the Spark name first; the row is reached from a dialect
    if isinstance(spec, pt._Refused):
        with pytest.raises(UnmappedType, match=re.escape(spec.reason)):
            map_physical(name, server)
        return
    mapped = map_physical(name.upper(), server)  # names are case-insensitive
    if dialect in pt.DIALECTS or server is None:
        assert mapped == spec.map([])
    assert spark_type(mapped.type) == mapped.type  # a Spark type, as the schema check writes it


REQUIRED = [  # (physicalType, server type, Spark type, maxLength, json, time), from the issue
    ("varchar(20)", "postgres", "string", 20, False, False),
    ("nvarchar(200)", "sqlserver", "string", 200, False, False),
    ("char(2)", "snowflake", "string", 2, False, False),
    ("character varying(64)", None, "string", 64, False, False),
    ("varchar(10)", None, "string", 10, False, False),
    ("numeric(12,2)", "postgres", "decimal(12,2)", None, False, False),
    ("NUMBER(18,2)", "snowflake", "decimal(18,2)", None, False, False),
    ("NUMBER", "snowflake", "decimal(38,0)", None, False, False),
    ("NUMBER", "oracle", "decimal(38,10)", None, False, False),
    ("NUMBER(6)", "oracle", "decimal(6,0)", None, False, False),
    ("decimal(10,2)", "mysql", "decimal(10,2)", None, False, False),
    ("text", "postgres", "string", None, False, False),
    ("uuid", None, "string", None, False, False),
    ("json", "postgres", "string", None, True, False),
    ("jsonb", None, "string", None, True, False),
    ("VARIANT", "snowflake", "string", None, True, False),
    ("timestamptz", "postgres", "timestamp", None, False, False),
    ("TIMESTAMP_LTZ", "snowflake", "timestamp", None, False, False),
    ("timestamp with time zone", "postgres", "timestamp", None, False, False),
    ("datetimeoffset", "sqlserver", "timestamp", None, False, False),
    ("timestamp", "postgres", "timestamp_ntz", None, False, False),
    ("timestamp", "snowflake", "timestamp_ntz", None, False, False),
    ("timestamp", None, "timestamp", None, False, False),
    ("timestamp", "databricks", "timestamp", None, False, False),
    ("TIMESTAMP", "bigquery", "timestamp", None, False, False),
    ("DATETIME", "bigquery", "timestamp_ntz", None, False, False),
    ("datetime2", "sqlserver", "timestamp_ntz", None, False, False),
    ("timestamp without time zone", None, "timestamp_ntz", None, False, False),
    ("INT64", "bigquery", "bigint", None, False, False),
    ("INT64", None, "bigint", None, False, False),
    ("INTEGER", "bigquery", "bigint", None, False, False),
    ("int4", None, "int", None, False, False),
    ("integer", "postgres", "int", None, False, False),
    ("smallint", "postgres", "smallint", None, False, False),
    ("tinyint(1)", "mysql", "boolean", None, False, False),
    ("tinyint(4)", "mysql", "tinyint", None, False, False),
    ("int(11) unsigned", "mysql", "bigint", None, False, False),
    ("bit", "sqlserver", "boolean", None, False, False),
    ("FLOAT64", "bigquery", "double", None, False, False),
    ("double precision", "postgres", "double", None, False, False),
    ("real", "postgres", "float", None, False, False),
    ("float4", None, "float", None, False, False),
    ("float(3,2)", "mysql", "float", None, False, False),
    ("float(53)", "postgres", "double", None, False, False),
    ("float(10)", "sqlserver", "float", None, False, False),
    ("BYTES", "bigquery", "binary", None, False, False),
    ("BYTES", None, "binary", None, False, False),
    ("bytea", "postgres", "binary", None, False, False),
    ("varbinary(16)", "mysql", "binary", None, False, False),
    ("blob", "duckdb", "binary", None, False, False),
    ("bool", "postgres", "boolean", None, False, False),
    ("date", "postgres", "date", None, False, False),
    ("DATE", "oracle", "timestamp_ntz", None, False, False),
    ("time", "postgres", "string", None, False, True),
    ("TIME", None, "string", None, False, True),
    ("STRUCT<a STRING, b INT64>", "bigquery", "struct<a:string,b:bigint>", None, False, False),
    ("ARRAY<STRUCT<x STRING>>", "bigquery", "array<struct<x:string>>", None, False, False),
    ("text[]", "postgres", "array<string>", None, False, False),
    ("STRUCT(a INT, b VARCHAR)", "duckdb", "struct<a:int,b:string>", None, False, False),
    ("MAP(VARCHAR, INTEGER)", "duckdb", "map<string,int>", None, False, False),
    ("row(a integer, b varchar)", "trino", "struct<a:int,b:string>", None, False, False),
    ("array(double)", "athena", "array<double>", None, False, False),
    ("timestamp-millis", "kafka", "timestamp", None, False, False),
    ("local-timestamp-micros", "kafka", "timestamp_ntz", None, False, False),
    ("long", "kafka", "bigint", None, False, False),
    ("9", None, "string", None, False, False),  # Protobuf's TYPE_STRING, as importers write it
    ("struct<lat:double,lon:double>", "postgres", "struct<lat:double,lon:double>", None, False, False),
    ("HUGEINT", "duckdb", "decimal(38,0)", None, False, False),
    ("super", "redshift", "string", None, True, False),
    ("interval", "postgres", "string", None, False, False),  # Delta stores no interval: its text
    ("RANGE<DATE>", "bigquery", "string", None, False, False),
    ("list", None, "array<string>", None, False, False),  # a container word without items
    ("map", "glue", "map<string,string>", None, False, False),
    ("enum", None, "string", None, False, False),
]


@pytest.mark.parametrize("physical, server, spark, max_length, json, time", REQUIRED)
def test_the_mappings_the_issue_names(physical, server, spark, max_length, json, time):
    assert map_physical(physical, server) == pt.Mapped(spark, max_length, json, time)


@pytest.mark.parametrize("physical, server, reason", [
    ("decimal(40,2)", "postgres", "above Spark's 38 digits"),
    ("hstore", "postgres", "unknown type 'hstore'"),
    ("geometry", None, "unknown type 'geometry'"),
    ("varchar(10, 2)", "postgres", "at most 1 argument"),
])
def test_a_type_without_a_spark_type_says_why(physical, server, reason):
    with pytest.raises(UnmappedType, match=re.escape(reason)):
        map_physical(physical, server)


def test_the_server_of_the_environment_chooses_the_dialect():
    text = _text("""
        - name: at
          physicalType: timestamp
          logicalType: timestamp
        """) + "servers:\n" + _server("local") + _server("snowflake", "wh")
    assert compile_text(text)["columns"][0]["type"] == "timestamp"
    assert compile_text(text, "wh")["columns"][0]["type"] == "timestamp_ntz"


# -- logical types --------------------------------------------------------------------------------

@pytest.mark.parametrize("logical, options, spark", [
    ("string", None, "string"), ("string", {"format": "uuid"}, "string"), ("integer", None, "bigint"),
    ("integer", {"format": "i8"}, "tinyint"), ("integer", {"format": "i16"}, "smallint"),
    ("integer", {"format": "i32"}, "int"), ("integer", {"format": "i64"}, "bigint"),
    ("integer", {"format": "u32"}, "bigint"), ("integer", {"format": "u64"}, "decimal(20,0)"),
    ("number", None, "double"), ("number", {"format": "f32"}, "float"), ("boolean", None, "boolean"),
    ("date", None, "date"), ("timestamp", None, "timestamp"), ("timestamp", {"timezone": False}, "timestamp_ntz"),
    ("time", None, "string"), ("vector", {"dimensions": 3}, "array<float>"),
])
def test_a_logical_type_alone_gives_a_spark_type(logical, options, spark):
    assert map_logical(logical, options).type == spark


def test_a_contract_with_only_logical_types_compiles_with_their_spark_types():
    plan = compile_text(_text("""
        - name: id
          logicalType: integer
          logicalTypeOptions: {format: i32, minimum: 1}
        - name: amount
          logicalType: number
        - name: born
          logicalType: date
        - name: seen_at
          logicalType: timestamp
        - name: opens
          logicalType: time
        - name: tags
          logicalType: array
          items: {logicalType: string}
        - name: home
          logicalType: object
          properties:
            - {name: city, logicalType: string}
            - {name: zip, logicalType: integer, logicalTypeOptions: {format: i32}}
        """))
    assert [(c["name"], c["type"]) for c in plan["columns"]] == [
        ("id", "int"), ("amount", "double"), ("born", "date"), ("seen_at", "timestamp"), ("opens", "string"),
        ("tags", "array<string>"), ("home", "struct<city:string,zip:int>")]
    assert rule(plan, "id.minimum")["predicate"] == "(`id` IS NULL OR `id` >= 1)"
    assert rule(plan, "opens.time")["source"] == "schema[0].properties[4].logicalType"


def test_physical_type_decides_and_logical_type_documents():
    plan = compile_text(_text("""
        - name: n
          physicalType: smallint
          logicalType: integer
          logicalTypeOptions: {format: i64}
        """))
    assert plan["columns"][0]["type"] == "smallint"


def test_an_unmappable_type_names_the_property_the_server_type_and_the_tables():
    issues = issues_of(_text("""
        - name: a
          physicalType: string
          logicalType: string
        - name: where
          physicalType: varchar(many)
          logicalType: string
        """, "postgres"))
    assert issues == [("schema[0].properties[1].physicalType",
                       "physicalType 'varchar(many)' has no Spark type in the postgres dialect (server type "
                       "'postgres'): argument 'many' is not a number (the type tables: docs/contracts.md#types)")]


# -- the rules a type brings ---------------------------------------------------------------------

def test_varchar_n_gives_a_max_length_rule_from_the_physical_type():
    plan = compile_text(_text("- {name: code, physicalType: varchar(3), logicalType: string}", "postgres"))
    length = rule(plan, "code.max_length")
    assert length["source"] == "schema[0].properties[0].physicalType"
    assert length["predicate"] == "(`code` IS NULL OR char_length(`code`) <= 3)"
    assert length["enforceable"] is True
    # a maxLength the contract gives is the one rule
    plan = compile_text(_text("- {name: code, physicalType: varchar(3), logicalType: string, "
                              "logicalTypeOptions: {maxLength: 2}}", "postgres"))
    assert [r["id"] for r in plan["rules"]] == ["code.max_length"]
    assert rule(plan, "code.max_length")["source"] == "schema[0].properties[0].logicalTypeOptions.maxLength"


def test_a_json_column_gets_a_rule_that_its_text_parses_as_json():
    plan = compile_text(_text("- {name: doc, physicalType: jsonb, logicalType: string}", "postgres"))
    json_rule = rule(plan, "doc.json")
    assert json_rule["kind"] == "json"
    assert json_rule["predicate"] == "(`doc` IS NULL OR get_json_object(`doc`, '$') IS NOT NULL)"
    assert check_expression(json_rule["predicate"]) == json_rule["predicate"]
    assert json_rule["enforceable"] is True


def test_a_time_column_is_text_with_a_time_of_day_rule():
    plan = compile_text(_text("- {name: opens, physicalType: time, logicalType: time}", "postgres"))
    assert plan["columns"][0]["type"] == "string"
    assert rule(plan, "opens.time")["kind"] == "pattern"


# -- nested data ---------------------------------------------------------------------------------

NESTED = """
- name: id
  physicalType: string
  logicalType: string
  primaryKey: true
- name: address
  logicalType: object
  properties:
    - {name: city, logicalType: string, required: true, logicalTypeOptions: {maxLength: 20}}
    - {name: zip, physicalType: varchar(5), logicalType: string}
- name: lines
  logicalType: array
  logicalTypeOptions: {minItems: 1}
  items:
    logicalType: object
    properties:
      - {name: sku, logicalType: string, required: true, logicalTypeOptions: {pattern: '^S-[0-9]+$'}}
      - {name: qty, logicalType: integer, logicalTypeOptions: {minimum: 1}}
      - name: tags
        logicalType: array
        items: {logicalType: string, enum: [{value: a}, {value: b}]}
"""


def test_nested_properties_and_items_become_struct_and_array_columns():
    plan = compile_text(_text(NESTED, "postgres"))
    assert [(c["name"], c["type"]) for c in plan["columns"]] == [
        ("id", "string"), ("address", "struct<city:string,zip:string>"),
        ("lines", "array<struct<sku:string,qty:bigint,tags:array<string>>>")]


def test_rules_on_nested_fields_are_predicates_on_the_column_with_dotted_ids():
    plan = compile_text(_text(NESTED, "postgres"))
    ids = [r["id"] for r in plan["rules"]]
    for expected in ("address.city.required", "address.city.max_length", "address.zip.max_length",
                     "lines.min_items", "lines[].sku.required", "lines[].sku.pattern", "lines[].qty.minimum",
                     "lines[].tags[].enum"):
        assert expected in ids
    city = rule(plan, "address.city.required")
    assert city["columns"] == ["address"]
    assert city["predicate"] == "(`address` IS NULL OR `address`.`city` IS NOT NULL)"
    sku = rule(plan, "lines[].sku.required")
    assert sku["predicate"] == ("(`lines` IS NULL OR forall(`lines`, `x1` -> (`x1` IS NULL OR "
                                "`x1`.`sku` IS NOT NULL)))")
    assert rule(plan, "lines[].tags[].enum")["predicate"] == (
        "(`lines` IS NULL OR forall(`lines`, `x1` -> (`x1` IS NULL OR (`x1`.`tags` IS NULL OR "
        "forall(`x1`.`tags`, `x2` -> (`x2` IS NULL OR `x2` IN ('a', 'b')))))))")
    for r in plan["rules"]:
        if r["predicate"]:
            assert check_expression(r["predicate"]) == r["predicate"]  # as the Spark side re-checks it


def test_delta_holds_struct_field_rules_as_checks_and_not_lambdas():
    plan = compile_text(_text(NESTED, "postgres")
                        + "customProperties:\n  - property: contractGate\n    value:\n"
                          "      landing: {path: landing/t, format: parquet}\n")
    assert rule(plan, "lines[].sku.required")["enforceable"] is False
    constraints = expected_constraints(plan)
    assert constraints["cg_address_city_required"] == "(`address` IS NULL OR `address`.`city` IS NOT NULL)"
    assert "cg_id_required" not in constraints  # a NOT NULL column
    assert not any("forall" in text for text in constraints.values())


@pytest.mark.parametrize("properties, path, message", [
    ("- {name: a, logicalType: object, properties: [{name: \"bad\\nname\", logicalType: string}]}",
     "schema[0].properties[0].properties[0].name", "unsafe nested field name 'bad\\nname'"),
    ("- {name: a, logicalType: object, properties: [{name: '${env:HOME}', logicalType: string}]}",
     "schema[0].properties[0].properties[0].name", "unsafe nested field name '${env:HOME}'"),
    ("- {name: a, logicalType: object, properties: [{name: b, logicalType: string, unique: true}]}",
     "schema[0].properties[0].properties[0].unique", "unique on a nested field is not supported"),
    ("- {name: a, physicalType: 'struct<b:int>', logicalType: object, properties: [{name: b, logicalType: string}]}",
     "schema[0].properties[0].physicalType", "but the nested properties describe struct<b:string>"),
    ("- {name: b, logicalType: array, physicalType: string, logicalTypeOptions: {maxItems: 3}}",
     "schema[0].properties[0].logicalTypeOptions.maxItems", "maxItems applies to array columns, not string"),
])
def test_nested_fields_that_cannot_be_gated_are_named(properties, path, message):
    issues = issues_of(_text(properties))
    assert any(p == path and message in m for p, m in issues), issues


def test_container_words_leave_the_type_to_the_nested_properties():
    plan = compile_text(_text("""
        - name: reviews
          physicalType: repeated message
          logicalType: array
          items:
            physicalType: message
            logicalType: object
            properties:
              - {name: rating, physicalType: '5', logicalType: integer}
        """))
    assert plan["columns"][0]["type"] == "array<struct<rating:int>>"


def test_a_bigquery_range_whose_bounds_are_items_is_that_array():
    """datacontract-cli's BigQuery import writes a RANGE column with its bounds as items."""
    plan = compile_text(_text("""
        - name: valid_during
          physicalType: RANGE
          logicalType: array
          items: {physicalType: DATETIME, logicalType: timestamp}
        - name: as_text
          physicalType: RANGE<DATE>
          logicalType: string
        """, "bigquery"))
    assert [c["type"] for c in plan["columns"]] == ["array<timestamp_ntz>", "string"]


# -- the documentation lists every row -------------------------------------------------------------

def _documented_rows():
    section = DOCS.read_text(encoding="utf-8").split("\n## Types", 1)[1].split("\n## ", 1)[0]
    dialect = None
    for line in section.splitlines():
        heading = re.match(r"#### (\w+)", line)
        if heading:
            dialect = heading.group(1)
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if dialect and line.startswith("| `") and len(cells) >= 2:
            for name in re.findall(r"`([^`]+)`", cells[0]):
                yield dialect, name, cells[1]


def test_the_docs_list_every_row_of_the_tables_as_the_code_maps_it():
    documented = {(dialect, name): described for dialect, name, described in _documented_rows()
                  if dialect != "logicalType"}
    expected = {(dialect, name): spec.described for dialect, name, spec in _rows()}
    assert documented == expected


LOGICAL_TYPES = ("string", "integer", "number", "boolean", "date", "timestamp", "time", "array", "map", "object",
                 "vector")


def test_the_docs_table_of_logical_types_is_what_the_code_maps_them_to():
    def described(mapped) -> str:
        return mapped.type + (" + a JSON rule" if mapped.json else "") + (
            " + a time-of-day pattern rule" if mapped.time else "")

    documented = {name: text for dialect, name, text in _documented_rows() if dialect == "logicalType"}
    assert documented == {name: described(map_logical(name, None)) for name in LOGICAL_TYPES}


def test_an_object_without_properties_is_a_map_of_text():
    plan = compile_text(_text("- {name: attributes, logicalType: object}\n- {name: bag, logicalType: object, "
                              "physicalType: object}"))
    assert [c["type"] for c in plan["columns"]] == ["map<string,string>", "map<string,string>"]
