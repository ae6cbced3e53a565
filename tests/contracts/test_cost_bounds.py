"""Cost bounds of contract SQL and regexes (``contract_gate_plan.cost_bounds``): a join pairs rows by an
equality, a query reads its batch a bounded number of times, a string builder's size and a
regular expression stay within bounds, and each refusal names the rule and the bound. Legitimate
joins, builders and regexes still compile and run (tests/contracts_hostile has the attacks)."""

from __future__ import annotations

import pytest

from _contract_texts import column, compile_text, contract, rule
from contract_gate.contract.patterns import to_java
from contract_gate.contract.rules import BLANK_CHARACTERS_REGEX
from contract_gate_plan.cost_bounds import (
    MAX_BATCH_REFERENCES,
    MAX_BUILT_LENGTH,
    MAX_REGEX_LENGTH,
    MAX_REGEX_REPEAT,
    regex_problem,
)
from contract_gate_plan.sql_allowlist import SqlRefused, check_expression, check_query

TABLES = {"object", "countries"}
JOIN_RULE = "joins need an equality condition between two different columns"


@pytest.mark.parametrize("query", [
    # a self-join on an equality of two different key columns (an order and its parent order)
    "SELECT count(*) FROM {object} o JOIN {object} p ON o.parent_id = p.order_id WHERE p.amount < o.amount",
    "SELECT count(*) FROM {object} o JOIN {object} p ON o.parent_id = p.order_id AND o.amount > p.amount",
    # a join to a declared reference table on an equality, written as analysts write it
    "SELECT count(*) FROM {object} o LEFT JOIN {countries} c ON o.country = c.code WHERE c.code IS NULL",
    "SELECT count(*) FROM {object} JOIN {countries} ON {object}.country = {countries}.code",
    "SELECT count(*) FROM {object} o JOIN {countries} c USING (country)",
    "SELECT count(*) FROM {object} o LEFT ANTI JOIN {countries} c ON upper(o.country) = c.code",
    "SELECT count(*) FROM {object} o JOIN {object} p ON o.order_id <=> p.parent_id",
    # an inner join whose equality is in the WHERE clause (Spark moves it into the join)
    "SELECT count(*) FROM {object} o, {object} p WHERE o.parent_id = p.order_id AND o.amount > p.amount",
    "SELECT count(*) FROM {object} o JOIN {countries} c ON TRUE WHERE o.country = c.code",
    # a side that reads no table is a constant: pairing with it multiplies nothing
    "SELECT count(*) FROM {object} CROSS JOIN (SELECT 1 AS one)",
    # the batch read as often as the bound allows
    "SELECT count(*) FROM {object} o JOIN {object} p ON o.parent_id = p.order_id "
    "WHERE o.order_id IN (SELECT parent_id FROM {object})",
    "WITH parents AS (SELECT order_id FROM {object}) SELECT count(*) FROM {object} o "
    "JOIN parents p ON o.parent_id = p.order_id",
    "SELECT count(*) FROM {object} WHERE lpad(order_id, 10, '0') <> repeat('x', 3) AND order_id RLIKE '^[A-Z]{1,10000}$'",
])
def test_legitimate_queries_pass(query):
    assert check_query(query, TABLES)


@pytest.mark.parametrize("query, message", [
    ("SELECT count(*) FROM {object} a CROSS JOIN {countries} c", f"{JOIN_RULE} (one of each table, as a.key = b.key, "
                                                                  "in ON or the WHERE clause)"),
    ("SELECT count(*) FROM {object} a, {object} b WHERE a.amount < b.amount", "a comma between tables without one"),
    ("SELECT count(*) FROM {object} a LEFT JOIN {object} b ON TRUE WHERE a.order_id = b.parent_id", "found ON TRUE"),
    ("SELECT count(*) FROM {object} a JOIN {object} b ON 1=1", f"{JOIN_RULE}, one of the joined table"),
    ("SELECT count(*) FROM {object} a JOIN {object} b ON TRUE", "found ON TRUE"),
    ("SELECT count(*) FROM {object} a JOIN {object} b", "found ON TRUE"),
    ("SELECT count(*) FROM {object} a JOIN {object} b ON a.order_id = a.order_id", "found ON `a`.`order_id` = `a`.`order_id`"),
    ("SELECT count(*) FROM {object} a JOIN {object} b ON a.order_id = a.parent_id", JOIN_RULE),
    ("SELECT count(*) FROM {object} a JOIN {object} b ON a.amount > b.amount", JOIN_RULE),
    ("SELECT count(*) FROM {object} a JOIN {object} b ON a.order_id = b.order_id OR 1 = 1", JOIN_RULE),
    ("SELECT count(*) FROM {object} a JOIN {countries} c ON country = code", JOIN_RULE),  # which table's?
    ("SELECT count(*) FROM {object} a JOIN {object} b ON a.x = b.x JOIN {object} c ON a.x = b.y", JOIN_RULE),
    ("SELECT count(*) FROM {object} a JOIN {object} b ON a.x = (SELECT max(x) FROM {countries})", JOIN_RULE),
    ("SELECT count(*) FROM {object} a NATURAL JOIN {countries} c", f"{JOIN_RULE}: NATURAL JOIN"),
    ("SELECT count(*) FROM {object} UNION ALL SELECT count(*) FROM {object} UNION ALL SELECT count(*) FROM {object} "
     "UNION ALL SELECT count(*) FROM {object}",
     f"at most {MAX_BATCH_REFERENCES} references to the batch ({{object}}) in one query; found 4"),
    ("WITH a AS (SELECT * FROM {object}), b AS (SELECT * FROM a JOIN a x USING (k)) "
     "SELECT count(*) FROM b JOIN b y USING (k)", "found 4"),
    ("SELECT count(*) FROM {object} WHERE repeat(order_id, 10001) = ''", f"repeat() count 10001 is above the bound {MAX_BUILT_LENGTH}"),
    ("SELECT count(*) FROM {object} WHERE order_id RLIKE concat('a', '{1,5}')", "must be one string literal"),
])
def test_refused_queries_name_the_rule_and_the_bound(query, message):
    with pytest.raises(SqlRefused) as refused:
        check_query(query, TABLES)
    assert message in str(refused.value)


@pytest.mark.parametrize("expression, message", [
    ("length(repeat(order_id, 1000000000)) > 0", "repeat() count 1000000000 is above the bound 10000"),
    ("lpad(order_id, 1e9, '0') IS NOT NULL", "lpad() length 1e9 is above the bound 10000"),
    ("rpad(order_id, 20000) IS NOT NULL", "rpad() length 20000 is above the bound 10000"),
    ("space(100000) = ''", "space() length 100000 is above the bound 10000"),
    ("repeat(order_id, (10001)) = ''", "repeat() count (10001) is above the bound 10000"),
    ("repeat(repeat(order_id, 1000), 1000) = ''", "builds up to 1000000 characters"),
    ("repeat(lpad(order_id, 1000), 1000) = ''", "builds up to 1000000 characters"),
    ("repeat(order_id, n) = ''", "the count of repeat() must be a number literal (at most 10000)"),
    ("lpad(order_id, 5 * 5) = ''", "the length of lpad() must be a number literal"),
    ("order_id RLIKE 'a{1,100000}'", "rlike(): a regular expression repetition count 100000 is above the bound 10000"),
    ("regexp_extract(order_id, 'a{20000}', 0) = ''", "regexp_extract(): a regular expression repetition count 20000"),
    ("size(split(order_id, 'x{0,99999}')) > 0", "split(): a regular expression repetition count 99999"),
    ("order_id RLIKE parent_id", "the regular expression of rlike() must be one string literal"),
    ("regexp_like(order_id, '" + "a" * (MAX_REGEX_LENGTH + 1) + "')",
     f"a regular expression of {MAX_REGEX_LENGTH + 1} characters is above the bound {MAX_REGEX_LENGTH}"),
])
def test_refused_expressions_name_the_bound(expression, message):
    with pytest.raises(SqlRefused) as refused:
        check_expression(expression)
    assert message in str(refused.value)


@pytest.mark.parametrize("expression", [
    "repeat(order_id, 10000) <> ''", "repeat(order_id, -1) = ''", "repeat(order_id, 5L) <> ''",
    "repeat(repeat(order_id, 100), 100) <> ''", "lpad(order_id, 12, '0') <> ''", "space(2) = '  '",
    "order_id RLIKE '^A{1,10000}$'", "order_id RLIKE 'a\\\\{1,99999\\\\}'", "order_id RLIKE '[{1,99999}]'",
    "order_id RLIKE '\\\\x{10FFFF}\\\\p{L}'", "order_id RLIKE '\\\\Q{99999}\\\\E'",
])
def test_builders_and_regexes_within_the_bounds_pass(expression):
    assert check_expression(expression)


def test_a_java_regex_is_judged_on_its_quantifiers_only():
    assert regex_problem(BLANK_CHARACTERS_REGEX) is None
    assert regex_problem(to_java("^[A-Z]{2}\\d{1,10000}\\s*$")) is None
    assert regex_problem("a{10000}") is None
    assert regex_problem(f"a{{{MAX_REGEX_REPEAT},{MAX_REGEX_REPEAT + 1}}}") == (
        f"a regular expression repetition count {MAX_REGEX_REPEAT + 1} is above the bound {MAX_REGEX_REPEAT}")
    assert regex_problem("[a{99999}]b{99999}") == (
        f"a regular expression repetition count 99999 is above the bound {MAX_REGEX_REPEAT}")
    assert regex_problem("\\x{99999}\\N{99999}\\p{99999}") is None


def test_a_contracts_rules_are_bounded_wherever_they_carry_sql():
    """spark-sql rules, DQX sql_expression and type: sql queries pass one allow-list."""
    quality = ("- type: custom\n  engine: dqx\n  implementation:\n    check:\n      function: sql_expression\n"
               "      arguments:\n        expression: \"length(space(20000)) > 0\"")
    text = contract(column("v", "string", "string", quality=quality))
    with pytest.raises(Exception) as refused:
        compile_text(text)
    assert "space() length 20000 is above the bound 10000" in str(refused.value)


def test_a_self_join_on_two_key_columns_runs_on_spark(spark):
    from contract_gate_spark.validation.engine import run_validation

    query = ("SELECT count(*) FROM {object} o JOIN {object} p ON o.parent_id = p.order_id "
             "WHERE p.amount < o.amount")
    plan = compile_text(contract(column("order_id", "string", "string") + column("parent_id", "string", "string")
                                 + column("amount", "double", "number"),
                                 quality=f"- id: children_cost_less\n  type: sql\n  query: \"{query}\"\n  mustBe: 0"))
    assert rule(plan, "children_cost_less")["query"].startswith("SELECT count(*) FROM {object} AS `o` JOIN")
    df = spark.createDataFrame([("A", None, 10.0), ("B", "A", 12.0), ("C", "A", 3.0)],
                               "order_id string, parent_id string, amount double")
    report = run_validation(spark, plan, df)
    [measured] = [r for r in report["rules"] if r["id"] == "children_cost_less"]
    assert (measured["measured"], measured["passed"]) == (1, False)
