"""Plans the engine must refuse rather than half-execute (no Spark needed)."""

from __future__ import annotations

import json
import re

import pytest
from _spark_plans import cases_plan, rule, with_rules

from contract_gate_plan.document import PlanError, fingerprint, read_document
from contract_gate_plan.model import load_plan
from contract_gate_plan.thresholds import satisfies


def test_fingerprint_is_filled_in_and_checked(tmp_path):
    plan = read_document(cases_plan())
    assert plan["fingerprint"] == fingerprint(cases_plan())
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    assert read_document(str(path)) == plan
    plan["rules"][0]["predicate"] = "true"
    with pytest.raises(PlanError, match="changed after it was compiled"):
        read_document(plan)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"plan_version": 2}, "plan_version 2"),
        ({"schema_policy": "lenient"}, "schema_policy"),
        ({"rules": [rule("x", "wat", [])]}, "unknown kind"),
        ({"rules": [rule("x", "minimum", ["a"])]}, "needs a predicate"),
        ({"rules": [rule("x", "minimum", ["a"], "a > 0", scope="group")]}, "must have scope 'row'"),
        ({"rules": [rule("x", "required", ["a"], "a IS NOT NULL")] * 2}, "duplicate ids: x"),
        ({"rules": [rule("x", "minimum", ["a"], "a > 0", threshold={"operator": "mustBeBetween", "value": 3})]}, "does not fit"),
        ({"rules": [rule("x", "minimum", ["a"], "a > 0", severity="info")]}, "severity"),
        ({"rules": [rule("x", "max_length", ["a"], "a IS NULL", passes_when="")]}, "passes_when must be a non-empty"),
        ({"rules": [rule("x", "unique", ["a"], scope="group", passes_when="true")]}, "passes_when needs a predicate"),
    ],
)
def test_malformed_plans_are_refused(change, message):
    with pytest.raises(PlanError, match=message):
        read_document({**cases_plan(), **change})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fs.file.impl": "com.attacker.FileSystem"}, "plan.tables.landing: option 'fs.file.impl' is not a json reader option"),
        ({"fs.s3a.endpoint": "https://collector.example"}, "option 'fs.s3a.endpoint' is not a json reader option"),
        ({"mode": "DROPMALFORMED"}, "option 'mode' 'DROPMALFORMED' would leave records of the batch out"),
        ({"multiLine": "x" * 201}, "option 'multiLine' must be a text of at most 200 characters"),
    ],
)
def test_a_plan_edited_to_give_spark_other_reader_options_is_refused(options, message):
    """Spark copies reader options into the read's Hadoop configuration (a class to load, an
    endpoint for the storage credentials): the Spark side checks them again, whatever the plan file says."""
    landing = {"kind": "path", "path": "landing/cases", "format": "json"}
    assert read_document(cases_plan(tables={"landing": {**landing, "options": {"multiLine": "true", "MODE": "failfast"}}}))
    with pytest.raises(PlanError, match=re.escape(message)):
        read_document(cases_plan(tables={"landing": {**landing, "options": options}}))
    with pytest.raises(PlanError, match=re.escape("plan.tables.references.known: option 'header' is not a delta reader")):
        read_document(cases_plan(tables={"landing": landing, "references": {
            "known": {"kind": "path", "path": "k", "format": "delta", "options": {"header": "true"}}}}))


def test_a_plan_edited_to_reference_the_gates_own_tables_is_refused():
    """The compiler refuses a query reference to a candidate or the decision log (the corpus'
    ``own_reference_`` files); a plan edited past it is refused before it runs."""
    tables = {"candidate_schema": {"kind": "path", "path": "lakehouse/_contract_gate_candidates", "format": "delta"}}
    reference = {"kind": "path", "path": "lakehouse/_contract_gate_candidates/orders__s1", "format": "delta"}
    with pytest.raises(PlanError, match=re.escape("plan.tables: the reference peek 'lakehouse/_contract_gate_candidates"
                                                  "/orders__s1' lies inside '_contract_gate_candidates'")):
        read_document(cases_plan(tables={**tables, "references": {"peek": reference}}))
    assert read_document(cases_plan(tables={**tables, "references": {"peek": {**reference, "path": "lakehouse/customers"}}}))


def _appending(*rules, **overrides):
    """cases_plan with gate settings that append to a target, and ``rules``."""
    plan = cases_plan(**{"gate": {"publication": {"mode": "append"}},
                         "tables": {"target": {"kind": "path", "path": "t", "format": "delta"}}, **overrides})
    return with_rules(plan, *rules)


def _across(columns=("region_code", "report_date"), **extra):
    return rule("key.unique_across_batches", "unique_across_batches", list(columns), **{"scope": "target", **extra})


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (_appending(_across(scope="group")), "must have scope 'target'"),
        (_appending(_across(columns=[])), "needs the key columns"),
        (_appending(_across(columns=["region_code"])), "must have the plan's key as its columns"),
        (_appending(_across(), gate={"publication": {"mode": "replace_keys"}}), "needs gate settings that append"),
        (_appending(_across(), tables=None), "needs gate settings that append"),
        (_appending(_across(predicate="true")), "takes no predicate"),
        (_appending(_across(threshold={"operator": "mustBe", "value": 0, "unit": "rows"})), "takes no threshold"),
    ],
)
def test_the_cross_batch_key_rule_must_be_the_publications(plan, message):
    """It is judged against the target on the key the publish appends by: a plan that says
    otherwise would quarantine batches by what their publish does not do."""
    assert read_document(_appending(_across()))["rules"][0]["scope"] == "target"
    with pytest.raises(PlanError, match=message):
        read_document(plan)


@pytest.mark.parametrize(
    ("measured", "operator", "value", "expected"),
    [
        (5, "mustBeLessThan", 5, False),
        (4.999, "mustBeLessThan", 5, True),
        (0.1 + 0.2, "mustBeLessOrEqualTo", 0.3, False),  # exact: 0.30000000000000004 > 0.3
        (10, "mustBeBetween", [1, 10], True),
        (10, "mustNotBeBetween", [1, 10], False),
        (0, "mustBe", 0, True),
        (1, "mustNotBe", 0, True),
        (3, "mustBeGreaterOrEqualTo", 3, True),
        (3, "mustBeGreaterThan", 3, False),
    ],
)
def test_thresholds(measured, operator, value, expected):
    assert satisfies(measured, operator, value) is expected


def test_with_rules_keeps_plans_valid():
    assert read_document(with_rules(cases_plan(), rule("doc", "text", [])))["rules"][0]["id"] == "doc"


@pytest.mark.parametrize(
    ("key", "text", "message"),
    [
        ("predicate", "java_method('java.lang.System', 'exit', 0) = 0", "function java_method() is not allowed"),
        ("predicate", "`case_count` >= 0 -- and more", "comments are not allowed"),
        ("predicate", "case_count >= 0", "not in the form the compiler renders it"),
        ("predicate", "`region_code` <> '${env:HOME}'", "'${' is not allowed"),
        ("filter", "`case_count` > (SELECT max(x) FROM t)", "a subquery is not allowed in a row expression"),
        ("passes_when", "java_method('java.lang.System', 'exit', 0) = 0", "function java_method() is not allowed"),
        ("passes_when", "octet_length(region_code) <= 5", "not in the form the compiler renders it"),
    ],
)
def test_every_sql_text_of_a_plan_is_checked_again(key, text, message):
    """The Spark side trusts no SQL of a plan, even one whose fingerprint was recomputed."""
    plan = read_document(cases_plan())
    plan["rules"][5][key] = text
    plan["fingerprint"] = fingerprint(plan)
    with pytest.raises(PlanError, match=re.escape(f"rule 'case_count.minimum'.{key} is refused: ") + ".*" + re.escape(message)):
        read_document(plan)


def test_a_plan_query_reads_only_its_placeholders(tmp_path):
    query = rule("q", "sql", [], query="SELECT count(*) FROM `orders`")
    with pytest.raises(PlanError, match="rule 'q'.query is refused: table 'orders' is not allowed"):
        read_document(with_rules(cases_plan(), query))
    path = tmp_path / "plan.json"
    unsigned = read_document(cases_plan())
    del unsigned["fingerprint"]
    path.write_text(json.dumps(unsigned))
    with pytest.raises(PlanError, match="plan file has no fingerprint"):
        read_document(path)


def test_a_step_needing_a_table_the_plan_lacks_is_refused_by_name():
    plan = load_plan(cases_plan(tables={"target": {"kind": "path", "path": "t", "format": "delta"}}))
    assert plan.require_tables().require_target().location.endswith("/t")
    with pytest.raises(PlanError, match=r"no decisions \(plan.tables.decisions\)"):
        plan.require_tables().require_decisions()
    with pytest.raises(PlanError, match=r"no candidate_schema \(plan.tables.candidate_schema\)"):
        plan.require_tables().require_candidate_schema()
    with pytest.raises(PlanError, match="no freshness"):
        plan.require_freshness()
