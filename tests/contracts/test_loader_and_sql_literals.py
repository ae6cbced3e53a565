"""Loader details (versions, YAML quirks, unreadable files) and the SQL-text safety checks."""

from __future__ import annotations

import pytest

from _contract_texts import HEADER, column, compile_text, contract, issues_of, rule
from contract_gate.contract.errors import ContractError
from contract_gate.contract.loader import SUPPORTED_API_VERSIONS, load_contract, load_contract_text
from contract_gate_plan.sql_allowlist import check_expression, check_query, is_deterministic
from contract_gate.contract.sql_literals import number_literal


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


@pytest.mark.parametrize("expression, rendered", [
    ("amount > 0", "`amount` > 0"),
    ("`select` IS NOT NULL AND `order` > 1", "`select` IS NOT NULL AND `order` > 1"),
    ("extract(YEAR FROM ts) >= 2020", "EXTRACT(YEAR FROM `ts`) >= 2020"),
    ("trim(BOTH ' ' FROM s) <> ''", "TRIM(BOTH ' ' FROM `s`) <> ''"),
    ("s <> ';' AND s <> '--' AND s <> '/*'", "`s` <> ';' AND `s` <> '--' AND `s` <> '/*'"),
    ("`a``b` = 'it\\'s'", "`a``b` = 'it\\'s'"),
    ("x IN (1, 2, 3)", "`x` IN (1, 2, 3)"),
    ("size(filter(tags, t -> t = 'x')) = 0", "size(filter(`tags`, `t` -> `t` = 'x')) = 0"),
    ('coalesce(a, b) = "drop table"', "coalesce(`a`, `b`) = 'drop table'"),
    ("NOT a IS NULL", "`a` IS NOT NULL"),
    ("length(s) > 2 AND char_length(s) < 9", "char_length(`s`) > 2 AND char_length(`s`) < 9"),
    ("x >= 0.1BD AND y <= 1e+40D AND z = 5L", "`x` >= 0.1BD AND `y` <= 1e+40D AND `z` = 5L"),
    ("d >= DATE '2020-01-01' AND t < TIMESTAMP '2020-01-01T00:00:00'",
     "`d` >= DATE '2020-01-01' AND `t` < TIMESTAMP '2020-01-01T00:00:00'"),
    ("s RLIKE '^\\\\d+$'", "`s` RLIKE '^\\\\d+$'"),
    # Spark reads \u0027 inside a string as a quote character: it stays inside the string
    ("s = '\\u0027) OR java_method(1) --'", "`s` = '\\') OR java_method(1) --'"),
])
def test_accepted_expressions_run_as_rendered(expression, rendered):
    assert check_expression(expression) == rendered
    assert check_expression(rendered) == rendered  # a fixed point


@pytest.mark.parametrize("expression, message", [
    ("a > 0; DROP TABLE t", "exactly one statement is allowed"),
    ("a IN (SELECT a FROM t)", "a subquery is not allowed in a row expression"),
    ("EXISTS (SELECT 1)", "a subquery is not allowed in a row expression"),
    ("a IN (VALUES 1)", "VALUES is not allowed"),
    ("a > 0 -- hidden", "comments are not allowed"),
    ("a > 0 /* hidden */", "comments are not allowed"),
    ("a > 0 /*+ hint */", "comments are not allowed"),
    ("reflect('java.lang.Runtime', 'getRuntime') IS NULL", "function reflect() is not allowed"),
    ("java_method('java.lang.System', 'exit', 0) = 0", "function java_method() is not allowed"),
    ("try_reflect('java.lang.System', 'exit', 0) = 0", "function try_reflect() is not allowed"),
    ("IDENTIFIER('java_method')('java.io.File', 'createTempFile', 'a', 'b') IS NULL",
     "IDENTIFIER() is not allowed: name columns and functions directly"),
    ("r'\\' || java_method('a', 'b') || '--' = ''", "a raw string r'...' (write a normal string) is not allowed"),
    ("my_udf(a) > 0", "function my_udf() is not allowed"),
    ("count(a) > 0", "function count() is not allowed in a row expression (aggregates and windows belong in a type: sql query)"),
    ("row_number() OVER (ORDER BY a) = 1",
     "a window function (OVER) is not allowed in a row expression (aggregates and windows belong in a type: sql query)"),
    ("a = :p", "a parameter is not allowed"),
    ("(a > 0", "does not parse as Spark SQL: Expecting ) (line 1, column 6)"),
    ("a = 'open", "does not parse as Spark SQL: a quote is not closed"),
    ("SELECT 1", "a query is not allowed here: give one boolean row expression"),
    ("", "SQL must be a non-empty string"),
    ("__contract_gate_placeholder_object > 0", "names starting with '__contract_gate_placeholder_' are reserved"),
    ("s = '${env:HOME}'", "'${' is not allowed: Spark would replace ${...} with a variable (${env:NAME} is an "
                          "environment variable) before reading the SQL"),
    ("(" * 300 + "a > 0" + ")" * 300, "the SQL is nested too deeply"),
    ("a > 0 AND " * 12_000 + "a > 0", "SQL longer than 100000 characters is not allowed"),
])
def test_refused_expressions(expression, message):
    with pytest.raises(ValueError) as refused:
        check_expression(expression)
    assert str(refused.value) == message


@pytest.mark.parametrize("query, message", [
    ("SELECT count(*) FROM {object}; DROP TABLE t", "exactly one statement is allowed"),
    ("INSERT INTO t SELECT * FROM {object}", "a query must be one SELECT (or WITH ... SELECT)"),
    ("SET spark.sql.ansi.enabled = false", "a query must be one SELECT (or WITH ... SELECT)"),
    ("SELECT count(*) FROM {object} /* x */", "comments are not allowed"),
    ("SELECT reflect('a', 'b') FROM {object}", "function reflect() is not allowed"),
    ("SELECT TRANSFORM(v) USING 'cat' FROM {object}", "TRANSFORM ... USING (a script) is not allowed"),
    ("SELECT * FROM read_files('/etc')",
     "function read_files() is not allowed as a table (the only tables are the gate's placeholders, such as {object})"),
    ("SELECT count(*) FROM text.`/etc/passwd`",
     "table text.`/etc/passwd` is not allowed: a query reads {object} and the gate's references only (no paths, no other tables)"),
    ("SELECT count(*) FROM customers",
     "table 'customers' is not allowed: a query reads {object} and the tables the gate's references list, through their placeholders"),
    ("SELECT count(*) FROM {object} VERSION AS OF 0", "table version options are not allowed"),
    ("WITH RECURSIVE r AS (SELECT 1) SELECT count(*) FROM r", "WITH RECURSIVE is not allowed"),
    ("VALUES (1)", "a query must be one SELECT (or WITH ... SELECT)"),
    ("SELECT count(*) FROM {table}", "unknown placeholder {table}; allowed: {object}"),
])
def test_refused_queries(query, message):
    with pytest.raises(ValueError) as refused:
        check_query(query, {"object"})
    assert str(refused.value) == message


def test_a_cte_hides_no_table():
    """A CTE name is a table only where Spark resolves it to the CTE: after its WITH, not in its
    own body and not outside the subquery that defines it (there Spark reads a real table)."""
    assert check_query("WITH orders AS (SELECT * FROM {object}) SELECT count(*) FROM orders", {"object"}) == \
        "WITH `orders` AS (SELECT * FROM {object}) SELECT count(*) FROM `orders`"
    for query in ("WITH orders AS (SELECT * FROM orders) SELECT count(*) FROM orders",
                  "SELECT (SELECT count(*) FROM (WITH o AS (SELECT 1) SELECT * FROM o)) + (SELECT count(*) FROM o)",
                  "WITH a AS (SELECT * FROM b), b AS (SELECT * FROM {object}) SELECT count(*) FROM a"):
        with pytest.raises(ValueError, match="is not allowed: a query reads"):
            check_query(query, {"object"})


@pytest.mark.parametrize("query, rendered", [
    ("SELECT count(*) FROM dual", "SELECT count(*)"),
    ("select count(*) from DUAL where 1 = 0", "SELECT count(*) WHERE 1 = 0"),
    ("SELECT (SELECT count(*) FROM {object} WHERE x < 0) FROM dual",
     "SELECT (SELECT count(*) FROM {object} WHERE `x` < 0)"),
    ("WITH dual AS (SELECT * FROM {object}) SELECT count(*) FROM dual",  # a CTE of that name is the CTE
     "WITH `dual` AS (SELECT * FROM {object}) SELECT count(*) FROM `dual`"),
])
def test_oracles_dual_is_a_select_without_a_table(query, rendered):
    assert check_query(query, {"object"}) == rendered


@pytest.mark.parametrize("query", [
    "SELECT count(*) FROM dual JOIN payments p ON p.a = dual.a", "SELECT count(*) FROM dual, payments",
    "SELECT count(*) FROM dual d", "SELECT count(*) FROM other.dual",
])
def test_dual_beside_anything_else_is_a_table(query):
    with pytest.raises(ValueError, match="is not allowed"):
        check_query(query, {"object"})


def test_accepted_query_is_rendered_with_its_placeholders():
    assert check_query("  WITH x AS (SELECT v FROM {object}) SELECT count(*) FROM x;  ", {"object"}) == \
        "WITH `x` AS (SELECT `v` FROM {object}) SELECT count(*) FROM `x`"
    # a placeholder inside a string is text, not a table
    assert check_query("SELECT count(*) FROM {object} WHERE {property} = '{object}'", {"object", "property"}) == \
        "SELECT count(*) FROM {object} WHERE {property} = '{object}'"
    with pytest.raises(ValueError, match="is a column, not a table"):
        check_query("SELECT count(*) FROM {property}", {"object", "property"})


def test_determinism():
    assert is_deterministic("a > 0 AND b = 'rand()'")
    assert not is_deterministic("a > rand()")
    assert not is_deterministic("d <= current_date")
    assert not is_deterministic("d <= now()")


def _with_references(references: str, query: str) -> str:
    gate = f"customProperties:\n  - property: contractGate\n    value:\n      landing: {{path: in}}\n      references: {references}"
    return contract(column("v", "string", "string"), quality=f"- id: q\n  type: sql\n  query: {query}\n  mustBe: 0",
                    extra=gate)


def test_a_query_reads_a_reference_the_gate_settings_list():
    plan = compile_text(_with_references("{customers: {table: customers}}",
                                         "SELECT count(*) FROM {object} WHERE v NOT IN (SELECT id FROM {customers})"))
    assert rule(plan, "q")["query"] == "SELECT count(*) FROM {object} WHERE NOT `v` IN (SELECT `id` FROM {customers})"
    assert plan["tables"]["references"] == {"customers": {"kind": "path", "path": "lakehouse/customers", "format": "delta"}}
    assert "references" not in plan["gate"]


@pytest.mark.parametrize("references, message", [
    ("{customers: {path: /etc}}", "reference 'customers' must be a Delta table given by name"),
    ("{customers: {table: customers, format: csv}}", "reference 'customers' must be a Delta table given by name"),
    ("{customers: {table: \"a`b\"}}", "reference 'customers' must be a Delta table given by name"),
    ("{object: {table: customers}}", "reference alias 'object' must be a plain identifier"),
])
def test_references_are_lakehouse_tables_by_name(references, message):
    [(path, found)] = issues_of(_with_references(references, "SELECT count(*) FROM {object}"))
    assert path.startswith("customProperties[0].value.references") and message in found


def test_a_query_cannot_name_a_reference_the_gate_does_not_list():
    assert issues_of(contract(column("v", "string", "string"),
                              quality="- id: q\n  type: sql\n  query: SELECT count(*) FROM {customers}\n  mustBe: 0")) == [
        ("schema[0].quality[0].query", "unsafe or invalid query: unknown placeholder {customers}; allowed: {object}")]
