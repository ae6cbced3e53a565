"""Checks on nested fields, DQX's own forms (``for_each_column``, the criticalities teams write),
and nested field names of any text: the compiler's side (plans and contract errors)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from contract_gate_plan.spark_types import nested_parts, spark_type, struct_field
from contract_gate_plan.sql_allowlist import check_expression
from contract_gate_plan.table_ddl import create_table_statements
from tests.contracts._contract_texts import contract, compile_text, issues_of, rule

GATED = """\
customProperties:
  - property: contractGate
    value:
      landing: {path: landing/t, format: parquet}
"""
WARN = GATED + "      unsupportedChecks: warn\n"

PROFILE = """\
- {name: id, physicalType: string, logicalType: string, primaryKey: true}
- name: user_profile
  logicalType: object
  properties:
    - name: age
      logicalType: integer
      quality:
        - type: custom
          engine: dqx
          implementation: {criticality: minor, check: {function: is_in_range, arguments: {min_limit: 13, max_limit: 120}}}
        - {type: library, metric: nullValues, mustBeLessThan: 10, unit: percent}
    - name: country
      logicalType: string
      quality:
        - {type: library, metric: invalidValues, arguments: {validValues: [NL, BE]}, mustBe: 0}
- name: lines
  logicalType: array
  items:
    logicalType: object
    properties:
      - name: sku
        logicalType: string
        quality:
          - {type: library, metric: nullValues, mustBe: 0}
          - type: custom
            engine: dqx
            implementation: {check: {function: regex_match, arguments: {regex: '^SKU-[0-9]+$'}}}
"""


def test_quality_on_nested_fields_becomes_rules_on_the_dotted_path():
    plan = compile_text(contract(PROFILE, extra=GATED))
    age = rule(plan, "user_profile.age.is_in_range")
    assert (age["columns"], age["severity"], age["scope"]) == (["user_profile"], "warning", "row")
    assert age["predicate"] == ("(`user_profile` IS NULL OR (`user_profile`.`age` IS NULL OR "
                                "(`user_profile`.`age` >= 13 AND `user_profile`.`age` <= 120)))")
    tolerated = rule(plan, "user_profile.age.nullValues")  # a tolerance on a struct field counts rows
    assert (tolerated["scope"], tolerated["threshold"]["unit"]) == ("dataset", "percent")
    assert tolerated["predicate"] == "(`user_profile` IS NULL OR `user_profile`.`age` IS NOT NULL)"
    assert rule(plan, "user_profile.country.invalidValues")["predicate"] == (
        "(`user_profile` IS NULL OR (`user_profile`.`country` IS NULL OR `user_profile`.`country` IN ('NL', 'BE')))")
    sku = rule(plan, "lines[].sku.nullValues")
    assert (sku["scope"], sku["columns"], sku["enforceable"]) == ("row", ["lines"], False)  # a lambda: no CHECK
    assert sku["predicate"] == ("(`lines` IS NULL OR forall(`lines`, `x1` -> (`x1` IS NULL OR "
                                "`x1`.`sku` IS NOT NULL)))")
    assert "forall(`lines`" in rule(plan, "lines[].sku.regex_match")["predicate"]
    for r in plan["rules"]:
        if r["predicate"]:
            assert check_expression(r["predicate"]) == r["predicate"]  # as the Spark side re-checks it


def test_a_schema_level_dqx_check_names_a_nested_field_by_its_dotted_path():
    quality = """\
- type: custom
  engine: dqx
  implementation:
    criticality: warning
    filter: "user_profile.age IS NOT NULL"
    check: {function: is_in_range, arguments: {column: user_profile.age, min_limit: 13, max_limit: 120}}
"""
    plan = compile_text(contract(PROFILE, quality, GATED))
    checked = rule(plan, "user_profile.age.is_in_range_2")  # the property's own check has the plain id
    assert (checked["columns"], checked["severity"], checked["filter"]) == (
        ["user_profile"], "warning", "(`user_profile`.`age` IS NOT NULL)")
    assert checked["predicate"].startswith("(`user_profile` IS NULL OR (`user_profile`.`age` IS NULL OR")


@pytest.mark.parametrize("check, what", [
    ("{type: library, metric: duplicateValues, mustBe: 0}", "a unique check of nested field 'address.city'"),
    ("{type: custom, engine: dqx, implementation: {check: {function: is_unique}}}",
     "a unique check of nested field 'address.city'"),
    ("{type: sql, query: 'SELECT count(*) FROM {object}', mustBe: 0}", "a sql check of nested field 'address.city'"),
])
def test_a_check_a_nested_field_cannot_take_is_refused_or_listed_as_not_evaluated(check, what):
    properties = f"""\
- name: address
  logicalType: object
  properties:
    - name: city
      logicalType: string
      quality:
        - {check}
"""
    [(path, message)] = issues_of(contract(properties, extra=GATED))
    assert path == "schema[0].properties[0].properties[0].quality[0]"
    assert what in message and "unsupportedChecks: warn" in message
    listed = rule(compile_text(contract(properties, extra=WARN)), "address.city.unsupported")
    assert (listed["kind"], listed["severity"], listed["columns"]) == ("unsupported", "warning", ["address"])
    assert what in listed["reason"]


def test_a_tolerance_over_array_elements_follows_unsupported_checks():
    properties = """\
- name: tags
  logicalType: array
  items:
    logicalType: string
    quality:
      - {type: library, metric: nullValues, mustBeLessThan: 5, unit: percent}
"""
    [(_, message)] = issues_of(contract(properties, extra=GATED))
    assert "nested field 'tags[]' over array elements" in message
    assert rule(compile_text(contract(properties, extra=WARN)), "tags[].unsupported")["kind"] == "unsupported"


def test_a_row_expression_on_a_nested_field_reads_the_record_as_written():
    properties = """\
- name: address
  logicalType: object
  properties:
    - name: city
      logicalType: string
      quality:
        - {type: custom, engine: spark-sql, implementation: "address.city <> 'x'"}
"""
    custom = rule(compile_text(contract(properties, extra=GATED)), "address.city.custom_sql")
    assert (custom["predicate"], custom["columns"]) == ("(`address`.`city` <> 'x')", ["address"])


# -- DQX forms ---------------------------------------------------------------------------------------

COLUMNS = """\
- {name: a, physicalType: string, logicalType: string}
- {name: b, physicalType: string, logicalType: string}
- {name: n, physicalType: int, logicalType: integer}
"""


@pytest.mark.parametrize("criticality, severity", [
    ("error", "error"), ("warn", "warning"), ("warning", "warning"), ("minor", "warning"), ("info", "warning")])
def test_a_criticality_other_than_error_is_a_warning(criticality, severity):
    quality = f"- {{type: custom, engine: dqx, implementation: {{criticality: {criticality}, " \
              "check: {function: is_not_null, arguments: {column: a}}}}"
    assert rule(compile_text(contract(COLUMNS, quality)), "a.is_not_null")["severity"] == severity


def test_for_each_column_is_one_check_per_column():
    quality = """\
- type: custom
  engine: dqx
  implementation:
    filter: "n > 0"
    check: {function: is_not_null_and_not_empty, for_each_column: [a, b], arguments: {trim_strings: true}}
- type: custom
  engine: dqx
  implementation:
    name: present
    check: {function: is_not_null, for_each_column: [a, n]}
- id: no_repeats
  type: custom
  engine: dqx
  implementation: {check: {function: is_unique, for_each_column: [[a, b], n]}}
"""
    plan = compile_text(contract(COLUMNS, quality))
    ids = [r["id"] for r in plan["rules"]]
    assert ids == ["a.is_not_null_and_not_empty", "b.is_not_null_and_not_empty", "present.a", "present.n",
                   "no_repeats.a.b", "no_repeats.n"]
    assert rule(plan, "b.is_not_null_and_not_empty")["predicate"] == "(`b` IS NOT NULL AND trim(CAST(`b` AS STRING)) <> '')"
    assert rule(plan, "b.is_not_null_and_not_empty")["filter"] == "(`n` > 0)"
    assert rule(plan, "no_repeats.a.b")["columns"] == ["a", "b"]
    assert rule(plan, "present.n")["source"] == "schema[0].quality[1]"


@pytest.mark.parametrize("check, path, message", [
    ("{function: is_not_null, for_each_column: [a, nope]}", "implementation.check.for_each_column[1]",
     "unknown column 'nope'"),
    ("{function: is_not_null, for_each_column: []}", "implementation.check.for_each_column", "non-empty list"),
    ("{function: is_not_null, for_each_column: [a], arguments: {column: b}}",
     "implementation.check.arguments.column", "not both"),
    ("{function: sql_expression, for_each_column: [a], arguments: {expression: 'a > 1'}}",
     "implementation.check.for_each_column", "takes no column"),
])
def test_for_each_column_errors_name_the_item(check, path, message):
    quality = f"- {{type: custom, engine: dqx, implementation: {{check: {check}}}}}"
    issues = issues_of(contract(COLUMNS, quality))
    assert any(p == f"schema[0].quality[0].{path}" and message in m for p, m in issues), issues


# -- nested field names of any text ------------------------------------------------------------------

HOSTILE = ["^[0-5]$", "a`b", "it's", 'say "hi"', "x; DROP TABLE t; --", "c) OR (1=1", "dotted.name", "[]", "é ü"]


def _one_identifier(predicate: str, name: str) -> None:
    """``name`` is exactly one identifier of the parsed predicate, and no statement is added."""
    tree = sqlglot.parse_one(predicate, read="spark")
    assert isinstance(tree, exp.Expression) and not isinstance(tree, (exp.Drop, exp.Command))
    assert name in {identifier.this for identifier in tree.find_all(exp.Identifier)}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_nested_field_of_any_name_stays_one_identifier(name):
    escaped = name.replace("'", "''")
    properties = f"""\
- name: doc
  logicalType: object
  properties:
    - name: '{escaped}'
      logicalType: string
      required: true
      logicalTypeOptions: {{maxLength: 3}}
      quality:
        - {{type: custom, engine: dqx, implementation: {{check: {{function: is_in_list, arguments: {{allowed: [x]}}}}}}}}
"""
    plan = compile_text(contract(properties, extra=GATED))
    [column] = plan["columns"]
    assert spark_type(column["type"]) == column["type"]  # the type text reads back as itself
    [(field, field_type)] = [struct_field(item) for item in nested_parts(column["type"])[1]]
    assert (field, field_type) == (name, "string")
    rules = [r for r in plan["rules"] if r["id"].startswith(f"doc.{name}.")]
    assert [r["id"].rsplit(".", 1)[1] for r in rules] == ["required", "max_length", "is_in_list"]
    for r in rules:
        assert check_expression(r["predicate"]) == r["predicate"]
        _one_identifier(r["predicate"], name)
    assert plan["delta_column_mapping"] is bool(set(name) & set(" ,;{}()\n\t="))


@pytest.mark.parametrize("name", ["line\nbreak", "tab\there", "${spark.sql.x}", " padded", ""])
def test_a_nested_field_name_that_is_unsafe_is_refused(name):
    properties = f"""\
- name: doc
  logicalType: object
  properties:
    - {{name: {name!r}, logicalType: string}}
""".replace("'", '"')
    issues = issues_of(contract(properties))
    assert [path for path, _ in issues] == ["schema[0].properties[0].properties[0].name"]
    assert "unsafe nested field name" in issues[0][1]


def test_the_target_ddl_of_a_hostile_nested_name_is_one_statement_per_text():
    properties = """\
- name: doc
  logicalType: object
  properties:
    - {name: "x`); DROP TABLE t; --", logicalType: string, required: true}
"""
    plan = compile_text(contract(properties, extra=GATED))
    statements = create_table_statements(plan)
    assert "struct<`x``); DROP TABLE t; --`:string>" in statements[0]
    for statement in statements:  # the CREATE TABLE, then one ALTER TABLE per CHECK
        [parsed] = sqlglot.parse(statement, read="spark")
        assert isinstance(parsed, (exp.Create, exp.Alter))
    assert plan["delta_column_mapping"] is True  # ';' and ' ' in a nested name
