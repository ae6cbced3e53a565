"""Forms real contracts use that the gate once refused: a free-text severity, an SLA on the
object itself or with its unit in the value, quality entries sharing a name, an unknown
physicalType beside a logicalType, JSON text whose nested properties document it, and a query
naming the object qualified by its server's schema or catalog (tests/contracts_real/class_*.yaml
are whole contracts of each)."""

from __future__ import annotations

import pytest

from _contract_texts import column, compile_text, contract, issues_of, rule
from contract_gate.contract.compiler import compile_plans
from contract_gate.contract.loader import load_contract_text

GATE = "customProperties:\n  - property: contractGate\n    value:\n      landing: {path: in}\n"


def warnings_of(text: str) -> list[tuple[str, str]]:
    return [(w.path, w.message) for w in compile_plans(load_contract_text(text, "c.yaml")).warnings]


def null_check(severity: str, name: str = "") -> str:
    return f"- {name}type: library\n  metric: nullValues\n  mustBe: 0\n  severity: {severity}\n"


# -- severity --------------------------------------------------------------------------------

@pytest.mark.parametrize("word, severity", [("critical", "error"), ("High", "error"), ("BLOCKER", "error"),
                                            ("major", "error"), ("low", "warning"), ("Minor", "warning"),
                                            ("info", "warning"), ("warn", "warning")])
def test_a_free_text_severity_word_maps_to_what_the_gate_does(word, severity):
    text = contract(column("a", "string", "string", quality=null_check(word)), extra=GATE)
    assert rule(compile_text(text), "a.nullValues")["severity"] == severity
    assert warnings_of(text) == []


def test_an_unknown_severity_word_holds_the_batch_and_lint_names_it():
    text = contract(column("a", "string", "string", quality=null_check("medium")), extra=GATE)
    assert rule(compile_text(text), "a.nullValues")["severity"] == "error"
    [(path, message)] = warnings_of(text)
    assert path == "schema[0].properties[0].quality[0].severity" and "'medium'" in message


# -- quality names ---------------------------------------------------------------------------

def test_quality_entries_may_share_a_name_and_ids_stay_unique():
    named = "name: No nulls\n  "
    text = contract(column("a", "string", "string", quality=null_check("error", named))
                    + column("b", "string", "string", quality=null_check("error", named)),
                    "- id: rows\n  name: No nulls\n  metric: rowCount\n  mustBeGreaterThan: 0\n"
                    "- name: rows\n  metric: rowCount\n  mustBeGreaterThan: 0\n", extra=GATE)
    ids = [r["id"] for r in compile_text(text)["rules"]]
    assert {"No nulls", "No nulls_2", "rows", "rows_2"} <= set(ids)
    assert rule(compile_text(text), "rows")["source"] == "schema[0].quality[0]"  # an id keeps it; a name moves aside


def test_two_quality_ids_still_clash_and_a_name_never_takes_a_reserved_or_generated_id():
    twice = "- id: same\n  metric: rowCount\n  mustBeGreaterThan: 0\n"
    assert any("duplicate rule id 'same'" in m for _, m in issues_of(contract(column("a", "string", "string"),
                                                                               twice + twice, extra=GATE)))
    for name, refused in (("a.type", "reserved for the gate's own checks"), ("a.required", "is the generated id")):
        text = contract(column("a", "string", "string", required="true",
                               quality=null_check("error", f"name: {name}\n  ")), extra=GATE)
        assert any(refused in message for _, message in issues_of(text))


# -- SLA ---------------------------------------------------------------------------------------

def sla(value: str, element: str = "t.at", unit: str = "") -> str:
    return GATE + f"slaProperties:\n  - property: freshness\n    value: {value}\n    element: {element}\n" + \
        (f"    unit: {unit}\n" if unit else "")


@pytest.mark.parametrize("value, unit, seconds", [("25h", "", 90000), ("2 d", "", 172800), ("1.5hours", "", 5400),
                                                  ("25h", "h", 90000), ("30", "min", 1800)])
def test_an_sla_value_may_carry_its_unit(value, unit, seconds):
    text = contract(column("at", "timestamp", "timestamp"), extra=sla(value, unit=unit))
    assert compile_text(text)["freshness"]["max_age_seconds"] == seconds


@pytest.mark.parametrize("value, unit, refused", [("25h", "d", "says unit 'h', unit says 'd'"),
                                                  ("25 parsecs", "", "unknown SLA unit"),
                                                  ("-3h", "", "positive number"), ("soon", "", "positive number")])
def test_an_sla_value_with_a_wrong_unit_is_refused(value, unit, refused):
    text = contract(column("at", "timestamp", "timestamp"), extra=sla(f"'{value}'", unit=unit))
    assert any(refused in message for _, message in issues_of(text))


@pytest.mark.parametrize("element", ["t", "t_physical"])
def test_an_sla_on_the_object_itself_is_not_checked_and_lint_says_so(element):
    text = contract(column("at", "timestamp", "timestamp"), extra=sla("25h", element=element))
    text = text.replace("  - name: t\n", "  - name: t\n    physicalName: t_physical\n", 1)
    assert compile_text(text)["freshness"] is None
    [(path, message)] = warnings_of(text)
    assert path == "slaProperties[0].element" and "does not check this SLA" in message


# -- unknown physical types ----------------------------------------------------------------------

@pytest.mark.parametrize("physical, logical, spark", [("objectId", "string", "string"),
                                                      ("GEOGRAPHY", "string", "string"),
                                                      ("money_amount", "number", "double")])
def test_an_unknown_physical_type_falls_back_to_the_logical_type_with_a_warning(physical, logical, spark):
    text = contract(column("a", physical, logical), extra=GATE)
    assert compile_text(text)["columns"][0]["type"] == spark
    [(path, message)] = warnings_of(text)
    assert path == "schema[0].properties[0].physicalType" and f"checked as its logicalType {logical!r}" in message


def test_an_unknown_physical_type_without_a_logical_type_or_a_known_one_written_wrongly_stays_refused():
    bare = contract("- name: a\n  physicalType: objectId\n", extra=GATE)
    assert issues_of(bare)  # ODCS itself asks for the logicalType
    wrong = contract(column("a", "'decimal(50,2)'", "number"), extra=GATE)
    assert any("precision 50" in m for _, m in issues_of(wrong))


# -- JSON text with nested properties ----------------------------------------------------------

def json_text(physical: str, server: str, field_extra: str = "") -> str:
    nested = f"- name: kind\n  logicalType: string\n{field_extra}- name: attempt\n  logicalType: integer\n"
    return contract(column("payload", physical, "object", properties=nested), extra=GATE + server)


POSTGRES = "servers:\n  - server: prod\n    type: postgres\n    host: h\n    port: 5432\n    database: d\n    schema: s\n"


@pytest.mark.parametrize("physical, server", [("jsonb", POSTGRES), ("json", POSTGRES), ("STRING", ""),
                                              ("varchar(400)", "")])
def test_json_text_with_nested_properties_is_a_string_column_that_must_hold_json(physical, server):
    plan = compile_text(json_text(physical, server))
    assert plan["columns"][0]["type"] == "string"
    assert rule(plan, "payload.json")["predicate"] == "(`payload` IS NULL OR get_json_object(`payload`, '$') IS NOT NULL)"
    assert not [r for r in plan["rules"] if "kind" in r["columns"] or r["id"].startswith("payload.kind")]


def test_a_rule_on_a_field_inside_json_text_is_a_lint_warning_not_a_check():
    text = json_text("jsonb", POSTGRES, field_extra="  required: true\n")
    assert not [r for r in compile_text(text)["rules"] if r["id"].startswith("payload.kind")]
    [(path, message)] = warnings_of(text)
    assert path == "schema[0].properties[0].properties[0]" and "required" in message


def test_a_struct_physical_type_with_nested_properties_stays_a_struct():
    plan = compile_text(json_text("struct<kind:string,attempt:bigint>", ""))
    assert plan["columns"][0]["type"] == "struct<kind:string,attempt:bigint>"


# -- SQL naming the object qualified by its server -----------------------------------------------

DATABRICKS = "servers:\n  - server: prod\n    type: databricks\n    catalog: fin\n    schema: orders_v1\n"


def sql(query: str, server: str) -> str:
    return contract(column("id", "string", "string") + column("amount", "double", "number"),
                    f"- type: sql\n  query: \"{query}\"\n  mustBe: 0\n", extra=GATE + server)


@pytest.mark.parametrize("query", ["SELECT count(*) FROM orders_v1.t WHERE amount < 0",
                                   "SELECT count(*) FROM fin.orders_v1.t WHERE amount < 0",
                                   "SELECT count(*) FROM `FIN`.`Orders_v1`.`T` WHERE amount < 0"])
def test_the_object_qualified_by_its_servers_schema_or_catalog_is_the_batch(query):
    query_text = next(r for r in compile_text(sql(query, DATABRICKS))["rules"] if r["kind"] == "sql")["query"]
    assert query_text.startswith("SELECT count(*) FROM {object} AS `") and "`amount` < 0" in query_text


@pytest.mark.parametrize("query", ["SELECT count(*) FROM other.t", "SELECT count(*) FROM fin.other.t",
                                   "SELECT count(*) FROM other.orders_v1.t", "SELECT count(*) FROM orders_v1.secrets",
                                   "SELECT count(*) FROM orders_v1.t JOIN orders_v1.secrets ON true",
                                   "SELECT count(*) FROM `orders_v1.t`"])
def test_another_schema_catalog_or_table_stays_refused(query):
    assert any("is not allowed" in message for _, message in issues_of(sql(query, DATABRICKS)))
