"""Predicates and DDL proven on real Spark and Delta: the compiled text parses, quotes what it
must, and accepts exactly the rows it should (TRUE = valid; the engine and Delta both treat a
NULL result as a failure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _contract_texts import column, compile_text, contract, rule
from contract_gate.contract.compiler import compile_plan
from contract_gate_plan.sql_text import quote_identifier
from contract_gate_plan.table_ddl import compatibility_differences, create_table_statements

EXAMPLES = Path(__file__).resolve().parents[2] / "contracts"
HOSTILE = "x') OR 1=1 --"


def passing(spark, rows, schema: str, predicate: str) -> list:
    """The rows for which ``predicate`` is TRUE (the engine's ``coalesce(predicate, false)``)."""
    df = spark.createDataFrame(rows, schema)
    return sorted((tuple(r) for r in df.where(f"coalesce({predicate}, false)").collect()), key=repr)


def test_hostile_enum_and_pattern_values_stay_literals(spark):
    text = contract(column("v", "string", "string", enum=f'[{{value: "{HOSTILE}"}}, {{value: "a\\\\b"}}]',
                           logicalTypeOptions="{pattern: \"^x'\\\\) OR 1=1 --$\"}"))
    plan = compile_text(text)
    enum = rule(plan, "v.enum")["predicate"]
    assert enum == "(`v` IS NULL OR `v` IN ('x\\') OR 1=1 --', 'a\\\\b'))"
    rows = [(HOSTILE,), ("x",), ("a\\b",), ("anything",), (None,)]
    assert passing(spark, rows, "v string", enum) == sorted([(HOSTILE,), ("a\\b",), (None,)], key=repr)
    assert passing(spark, rows, "v string", rule(plan, "v.pattern")["predicate"]) == sorted([(HOSTILE,), (None,)], key=repr)


def test_reserved_words_dots_spaces_and_backquotes_as_column_names(spark):
    names = ["select", "order", "a.b", "with space", "back`tick"]
    props = "".join(column(f'"{n}"', "int", "integer", required="true", logicalTypeOptions="{minimum: 0}") for n in names)
    plan = compile_text(contract(props))
    assert rule(plan, "back`tick.required")["predicate"] == "`back``tick` IS NOT NULL"
    assert plan["delta_column_mapping"] is True  # "with space" needs Delta column mapping
    schema = ", ".join(f"{quote_identifier(n)} int" for n in names)
    rows = [(1, 2, 3, 4, 5), (1, 2, 3, 4, -5), (None, 2, 3, 4, 5), (0, -1, 3, 4, 5)]
    predicates = " AND ".join(r["predicate"] for r in plan["rules"])
    assert passing(spark, rows, schema, predicates) == [(1, 2, 3, 4, 5)]


WHITESPACE_VALUES = ["", " ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", "\u200b", " \t\u00a0 ", "a", " a ", "\ta\n"]


@pytest.mark.parametrize("mode, blank", [
    ("whitespace", ["", " ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", "\u200b", " \t\u00a0 "]),
    ("spaces", ["", " ", "   "]),  # Spark's trim removes U+0020 only: a tab or NBSP counts as content
])
def test_not_blank_definitions(spark, mode, blank):
    plan = compile_text(contract(column("v", "string", "string", customProperties=f"[{{property: notBlank, value: {mode}}}]")))
    rows = [(v,) for v in WHITESPACE_VALUES] + [(None,)]
    valid = passing(spark, rows, "v string", rule(plan, "v.not_blank")["predicate"])
    assert valid == sorted([(v,) for v in WHITESPACE_VALUES if v not in blank] + [(None,)], key=repr)


def test_bounds_on_numbers_dates_timestamps_and_nan(spark):
    props = (column("d", "decimal(6,2)", "number", logicalTypeOptions="{minimum: 0.1, exclusiveMaximum: 10}")
             + column("f", "double", "number", logicalTypeOptions="{minimum: 0}")
             + column("day", "date", "date", logicalTypeOptions="{minimum: '2020-01-01', maximum: '2020-12-31'}")
             + column("ts", "timestamp", "timestamp", logicalTypeOptions="{exclusiveMinimum: '2020-01-01T00:00:00Z'}"))
    plan = compile_text(contract(props))
    df = spark.sql("""SELECT * FROM VALUES
        (CAST(0.10 AS DECIMAL(6,2)), CAST(0 AS DOUBLE), DATE'2020-01-01', TIMESTAMP'2020-01-01 00:00:01'),
        (CAST(0.09 AS DECIMAL(6,2)), CAST('NaN' AS DOUBLE), DATE'2019-12-31', TIMESTAMP'2020-01-01 00:00:00'),
        (CAST(10.00 AS DECIMAL(6,2)), CAST(-0.5 AS DOUBLE), DATE'2021-01-01', TIMESTAMP'2019-01-01 00:00:00'),
        (CAST(NULL AS DECIMAL(6,2)), CAST(NULL AS DOUBLE), CAST(NULL AS DATE), CAST(NULL AS TIMESTAMP))
        AS t(d, f, day, ts)""")
    results = {r["id"]: [row[0] for row in df.selectExpr(f"coalesce({r['predicate']}, false)").collect()]
               for r in plan["rules"]}
    assert results == {
        "d.minimum": [True, False, True, True], "d.exclusive_maximum": [True, True, False, True],
        "f.minimum": [True, False, False, True],  # NaN is not >= 0
        "day.minimum": [True, False, True, True], "day.maximum": [True, True, False, True],
        "ts.exclusive_minimum": [True, False, False, True],
    }


def test_dqx_functions_behave_like_dqx(spark):
    props = column("currency", "string", "string", quality="""\
- type: custom
  engine: dqx
  implementation: {name: in_list, check: {function: is_in_list, arguments: {allowed: ["'USD'", EUR]}}}
- type: custom
  engine: dqx
  implementation: {name: valid_date, check: {function: is_valid_date, arguments: {date_format: yyyy-MM-dd}}}
- type: custom
  engine: dqx
  implementation: {name: not_x, check: {function: sql_expression, arguments: {expression: "currency <> 'X'"}}}
""")
    plan = compile_text(contract(props))
    rows = [("USD",), ("EUR",), ("usd",), ("X",), ("2024-02-29",), ("2024-02-30",), (None,)]
    assert passing(spark, rows, "currency string", rule(plan, "in_list")["predicate"]) == [("EUR",), ("USD",), (None,)]
    assert passing(spark, rows, "currency string", rule(plan, "valid_date")["predicate"]) == [("2024-02-29",), (None,)]
    assert ("X",) not in passing(spark, rows, "currency string", rule(plan, "not_x")["predicate"])
    assert (None,) in passing(spark, rows, "currency string", rule(plan, "not_x")["predicate"])  # DQX: NULL passes


def example_plan(name: str) -> dict:
    return compile_plan(EXAMPLES / f"{name}.yaml")


def create(spark, plan: dict, path: Path) -> dict:
    address = {"kind": "path", "path": str(path)}
    for statement in create_table_statements(plan, address):
        spark.sql(statement)
    return address


def deployed(spark, path: Path):
    properties = spark.sql(f"DESCRIBE DETAIL delta.`{path}`").collect()[0]["properties"]
    fields = [(f.name, f.dataType.simpleString(), f.nullable) for f in spark.read.format("delta").load(str(path)).schema.fields]
    return fields, dict(properties)


VIOLATIONS = {  # one row per example that breaks exactly one CHECK constraint
    "regional_daily_cases": ("('NL-01', DATE'2024-01-01', 'org', -1, 'final')", "cg_case_count_minimum"),
    "orders": ("('o1', 'c1', 10.0, 'JPY', TIMESTAMP'2024-01-01 00:00:00')", "cg_currency_allowed"),
    "meter_readings": ("('M000001', 1, TIMESTAMP'2024-01-01 00:00:00', -1.000, 230.0, NULL)", "cg_kwh_minimum"),
}


@pytest.fixture(scope="module")
def example_tables(spark, tmp_path_factory):
    """The three example target tables, created once (every ALTER TABLE is a Delta commit)."""
    root = tmp_path_factory.mktemp("targets")
    tables = {}
    for name in sorted(VIOLATIONS):
        plan = example_plan(name)
        create(spark, plan, root / name)
        tables[name] = (plan, root / name)
    return tables


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_example_ddl_creates_a_delta_table_that_enforces_the_plan(spark, example_tables, name):
    plan, path = example_tables[name]
    assert compatibility_differences(plan, *deployed(spark, path)) == []
    row, constraint = VIOLATIONS[name]
    with pytest.raises(Exception, match=f"(?s)DELTA_VIOLATE_CONSTRAINT.*{constraint}"):
        spark.sql(f"INSERT INTO delta.`{path}` VALUES {row}")
    assert spark.read.format("delta").load(str(path)).count() == 0


def test_compatibility_lists_a_dropped_constraint(spark, tmp_path):
    # its own table: the module's example tables are shared and must stay as the plan made them
    plan = example_plan("regional_daily_cases")
    path = tmp_path / "regional_daily_cases"
    create(spark, plan, path)
    spark.sql(f"ALTER TABLE delta.`{path}` DROP CONSTRAINT cg_status_enum")
    assert compatibility_differences(plan, *deployed(spark, path)) == [
        "constraint 'cg_status_enum' is missing from the table"]


def test_compatibility_lists_each_schema_difference(spark, tmp_path):
    plan = example_plan("regional_daily_cases")
    path = tmp_path / "changed"
    create_table = create_table_statements(plan, {"kind": "path", "path": str(path)})[0]
    spark.sql(create_table.replace("`case_count` bigint NOT NULL", "`case_count` int").replace(
        "`status` string NOT NULL", "`status` string NOT NULL,\n  `extra` string"))
    assert compatibility_differences(plan, *deployed(spark, path)) == [
        "column 'case_count' has type int, the plan says bigint",
        "column 'case_count' is nullable in the table, the plan says NOT NULL",
        "column 'extra' is in the table but not in the plan",
        "constraint 'cg_region_code_max_length' is missing from the table",
        "constraint 'cg_region_code_not_blank' is missing from the table",
        "constraint 'cg_report_date_minimum' is missing from the table",
        "constraint 'cg_case_count_minimum' is missing from the table",
        "constraint 'cg_status_enum' is missing from the table",
    ]


def test_special_column_names_get_column_mapping_in_the_ddl(spark, tmp_path):
    props = column('"with space"', "int", "integer", required="true", logicalTypeOptions="{minimum: 0}") + \
        column("s", "struct<a:int,b_c:array<string>>", "object")
    plan = compile_text(contract(props))
    path = tmp_path / "mapped"
    create(spark, plan, path)
    assert compatibility_differences(plan, *deployed(spark, path)) == []
    with pytest.raises(Exception, match="DELTA_VIOLATE_CONSTRAINT"):
        spark.sql(f"INSERT INTO delta.`{path}` VALUES (-1, named_struct('a', 1, 'b_c', array('x')))")
