"""Loader details (versions, YAML quirks, unreadable files) and the SQL-text safety checks."""

from __future__ import annotations

import pytest

from _contract_texts import HEADER, column, compile_text, contract, issues_of
from contract_gate.contract.errors import ContractError
from contract_gate.contract.loader import SUPPORTED_API_VERSIONS, load_contract, load_contract_text
from contract_gate.contract.sqltext import check_expression, check_query, is_deterministic, number_literal


@pytest.mark.parametrize("version", SUPPORTED_API_VERSIONS)
def test_every_v3_api_version_loads(version):
    text = contract(column("v", "int", "integer")).replace("apiVersion: v3.1.0", f"apiVersion: {version}")
    assert compile_text(text)["columns"][0]["type"] == "int"


def test_unreadable_and_empty_files(tmp_path):
    with pytest.raises(ContractError) as missing:
        load_contract(tmp_path / "nope.yaml")
    assert missing.value.issues[0].message.startswith("cannot read file:")
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    with pytest.raises(ContractError) as empty:
        load_contract(tmp_path / "empty.yaml")
    assert [(i.line, i.message) for i in empty.value.issues] == [(1, "a contract must be a YAML mapping")]


def test_unknown_nested_key_is_reported_not_dropped():
    assert issues_of(contract(column("v", "int", "integer", colour="red"))) == [
        ("schema[0].properties[0].colour", "unknown key 'colour'")]


def test_yaml_dates_become_iso_strings_with_their_lines():
    loaded = load_contract_text(HEADER + "      - name: d\n        physicalType: date\n        logicalType: date\n"
                                "        logicalTypeOptions:\n          minimum: 2020-01-01\n", "c.yaml")
    assert loaded.raw["schema"][0]["properties"][0]["logicalTypeOptions"]["minimum"] == "2020-01-01"
    assert loaded.source.line_of("schema[0].properties[0].logicalTypeOptions.minimum") == 14


def test_all_errors_are_collected_across_sections():
    text = contract(column("a", "int", "integer", logicalTypeOptions="{minimum: 0.5}") + column("a", "int", "integer"),
                    extra="slaProperties:\n  - property: freshness\n    value: 1\n    unit: d\n    element: t.a")
    assert issues_of(text) == [
        ("schema[0].properties[0].logicalTypeOptions.minimum", "expected a whole number (column type int), got 0.5"),
        ("schema[0].properties[1].name", "duplicate property name 'a'"),
        ("slaProperties[0].element", "freshness needs a date or timestamp column; 'a' is int"),
    ]


def test_yaml_exponent_without_dot_gets_a_hint():
    assert issues_of(contract(column("v", "double", "number", logicalTypeOptions="{maximum: 1e5}"))) == [(
        "schema[0].properties[0].logicalTypeOptions.maximum",
        "'1e5' is not of type 'number' (YAML reads 1e5 as text: write it with a dot, like 1.0e+5)")]


@pytest.mark.parametrize("value, literal", [(0, "0"), (-3, "-3"), (2.0, "2"), (0.1, "0.1BD"), (-1.5e-7, "-0.00000015BD"),
                                            (1e20, "100000000000000000000"), (1.0e40, "1e+40D"), (10 ** 40, "1e+40D")])
def test_number_literals_are_exact(value, literal):
    assert number_literal(value) == literal


@pytest.mark.parametrize("expression", [
    "amount > 0", "`select` IS NOT NULL AND `order` > 1", "extract(YEAR FROM ts) >= 2020", "trim(BOTH ' ' FROM s) <> ''",
    "trim(FROM s) <> ''", "s <> ';' AND s <> '--' AND s <> '/*'", "`a``b` = 'it\\'s'", "x IN (1, 2, 3)",
    "size(filter(tags, t -> t = 'x')) = 0", "coalesce(a, b) = \"drop table\"",
])
def test_accepted_expressions(expression):
    check_expression(expression)


@pytest.mark.parametrize("expression, message", [
    ("a > 0; DROP TABLE t", "only one statement is allowed (found ';')"),
    ("a IN (SELECT a FROM t)", "'SELECT' is not allowed here (back-quote it if it is a column name)"),
    ("a IN (TABLE t)", "'TABLE' is not allowed here (back-quote it if it is a column name)"),
    ("a IN (VALUES 1)", "'VALUES' is not allowed here (back-quote it if it is a column name)"),
    ("a IN (FROM t)", "a subquery is not allowed in a row expression"),
    ("a > 0 -- hidden", "comments are not allowed"),
    ("a > 0 /* hidden */", "comments are not allowed"),
    ("reflect('java.lang.Runtime', 'getRuntime') IS NULL", "function 'reflect' is not allowed here"),
    ("java_method('java.lang.System', 'exit', 0) = 0", "function 'java_method' is not allowed here"),
    ("count(a) > 0", "function 'count' is not allowed here"),
    ("row_number() OVER (ORDER BY a) = 1", "'OVER' is not allowed here (back-quote it if it is a column name)"),
    ("(a > 0", "unbalanced parentheses"),
    ("a = 'open", "unterminated quoted text"),
    ("`a = 1", "unterminated quoted identifier"),
    ("", "an expression must be a non-empty string"),
])
def test_refused_expressions(expression, message):
    with pytest.raises(ValueError) as refused:
        check_expression(expression)
    assert str(refused.value) == message


@pytest.mark.parametrize("query, message", [
    ("SELECT count(*) FROM {object}; DROP TABLE t", "only one statement is allowed (found ';')"),
    ("INSERT INTO t SELECT * FROM {object}", "'INSERT' is not allowed here (back-quote it if it is a column name)"),
    ("WITH x AS (SELECT 1) DELETE FROM t", "'DELETE' is not allowed here (back-quote it if it is a column name)"),
    ("SELECT count(*) FROM {object} /* x */", "comments are not allowed"),
    ("SELECT reflect('a', 'b') FROM {object}", "function 'reflect' is not allowed here"),
    ("SELECT * FROM read_files('/etc')", "function 'read_files' is not allowed here"),
    ("VALUES (1)", "a query must start with SELECT or WITH"),
    ("SELECT count(*) FROM {table}", "unknown placeholder(s) {table}; allowed: {object}"),
])
def test_refused_queries(query, message):
    with pytest.raises(ValueError) as refused:
        check_query(query, {"object"})
    assert str(refused.value) == message


def test_accepted_query_is_trimmed():
    assert check_query("  WITH x AS (SELECT v FROM {object}) SELECT count(*) FROM x;  ", {"object"}) == \
        "WITH x AS (SELECT v FROM {object}) SELECT count(*) FROM x"


def test_determinism():
    assert is_deterministic("a > 0 AND b = 'rand()'")
    assert not is_deterministic("a > rand()")
    assert not is_deterministic("d <= current_date")
