"""Contract forms that teams already write for other tools: physicalName columns and tables,
other tools' SQL placeholders and the object's own table name, null in value lists, a composite
key in declaration order, and checks the gate cannot run (refused, or listed as not evaluated)."""

from __future__ import annotations

import pytest

from _contract_texts import column, compile_text, contract, issues_of, rule
from contract_gate_plan.document import PlanError, check_document
from contract_gate_plan.model import load_plan

GATE = "customProperties:\n  - property: contractGate\n    value:\n      landing: {path: in}\n"
WARN = GATE + "      unsupportedChecks: warn\n"


def sql_plan(query: str, *, gate: str = GATE, physical_name: str | None = None, at_property: bool = False) -> dict:
    """The plan of dataset ``t`` (physicalName ``physical_name``) with one ``type: sql`` check."""
    entry = f"- type: sql\n  query: \"{query}\"\n  mustBe: 0\n"
    text = contract(column("id", "string", "string", **({"quality": entry} if at_property else {}))
                    + column("amount", "double", "number"), "" if at_property else entry, extra=gate)
    if physical_name:
        text = text.replace("  - name: t\n", f"  - name: t\n    physicalName: {physical_name}\n", 1)
    return compile_text(text)


def query_of(plan: dict) -> str:
    return next(r for r in plan["rules"] if r["kind"] == "sql")["query"]


# -- physicalName ---------------------------------------------------------------------------

def renamed() -> str:
    return contract(
        column("customer_name", "string", "string", physicalName="cust_nm", required="true",
               logicalTypeOptions="{maxLength: 40}",
               quality="- metric: invalidValues\n  arguments: {validValues: [a, b]}\n  mustBe: 0\n")
        + column("order_id", "string", "string", physicalName="ord_id", primaryKey="true")
        + column("amount", "double", "number"),
        "- metric: duplicateValues\n  arguments: {properties: [customer_name, amount]}\n  mustBe: 0\n",
        extra=GATE)


def test_a_physical_name_is_the_column_and_the_property_name_its_label():
    plan = compile_text(renamed())
    assert [(c["name"], c.get("label")) for c in plan["columns"]] == [
        ("cust_nm", "customer_name"), ("ord_id", "order_id"), ("amount", None)]
    assert plan["key"] == ["ord_id"]
    required = rule(plan, "customer_name.required")  # rule ids keep the property name
    assert required["columns"] == ["cust_nm"] and required["predicate"] == "`cust_nm` IS NOT NULL"
    assert "`cust_nm`" in rule(plan, "customer_name.max_length")["predicate"]
    assert "`cust_nm`" in rule(plan, "customer_name.invalidValues")["predicate"]
    assert rule(plan, "key.unique")["columns"] == ["ord_id"]
    assert rule(plan, "dataset.duplicateValues")["columns"] == ["cust_nm", "amount"]
    typed = load_plan(plan)
    assert typed.column("cust_nm").label == "customer_name" and typed.column_labels == {
        "cust_nm": "customer_name", "ord_id": "order_id"}


def test_a_plan_label_equal_to_its_column_or_empty_is_refused():
    plan = compile_text(renamed())
    for label in ("cust_nm", ""):
        plan["columns"][0]["label"] = label
        with pytest.raises(PlanError, match="label"):
            check_document(plan)


def test_a_physical_name_taken_twice_or_unsafe_is_refused():
    text = contract(column("a", "string", "string", physicalName="x") + column("b", "string", "string", physicalName="x"))
    assert any(path.endswith("properties[1].physicalName") and "duplicate column 'x'" in message
               for path, message in issues_of(text))
    text = contract(column("a", "string", "string", physicalName='"x${env:HOME}"'))
    assert any(path.endswith("properties[0].physicalName") and "unsafe column name" in message
               for path, message in issues_of(text))


def test_a_property_may_be_named_as_another_propertys_physical_name_is_not():
    plan = compile_text(contract(column("a", "string", "string", physicalName="b")
                                 + column("b", "string", "string", physicalName="c")))
    assert [(c["name"], c["label"]) for c in plan["columns"]] == [("b", "a"), ("c", "b")]


def test_the_objects_physical_name_is_the_default_target_table():
    plan = sql_plan("SELECT count(*) FROM {object}", physical_name="crm_orders_v2")
    assert plan["object"] == "t"
    assert plan["tables"]["target"]["path"].endswith("/crm_orders_v2")
    assert plan["tables"]["quarantine"]["path"].endswith("/crm_orders_v2_quarantine")
    text = contract(column("id", "string", "string"), extra=GATE).replace(
        "  - name: t\n", "  - name: t\n    physicalName: \"../escape\"\n", 1)
    assert any(path == "schema[0].physicalName" and "plain identifier" in message for path, message in issues_of(text))


# -- placeholders and the object's own name --------------------------------------------------

@pytest.mark.parametrize("query", [
    "SELECT count(*) FROM {model} WHERE amount < 0",
    "SELECT count(*) FROM ${model} WHERE amount < 0",
    "SELECT count(*) FROM {table} WHERE amount < 0",
    "SELECT count(*) FROM ${table} WHERE amount < 0",
    "SELECT count(*) FROM {object} WHERE amount < 0",
])
def test_other_tools_placeholders_become_object(query):
    assert query_of(sql_plan(query)) == "SELECT count(*) FROM {object} WHERE `amount` < 0"


def test_column_means_property_on_a_property():
    plan = sql_plan("SELECT count(*) FROM ${table} WHERE ${column} IS NULL", at_property=True)
    assert query_of(plan) == "SELECT count(*) FROM {object} WHERE {property} IS NULL"


@pytest.mark.parametrize("query", ["SELECT count(*) FROM t WHERE t.amount < 0",
                                   "SELECT count(*) FROM `T` WHERE `T`.amount < 0"])
def test_the_objects_own_name_is_the_batch_and_keeps_its_name_as_alias(query):
    rendered = query_of(sql_plan(query))
    assert rendered.startswith("SELECT count(*) FROM {object} AS `")
    assert "`amount` < 0" in rendered


def test_the_objects_physical_name_is_the_batch():
    plan = sql_plan("SELECT count(*) FROM crm_orders_v2 c WHERE c.amount < 0", physical_name="crm_orders_v2")
    assert query_of(plan) == "SELECT count(*) FROM {object} AS `c` WHERE `c`.`amount` < 0"


def test_a_cte_named_like_the_object_is_that_cte_and_its_body_reads_the_batch():
    plan = sql_plan("WITH t AS (SELECT * FROM t WHERE amount < 0) SELECT count(*) FROM t")
    assert query_of(plan) == "WITH `t` AS (SELECT * FROM {object} AS `t` WHERE `amount` < 0) SELECT count(*) FROM `t`"


@pytest.mark.parametrize("query, refused", [
    ("SELECT count(*) FROM other_schema.t", "table other_schema.t is not allowed"),
    ("SELECT count(*) FROM spark_catalog.default.t", "table spark_catalog.default.t is not allowed"),
    ("SELECT count(*) FROM `other_schema`.`t`", "is not allowed"),
    ("SELECT count(*) FROM `other_schema.t`", "table 'other_schema.t' is not allowed"),
    ("SELECT count(*) FROM t_archive", "table 't_archive' is not allowed"),
    ("SELECT count(*) FROM {object} o JOIN orders x ON o.id = x.id", "table 'orders' is not allowed"),
    ("WITH T AS (SELECT * FROM {object}) SELECT count(*) FROM t", "table 't' is not allowed"),
    ("SELECT count(*) FROM {other}", "unknown placeholder {other}"),
    ("SELECT count(*) FROM $ {model}", "a parameter is not allowed as a table"),
    ("SELECT '${model}' FROM {object}", "'${' is not allowed"),
    ("SELECT count(*) FROM ${env:HOME}", "'{' is allowed only in a placeholder"),
    ("SELECT count(*) FROM read_parquet('/etc/x') WHERE list_contains(a, 1)", "not allowed as a table"),
])
def test_reading_any_other_table_stays_refused(query, refused):
    """With unsupportedChecks: warn too: SQL reading beyond its batch is never taken for a dialect."""
    for gate in (GATE, WARN):
        messages = [message for _, message in issues_of(contract(
            column("id", "string", "string") + column("amount", "double", "number"),
            f"- type: sql\n  query: \"{query}\"\n  mustBe: 0\n", extra=gate))]
        assert any(refused in message for message in messages), messages


def test_a_reference_alias_named_model_keeps_its_meaning():
    gate = GATE + "      references:\n        model: {table: ml_models}\n"
    assert query_of(sql_plan("SELECT count(*) FROM {model}", gate=gate)) == "SELECT count(*) FROM {model}"


# -- null in value lists, composite keys ----------------------------------------------------

def test_null_in_valid_values_lets_nulls_pass():
    entry = "- metric: invalidValues\n  arguments: {validValues: ['', null, n/a]}\n  mustBeLessOrEqualTo: 5\n  unit: percent\n"
    plan = compile_text(contract(column("s", "string", "string", quality=entry)))
    assert rule(plan, "s.invalidValues")["predicate"] == "(`s` IS NULL OR `s` IN ('', 'n/a'))"
    entry = "- metric: invalidValues\n  arguments: {validValues: [null]}\n  mustBe: 0\n"
    plan = compile_text(contract(column("s", "string", "string", quality=entry)))
    assert rule(plan, "s.invalidValues")["predicate"] == "`s` IS NULL"


def test_a_composite_key_without_positions_takes_declaration_order():
    plan = compile_text(contract(column("b", "int", "integer", primaryKey="true")
                                 + column("a", "string", "string", primaryKey="true")))
    assert plan["key"] == ["b", "a"] and rule(plan, "key.unique")["columns"] == ["b", "a"]


def test_key_columns_with_positions_come_first_then_the_others_in_declaration_order():
    plan = compile_text(contract(column("c", "int", "integer", primaryKey="true")
                                 + column("b", "int", "integer", primaryKey="true", primaryKeyPosition="2")
                                 + column("a", "string", "string", primaryKey="true", primaryKeyPosition="1")))
    assert plan["key"] == ["a", "b", "c"]
    gap = compile_text(contract(column("b", "int", "integer", primaryKey="true", primaryKeyPosition="7")
                                + column("a", "string", "string", primaryKey="true", primaryKeyPosition="3")))
    assert gap["key"] == ["a", "b"]  # a gap only orders the key


# -- checks the gate cannot run ---------------------------------------------------------------

SODA = "- type: custom\n  engine: soda\n  implementation: 'missing_count(amount) = 0'\n  severity: error\n"
DIALECT = "- type: sql\n  query: \"SELECT count(*) FROM {model} WHERE NOT list_contains(tags, 'pii')\"\n  mustBe: 0\n"


def test_another_engines_check_is_refused_for_a_gated_object_naming_the_setting():
    [(path, message)] = issues_of(contract(column("amount", "double", "number", quality=SODA), extra=GATE))
    assert path == "schema[0].properties[0].quality[0].engine"
    assert "engine 'soda'" in message and "unsupportedChecks: warn" in message


def test_sql_in_another_dialect_is_refused_for_a_gated_object_naming_the_function():
    [(path, message)] = issues_of(contract(column("amount", "double", "number"), DIALECT, extra=GATE))
    assert path == "schema[0].quality[0].query"
    assert "list_contains()" in message and "unsupportedChecks: warn" in message


@pytest.mark.parametrize("gate", [WARN, ""], ids=["warn", "documentation-only"])
def test_unsupported_checks_are_listed_as_not_evaluated_warnings(gate):
    plan = compile_text(contract(column("amount", "double", "number", quality=SODA), DIALECT, extra=gate))
    soda, dialect = rule(plan, "amount.unsupported"), rule(plan, "dataset.unsupported")
    assert (soda["kind"], soda["scope"], soda["severity"]) == ("unsupported", "text", "warning")
    assert "engine 'soda'" in soda["reason"] and "list_contains()" in dialect["reason"]
    assert not soda["enforceable"]
    assert load_plan(plan).rules[0].reason == soda["reason"]


def test_unsafe_sql_is_refused_even_where_unsupported_checks_are_listed():
    for gate in (WARN, ""):
        [(_, message)] = issues_of(contract(column("amount", "double", "number"),
                                            "- type: sql\n  query: \"SELECT reflect('java.lang.Runtime', 'exec') "
                                            "FROM {object}\"\n  mustBe: 0\n", extra=gate))
        assert "reflect() is not allowed" in message


def test_a_plan_reason_belongs_to_unsupported_rules_only():
    plan = compile_text(contract(column("amount", "double", "number", quality=SODA), extra=WARN))
    plan["rules"][0]["reason"] = None
    with pytest.raises(PlanError, match="reason"):
        check_document(plan)


@pytest.mark.parametrize("query", ["SELECT count(*) FROM `${project}.${dataset}.${model}` WHERE amount < 0",
                                   "SELECT count(*) FROM `{catalog}.{schema}.{table}` WHERE amount < 0"])
def test_the_batch_qualified_by_another_tools_variables_is_the_batch(query):
    assert query_of(sql_plan(query)) == "SELECT count(*) FROM {object} WHERE `amount` < 0"


@pytest.mark.parametrize("query", ["SELECT count(*) FROM `${project}.secret.${model}`",
                                   "SELECT count(*) FROM `${project}.${dataset}.${customers}`"])
def test_a_templated_name_with_a_real_part_or_another_table_stays_refused(query):
    for gate in (GATE, WARN):
        [(_, message)] = issues_of(contract(column("id", "string", "string"),
                                            f"- type: sql\n  query: \"{query}\"\n  mustBe: 0\n", extra=gate))
        assert "is not allowed" in message


def test_a_string_bound_is_one_quoted_literal_whatever_it_holds():
    """A time of day is text, so its range compares as text; a hostile bound stays a literal."""
    hostile = "00:00' OR 1=1 OR 'a"
    plan = compile_text(contract(column("at", "time", "time",
                                        logicalTypeOptions=f'{{minimum: "{hostile}", maximum: "23:59:59"}}')))
    assert rule(plan, "at.minimum")["predicate"] == "(`at` IS NULL OR `at` >= '00:00\\' OR 1=1 OR \\'a')"
    assert rule(plan, "at.maximum")["predicate"] == "(`at` IS NULL OR `at` <= '23:59:59')"
