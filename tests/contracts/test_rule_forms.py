"""Every rule form the issue lists compiles to the exact predicate (TRUE = valid row), with the
documented NULL handling: a value check on a nullable column is ``(col IS NULL OR check)`` and
NULL-ness is the ``required`` rule's job."""

from __future__ import annotations

import pytest

from _contract_texts import column, compile_text, contract, issues_of, rule


def one_column(physical: str, logical: str, **extra: str) -> dict:
    return compile_text(contract(column("v", physical, logical, **extra)))


def test_required_is_not_null_and_not_nullable():
    plan = one_column("string", "string", required="true")
    r = rule(plan, "v.required")
    assert (r["kind"], r["scope"], r["predicate"], r["enforceable"]) == ("required", "row", "`v` IS NOT NULL", True)
    assert plan["columns"][0]["nullable"] is False


def test_unique_is_a_group_rule_where_nulls_are_distinct():
    # NULLs are distinct, as in SQL UNIQUE, DQX and datacontract-cli (issue 15; they compared equal before)
    r = rule(one_column("string", "string", unique="true"), "v.unique")
    assert (r["kind"], r["scope"], r["columns"], r["nulls_distinct"], r["predicate"]) == ("unique", "group", ["v"], True, None)
    assert r["enforceable"] is False


def test_primary_key_makes_required_and_one_key_rule():
    plan = one_column("string", "string", primaryKey="true", unique="true")
    assert plan["key"] == ["v"]
    assert [r["id"] for r in plan["rules"]] == ["v.required", "key.unique"]  # unique is the key rule
    assert rule(plan, "v.required")["source"] == "schema[0].properties[0].primaryKey"
    assert rule(plan, "key.unique")["nulls_distinct"] is True  # a NULL key part is rejected by required


def test_composite_key_follows_primary_key_position():
    text = contract(
        column("b", "int", "integer", primaryKey="true", primaryKeyPosition="2")
        + column("a", "string", "string", primaryKey="true", primaryKeyPosition="1")
        + column("c", "date", "date", unique="true", primaryKey="true", primaryKeyPosition="3"))
    plan = compile_text(text)
    assert plan["key"] == ["a", "b", "c"]
    assert rule(plan, "key.unique")["columns"] == ["a", "b", "c"]
    assert rule(plan, "c.unique")["columns"] == ["c"]  # unique alone is a different rule than the key


def _gated(publication: str = "", key: bool = True, quality: str = "") -> str:
    """A contract with gate settings (``publication`` a YAML mapping, or the default), keyed on
    (a, b) unless ``key`` is false, with a text rule on v and then ``quality``."""
    gate = "customProperties:\n  - property: contractGate\n    value:\n      landing: {path: in}"
    gate += f"\n      publication: {publication}" if publication else ""
    keyed = {"primaryKey": "true"} if key else {"required": "true"}
    text = "- type: text\n  description: last rule\n" + quality
    return contract(column("a", "string", "string", **keyed, **({"primaryKeyPosition": "1"} if key else {}))
                    + column("b", "date", "date", **keyed, **({"primaryKeyPosition": "2"} if key else {}))
                    + column("v", "int", "integer", quality=text), extra=gate)


def test_appending_with_a_key_compiles_the_cross_batch_key_rule_after_the_key_rule():
    plan = compile_text(_gated("{mode: append}"))
    ids = [r["id"] for r in plan["rules"]]
    assert ids == ["a.required", "b.required", "v.text", "key.unique", "key.unique_across_batches"]
    assert rule(plan, "key.unique_across_batches") == {
        "id": "key.unique_across_batches", "kind": "unique_across_batches", "scope": "target",
        "columns": ["a", "b"], "severity": "error", "source": "customProperties[0].value.publication.mode",
        "predicate": None, "filter": None, "threshold": None, "description": None, "enforceable": False}
    # append by default: the key is what the contract wrote
    assert rule(compile_text(_gated()), "key.unique_across_batches")["source"] == "schema[0].properties[0].primaryKey"


def test_no_cross_batch_key_rule_without_append_a_key_or_gate_settings():
    assert "key.unique_across_batches" not in [r["id"] for r in compile_text(_gated("{mode: replace_keys}"))["rules"]]
    no_key = compile_text(_gated(key=False))
    assert no_key["key"] == [] and all(r["kind"] != "unique_across_batches" for r in no_key["rules"])
    no_gate = compile_text(contract(column("a", "string", "string", primaryKey="true")))
    assert [r["id"] for r in no_gate["rules"]] == ["a.required", "key.unique"]


@pytest.mark.parametrize("publication", ["{mode: append}", "{mode: replace_keys}"])
def test_a_contract_rule_cannot_take_the_cross_batch_key_rule_id(publication):
    text = _gated(publication, quality="- id: key.unique_across_batches\n  type: text\n  description: mine")
    [(path, message)] = issues_of(text)
    assert path == "schema[0].properties[2].quality[1].id" and "'key.unique_across_batches'" in message


def test_a_column_called_key_does_not_take_the_key_rule_id():
    text = contract(column("id", "int", "integer", primaryKey="true") + column("key", "int", "integer", unique="true"))
    plan = compile_text(text)
    assert rule(plan, "key.unique")["columns"] == ["id"]
    assert rule(plan, "key.unique_2")["columns"] == ["key"]


@pytest.mark.parametrize("value, literal", [("provisional", "'provisional'"), ("it's", "'it\\'s'")])
def test_enum_on_strings(value, literal):
    plan = one_column("string", "string", enum=f'[{{value: "{value}"}}, {{value: final}}]')
    assert rule(plan, "v.enum")["predicate"] == f"(`v` IS NULL OR `v` IN ({literal}, 'final'))"


def test_enum_on_numbers_and_booleans():
    assert rule(one_column("int", "integer", enum="[{value: 1}, {value: 2}]"), "v.enum")["predicate"] == \
        "(`v` IS NULL OR `v` IN (1, 2))"
    assert rule(one_column("boolean", "boolean", enum="[{value: true}]"), "v.enum")["predicate"] == \
        "(`v` IS NULL OR `v` IN (TRUE))"


@pytest.mark.parametrize("physical, logical, options, rule_id, predicate", [
    ("bigint", "integer", "{minimum: 0}", "v.minimum", "(`v` IS NULL OR `v` >= 0)"),
    ("int", "integer", "{maximum: 10}", "v.maximum", "(`v` IS NULL OR `v` <= 10)"),
    ("int", "integer", "{exclusiveMinimum: 0}", "v.exclusive_minimum", "(`v` IS NULL OR `v` > 0)"),
    ("int", "integer", "{exclusiveMaximum: 10}", "v.exclusive_maximum", "(`v` IS NULL OR `v` < 10)"),
    ("decimal(12,3)", "number", "{minimum: 0.1}", "v.minimum", "(`v` IS NULL OR `v` >= 0.1BD)"),
    ("decimal(12,3)", "number", "{maximum: 2.5e-3}", "v.maximum", "(`v` IS NULL OR `v` <= 0.0025BD)"),
    ("decimal(38,0)", "number", "{maximum: 1.0e+40}", "v.maximum", "(`v` IS NULL OR `v` <= 1e+40D)"),
    ("double", "number", "{minimum: 0}", "v.minimum", "(`v` IS NULL OR (NOT isnan(`v`) AND `v` >= 0))"),
    ("float", "number", "{exclusiveMaximum: 1.5}", "v.exclusive_maximum",
     "(`v` IS NULL OR (NOT isnan(`v`) AND `v` < 1.5BD))"),
    ("date", "date", "{minimum: '2020-01-01'}", "v.minimum", "(`v` IS NULL OR `v` >= DATE '2020-01-01')"),
    ("date", "date", "{exclusiveMaximum: 2030-01-01}", "v.exclusive_maximum",
     "(`v` IS NULL OR `v` < DATE '2030-01-01')"),
    ("timestamp", "timestamp", "{minimum: '2020-01-01T00:00:00Z'}", "v.minimum",
     "(`v` IS NULL OR `v` >= TIMESTAMP '2020-01-01T00:00:00Z')"),
    ("timestamp_ntz", "timestamp", "{maximum: '2030-01-01 12:00:00'}", "v.maximum",
     "(`v` IS NULL OR `v` <= TIMESTAMP_NTZ '2030-01-01 12:00:00')"),
])
def test_range_options(physical, logical, options, rule_id, predicate):
    r = rule(one_column(physical, logical, logicalTypeOptions=options), rule_id)
    assert r["predicate"] == predicate
    assert r["enforceable"] is True


def test_multiple_of():
    assert rule(one_column("int", "integer", logicalTypeOptions="{multipleOf: 5}"), "v.multiple_of")["predicate"] == \
        "(`v` IS NULL OR `v` % 5 = 0)"
    assert rule(one_column("decimal(10,2)", "number", logicalTypeOptions="{multipleOf: 0.05}"), "v.multiple_of")["predicate"] == \
        "(`v` IS NULL OR `v` % 0.05BD = 0)"
    assert rule(one_column("double", "number", logicalTypeOptions="{multipleOf: 0.5}"), "v.multiple_of")["predicate"] == \
        "(`v` IS NULL OR (NOT isnan(`v`) AND `v` % 0.5BD = 0))"
    assert issues_of(contract(column("v", "double", "number", logicalTypeOptions="{multipleOf: 0.1}"))) == [(
        "schema[0].properties[0].logicalTypeOptions.multipleOf",
        "multipleOf 0.1 cannot be checked exactly on a double column (it is not a binary fraction); declare the column as a decimal")]


def test_string_lengths_and_pattern():
    plan = one_column("string", "string", logicalTypeOptions="{minLength: 2, maxLength: 10, pattern: '^[A-Z]{2}-\\d+$'}")
    assert rule(plan, "v.min_length")["predicate"] == "(`v` IS NULL OR char_length(`v`) >= 2)"
    assert rule(plan, "v.max_length")["predicate"] == "(`v` IS NULL OR char_length(`v`) <= 10)"
    # the cheap test that implies it (a string of 10 bytes or fewer has 10 characters or fewer)
    assert rule(plan, "v.max_length")["passes_when"] == "octet_length(`v`) <= 10"
    assert "passes_when" not in rule(plan, "v.min_length")
    # a search, not a full match (anchors are the author's); the ECMA-262 $ (end of input) is Java's \z
    # (issue 15: it was passed on as $, which also matches before a final line break); backslashes escaped
    assert rule(plan, "v.pattern")["predicate"] == "(`v` IS NULL OR `v` RLIKE '^[A-Z]{2}-\\\\d+\\\\z')"


def test_not_blank_whitespace_and_spaces():
    whitespace = one_column("string", "string", customProperties="[{property: notBlank, value: whitespace}]")
    assert rule(whitespace, "v.not_blank")["predicate"] == \
        "(`v` IS NULL OR NOT `v` RLIKE '^[\\\\s\\\\p{Z}\\\\x{85}\\\\x{200B}\\\\x{FEFF}]*$')"
    assert rule(one_column("string", "string", customProperties="[{property: notBlank, value: true}]"),
                "v.not_blank")["predicate"] == rule(whitespace, "v.not_blank")["predicate"]
    spaces = one_column("string", "string", customProperties="[{property: notBlank, value: spaces}]")
    assert rule(spaces, "v.not_blank")["predicate"] == "(`v` IS NULL OR trim(`v`) <> '')"
    # both modes: a first byte from '!' to '~' is a character no blank string starts with
    for plan in (whitespace, spaces):
        assert rule(plan, "v.not_blank")["passes_when"] == "`v` >= '!' AND `v` <= '~'"
    off = one_column("string", "string", customProperties="[{property: notBlank, value: false}]")
    assert [r["id"] for r in off["rules"]] == []


def quality_plan(quality: str, physical="string", logical="string") -> dict:
    return compile_text(contract(column("v", physical, logical, quality=quality)))


def test_null_values_metric():
    r = rule(quality_plan("- metric: nullValues\n  mustBeLessThan: 5\n  unit: percent"), "v.nullValues")
    assert (r["kind"], r["scope"], r["metric"], r["predicate"]) == ("metric", "dataset", "nullValues", "`v` IS NOT NULL")
    assert r["threshold"] == {"operator": "mustBeLessThan", "value": 5, "unit": "percent"}
    assert r["enforceable"] is False


def test_missing_values_metric_with_arguments():
    r = rule(quality_plan("- metric: missingValues\n  arguments: {missingValues: [null, '', N/A]}\n  mustBe: 0"),
             "v.missingValues")
    assert r["predicate"] == "(`v` IS NOT NULL AND NOT `v` IN ('', 'N/A'))"
    # mustBe: 0 tolerates no missing value: a row rule, enforced by a CHECK constraint (issue 15)
    assert (r["scope"], r["threshold"], r["enforceable"]) == ("row", None, True)
    assert rule(quality_plan("- metric: missingValues\n  mustBe: 0"), "v.missingValues")["predicate"] == "`v` IS NOT NULL"


def test_invalid_values_metric_valid_values_and_pattern():
    valid = rule(quality_plan("- metric: invalidValues\n  arguments: {validValues: [1, 2]}\n  mustBeLessOrEqualTo: 3",
                              "int", "integer"), "v.invalidValues")
    assert valid["predicate"] == "(`v` IS NULL OR `v` IN (1, 2))"
    pattern = rule(quality_plan("- metric: invalidValues\n  arguments: {pattern: '^[a-z]+$'}\n  mustBe: 0"), "v.invalidValues")
    assert pattern["predicate"] == "(`v` IS NULL OR `v` RLIKE '^[a-z]+\\\\z')"


def test_duplicate_values_on_a_property_and_on_the_schema():
    on_property = rule(quality_plan("- metric: duplicateValues\n  mustBe: 0"), "v.duplicateValues")
    assert (on_property["kind"], on_property["scope"], on_property["columns"], on_property["nulls_distinct"]) == \
        ("unique", "group", ["v"], True)
    text = contract(column("a", "string", "string") + column("b", "int", "integer"),
                    "- metric: duplicateValues\n  arguments: {properties: [b, a]}\n  mustBeLessThan: 1\n  unit: percent")
    on_schema = rule(compile_text(text), "dataset.duplicateValues")
    assert on_schema["columns"] == ["b", "a"]
    assert on_schema["threshold"] == {"operator": "mustBeLessThan", "value": 1, "unit": "percent"}
    assert on_schema["nulls_distinct"] is True


def test_duplicate_values_says_when_nulls_are_equal():
    r = rule(quality_plan("- metric: duplicateValues\n  arguments: {nullsDistinct: false}\n  mustBe: 0"), "v.duplicateValues")
    assert r["nulls_distinct"] is False
    text = contract(column("a", "string", "string"),
                    "- metric: duplicateValues\n  arguments: {properties: [a], nullsDistinct: false}\n  mustBe: 0")
    assert rule(compile_text(text), "dataset.duplicateValues")["nulls_distinct"] is False
    assert issues_of(contract(column("v", "string", "string", quality="- metric: duplicateValues\n  arguments: {nullsDistinct: 'no'}\n  mustBe: 0"))) == [
        ("schema[0].properties[0].quality[0].arguments.nullsDistinct", "nullsDistinct must be true or false")]


def test_row_count():
    r = rule(compile_text(contract(column("v", "int", "integer"), "- metric: rowCount\n  mustBeGreaterThan: 0")),
             "dataset.rowCount")
    assert (r["kind"], r["scope"], r["columns"], r["predicate"]) == ("row_count", "dataset", [], None)
    assert r["threshold"] == {"operator": "mustBeGreaterThan", "value": 0, "unit": "rows"}


@pytest.mark.parametrize("operator, value", [
    ("mustBe", 0), ("mustNotBe", 3), ("mustBeGreaterThan", 1), ("mustBeGreaterOrEqualTo", 1.5),
    ("mustBeLessThan", 10), ("mustBeLessOrEqualTo", 10), ("mustBeBetween", [1, 5]), ("mustNotBeBetween", [0, 2.5]),
])
@pytest.mark.parametrize("unit", ["rows", "percent"])
def test_every_operator_and_unit(operator, value, unit):
    yaml_value = f"[{value[0]}, {value[1]}]" if isinstance(value, list) else value
    r = rule(quality_plan(f"- metric: nullValues\n  {operator}: {yaml_value}\n  unit: {unit}"), "v.nullValues")
    if operator == "mustBe":  # mustBe: 0 is a zero tolerance: a row rule without a threshold
        assert (r["scope"], r["threshold"]) == ("row", None)
    else:
        assert (r["scope"], r["threshold"]) == ("dataset", {"operator": operator, "value": value, "unit": unit})


@pytest.mark.parametrize("threshold, unit, row_rule", [
    ("mustBe: 0", "rows", True), ("mustBe: 0", "percent", True),
    ("mustBeLessThan: 1", "rows", True), ("mustBeLessThan: 0.5", "rows", True),
    ("mustBeLessOrEqualTo: 0", "rows", True), ("mustBeLessOrEqualTo: 0", "percent", True),
    ("mustBeLessOrEqualTo: 0.9", "rows", True), ("mustBeBetween: [0, 0.5]", "rows", True),
    # real tolerances: a percentage can be as small as one row in a big batch
    ("mustBeLessThan: 1", "percent", False), ("mustBeLessOrEqualTo: 0.5", "percent", False),
    ("mustBeBetween: [0, 0.5]", "percent", False),
    ("mustBeLessOrEqualTo: 1", "rows", False), ("mustBeLessThan: 2", "rows", False),
    ("mustBe: 1", "rows", False), ("mustBeLessThan: 0", "rows", False), ("mustNotBe: 1", "rows", False),
])
@pytest.mark.parametrize("metric, arguments", [
    ("nullValues", ""), ("missingValues", "\n  arguments: {missingValues: ['']}"),
    ("invalidValues", "\n  arguments: {validValues: [a]}"),
])
def test_a_zero_tolerance_metric_is_a_row_rule(metric, arguments, threshold, unit, row_rule):
    r = rule(quality_plan(f"- metric: {metric}{arguments}\n  {threshold}\n  unit: {unit}"), f"v.{metric}")
    assert (r["kind"], r["metric"], r["scope"] == "row", r["threshold"] is None, r["enforceable"]) == \
        ("metric", metric, row_rule, row_rule, row_rule)


def test_sql_rule_keeps_placeholders_and_is_not_a_row_rule():
    text = contract(column("v", "int", "integer",
                           quality="- type: sql\n  query: 'SELECT max({property}) FROM {object};'\n  mustBeLessThan: 100"),
                    "- id: no_future\n  type: sql\n  query: SELECT count(*) FROM {object} WHERE v > 3\n  mustBe: 0")
    plan = compile_text(text)
    on_property = rule(plan, "v.sql")
    assert (on_property["kind"], on_property["scope"], on_property["query"]) == ("sql", "query", "SELECT max({property}) FROM {object}")
    assert on_property["threshold"] == {"operator": "mustBeLessThan", "value": 100, "unit": "rows"}
    assert rule(plan, "no_future")["query"] == "SELECT count(*) FROM {object} WHERE `v` > 3"
    assert issues_of(contract(column("v", "int", "integer"), "- type: sql\n  query: SELECT max({property}) FROM {object}\n  mustBe: 0")) == [
        ("schema[0].quality[0].query", "unsafe or invalid query: unknown placeholder {property}; allowed: {object}")]


def test_custom_spark_sql_expression():
    text = contract(column("a", "int", "integer") + column("b", "int", "integer",
                    quality="- type: custom\n  engine: spark-sql\n  name: b_above_a\n  implementation: b >= a"))
    r = rule(compile_text(text), "b_above_a")
    assert (r["kind"], r["scope"], r["predicate"], r["columns"], r["enforceable"]) == ("custom_sql", "row", "(`b` >= `a`)", ["b", "a"], True)


def test_custom_expression_that_changes_over_time_is_not_a_check_constraint():
    r = rule(quality_plan("- type: custom\n  engine: spark-sql\n  implementation: v <= current_date()", "date", "date"),
             "v.custom_sql")
    assert r["predicate"] == "(`v` <= current_date())"
    assert r["enforceable"] is False


def dqx_rule(check: str, physical="string", logical="string", column_name="v") -> dict:
    quality = "- type: custom\n  engine: dqx\n  implementation:\n    name: r\n" + "\n".join(
        "    " + line for line in check.strip("\n").splitlines())
    return rule(compile_text(contract(column(column_name, physical, logical, quality=quality))), "r")


@pytest.mark.parametrize("check, physical, predicate", [
    ("check: {function: is_not_null}", "string", "`v` IS NOT NULL"),
    ("check: {function: is_not_empty}", "string", "(`v` IS NULL OR CAST(`v` AS STRING) <> '')"),
    ("check: {function: is_not_empty, arguments: {trim_strings: true}}", "string",
     "(`v` IS NULL OR trim(CAST(`v` AS STRING)) <> '')"),
    ("check: {function: is_not_null_and_not_empty}", "string", "(`v` IS NOT NULL AND CAST(`v` AS STRING) <> '')"),
    ("check: {function: is_in_list, arguments: {allowed: [\"'USD'\", EUR]}}", "string", "(`v` IS NULL OR `v` IN ('USD', 'EUR'))"),
    ("check: {function: is_in_list, arguments: {allowed: [\"'usd'\"], case_sensitive: false}}", "string",
     "(`v` IS NULL OR lower(CAST(`v` AS STRING)) IN (lower('usd')))"),
    ("check: {function: is_not_null_and_is_in_list, arguments: {allowed: [1, 2]}}", "int",
     "(`v` IS NOT NULL AND `v` IN (1, 2))"),
    ("check: {function: is_in_range, arguments: {min_limit: 1, max_limit: 10}}", "int",
     "(`v` IS NULL OR (`v` >= 1 AND `v` <= 10))"),
    ("check: {function: is_not_in_range, arguments: {min_limit: 2020-01-01, max_limit: '2020-12-31'}}", "date",
     "(`v` IS NULL OR `v` < DATE '2020-01-01' OR `v` > DATE '2020-12-31')"),
    ("check: {function: is_not_less_than, arguments: {limit: 0}}", "double", "(`v` IS NULL OR `v` >= 0)"),
    ("check: {function: is_not_greater_than, arguments: {limit: 'current_timestamp()'}}", "timestamp",
     "(`v` IS NULL OR `v` <= (current_timestamp()))"),
    # read as ECMA-262 like an ODCS pattern: $ is the end of the input (issue 15)
    ("check: {function: regex_match, arguments: {regex: '^[A-Z]+$'}}", "string", "(`v` IS NULL OR `v` RLIKE '^[A-Z]+\\\\z')"),
    ("check: {function: regex_match, arguments: {regex: x, negate: true}}", "string", "(`v` IS NULL OR NOT `v` RLIKE 'x')"),
    ("check: {function: sql_expression, arguments: {expression: v <> 'x'}}", "string", "coalesce((`v` <> 'x'), TRUE)"),
    ("check: {function: sql_expression, arguments: {expression: v = 'x', negate: true}}", "string",
     "coalesce(NOT (`v` = 'x'), TRUE)"),
    ("check: {function: is_valid_date}", "string", "(`v` IS NULL OR try_to_timestamp(`v`) IS NOT NULL)"),
    ("check: {function: is_valid_date, arguments: {date_format: yyyy-MM-dd}}", "string",
     "(`v` IS NULL OR try_to_timestamp(`v`, 'yyyy-MM-dd') IS NOT NULL)"),
    ("check: {function: is_valid_timestamp, arguments: {timestamp_format: 'yyyy-MM-dd HH:mm:ss'}}", "string",
     "(`v` IS NULL OR try_to_timestamp(`v`, 'yyyy-MM-dd HH:mm:ss') IS NOT NULL)"),
])
def test_dqx_row_functions(check, physical, predicate):
    logical = {"string": "string", "int": "integer", "double": "number", "date": "date", "timestamp": "timestamp"}[physical]
    r = dqx_rule(check, physical, logical)
    assert (r["kind"], r["scope"], r["predicate"]) == ("dqx", "row", predicate)
    assert r["function"] == check.split("function: ")[1].split(",")[0].split("}")[0]


def test_dqx_is_unique_keeps_nulls_distinct():
    text = contract(column("a", "string", "string") + column("b", "int", "integer"), """\
- type: custom
  engine: dqx
  implementation:
    criticality: warn
    check: {function: is_unique, arguments: {columns: [a, b]}}
- type: custom
  engine: dqx
  implementation:
    check: {function: is_unique, arguments: {columns: [a], nulls_distinct: false}}
""")
    plan = compile_text(text)
    first, second = rule(plan, "a.b.is_unique"), rule(plan, "a.is_unique")
    assert (first["kind"], first["scope"], first["columns"], first["nulls_distinct"], first["severity"]) == \
        ("unique", "group", ["a", "b"], True, "warning")
    assert second["nulls_distinct"] is False


def test_dqx_is_unique_under_a_property_is_unique_on_that_property():
    quality = "- type: custom\n  engine: dqx\n  implementation:\n    check: {function: is_unique}"
    plan = compile_text(contract(column("a", "string", "string", quality=quality)))
    assert (rule(plan, "a.is_unique")["kind"], rule(plan, "a.is_unique")["columns"]) == ("unique", ["a"])


@pytest.mark.parametrize("check, physical, key, message", [
    ("{function: is_in_range, arguments: {min_limit: 0}}", "int", "",
     "DQX function is_in_range needs argument(s): max_limit; with only a lower limit use is_not_less_than "
     "(limit: your min_limit)"),
    ("{function: is_in_range, arguments: {max_limit: 9}}", "int", "",
     "DQX function is_in_range needs argument(s): min_limit; with only an upper limit use is_not_greater_than "
     "(limit: your max_limit)"),
    ("{function: is_not_in_range, arguments: {min_limit: 0}}", "int", "",
     "DQX function is_not_in_range needs argument(s): max_limit; for values that must lie below min_limit use "
     "sql_expression (expression: <column> < <min_limit>)"),
    ("{function: is_not_less_than}", "int", "",
     "DQX function is_not_less_than needs argument(s): limit (the inclusive lower bound; for two bounds use is_in_range)"),
    ("{function: is_in_list, arguments: {allowed: USD}}", "string", ".allowed",
     "'allowed' must be a non-empty list, as DQX requires (write allowed: [USD])"),
    ("{function: is_in_list, arguments: {allowed: []}}", "string", ".allowed",
     "'allowed' must be a non-empty list, as DQX requires; to allow only NULL use sql_expression with "
     "expression: <column> IS NULL"),
    ("{function: is_unique, arguments: {columns: v}}", "string", ".columns",
     "is_unique needs 'columns': a list of column names (write columns: [v])"),
])
def test_dqx_refusals_name_the_check_to_write_instead(check, physical, key, message):
    """Where DQX itself would refuse a check, the contract error says what to write instead (issue 15)."""
    logical = {"string": "string", "int": "integer"}[physical]
    quality = f"- type: custom\n  engine: dqx\n  implementation:\n    check: {check}"
    base = "schema[0].properties[0].quality[0].implementation.check.arguments"
    assert issues_of(contract(column("v", physical, logical, quality=quality))) == [(base + key, message)]


@pytest.mark.parametrize("function, hint", [
    ("is_not_in_list", "write sql_expression (expression: <column> NOT IN (...)); "),
    ("is_aggr_not_greater_than", "dataset checks are ODCS library metrics (rowCount, nullValues...) or type: sql entries; "),
    ("is_in_ranges", "did you mean 'is_in_range'? "),
])
def test_an_unsupported_dqx_function_points_to_what_the_gate_runs(function, hint):
    quality = f"- type: custom\n  engine: dqx\n  implementation:\n    check: {{function: {function}}}"
    gate = "customProperties:\n  - property: contractGate\n    value:\n      landing: {path: in}"
    [(path, message)] = issues_of(contract(column("v", "string", "string", quality=quality), extra=gate))
    assert path == "schema[0].properties[0].quality[0].implementation.check.function"
    assert message.startswith(f"a DQX check (unknown DQX function {function!r}; {hint}supported: is_in_list, ")


def test_dqx_name_filter_and_criticality():
    r = dqx_rule("criticality: warn\nfilter: \"country = 'NL'\"\ncheck: {function: is_not_null}")
    assert (r["id"], r["severity"], r["filter"], r["enforceable"]) == ("r", "warning", "(`country` = 'NL')", False)


def test_dqx_check_as_yaml_text_like_a_dqx_checks_file():
    quality = "- type: custom\n  engine: dqx\n  implementation: |\n    - criticality: error\n      check:\n        function: is_not_null\n        arguments:\n          column: v"
    r = rule(compile_text(contract(column("v", "int", "integer", quality=quality))), "v.is_not_null")
    assert r["predicate"] == "`v` IS NOT NULL"


@pytest.mark.parametrize("severity, expected", [(None, "error"), ("error", "error"), ("warning", "warning"),
                                                ("warn", "warning"), ("info", "warning")])
def test_severity_mapping(severity, expected):
    extra = f"\n  severity: {severity}" if severity else ""
    r = rule(quality_plan(f"- metric: nullValues\n  mustBe: 0{extra}"), "v.nullValues")
    assert r["severity"] == expected


def test_warnings_are_never_check_constraints():
    r = rule(quality_plan("- type: custom\n  engine: spark-sql\n  severity: warning\n  implementation: v <> 'x'"), "v.custom_sql")
    assert r["enforceable"] is False


def test_text_rule_is_kept_and_not_executed():
    r = rule(quality_plan("- type: text\n  description: Values are reviewed monthly."), "v.text")
    assert (r["kind"], r["scope"], r["predicate"], r["description"], r["enforceable"]) == \
        ("text", "text", None, "Values are reviewed monthly.", False)


def test_generated_ids_that_collide_get_a_suffix_and_given_ids_must_not_take_them():
    plan = quality_plan("- metric: nullValues\n  mustBe: 0\n- metric: nullValues\n  mustBeLessThan: 5\n  unit: percent")
    assert [r["id"] for r in plan["rules"]] == ["v.nullValues", "v.nullValues_2"]
    assert issues_of(contract(column("v", "int", "integer", required="true",
                                     quality="- name: v.required\n  metric: nullValues\n  mustBe: 0"))) == [
        ("schema[0].properties[0].quality[0].name",
         "rule id 'v.required' is the generated id of the rule from schema[0].properties[0].required; choose another")]


def test_plan_is_deterministic_and_fingerprinted():
    text = contract(column("v", "int", "integer", required="true"))
    first, second = compile_text(text), compile_text(text)
    assert first == second
    assert first["fingerprint"].startswith("sha256:") and len(first["fingerprint"]) == 71
    changed = compile_text(text.replace("required: true", "required: false"))
    assert changed["fingerprint"] != first["fingerprint"]
