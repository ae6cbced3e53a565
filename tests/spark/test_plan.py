"""Plans the engine must refuse rather than half-execute (no Spark needed)."""

from __future__ import annotations

import json
import re

import pytest
from _spark_plans import cases_plan, rule, with_rules

from contract_plan.document import PlanError, fingerprint, load_plan
from contract_plan.thresholds import satisfies


def test_fingerprint_is_filled_in_and_checked(tmp_path):
    plan = load_plan(cases_plan())
    assert plan["fingerprint"] == fingerprint(cases_plan())
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    assert load_plan(str(path)) == plan
    plan["rules"][0]["predicate"] = "true"
    with pytest.raises(PlanError, match="changed after it was compiled"):
        load_plan(plan)


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
    ],
)
def test_malformed_plans_are_refused(change, message):
    with pytest.raises(PlanError, match=message):
        load_plan({**cases_plan(), **change})


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
    assert satisfies(measured, {"operator": operator, "value": value, "unit": "rows"}) is expected


def test_with_rules_keeps_plans_valid():
    assert load_plan(with_rules(cases_plan(), rule("doc", "text", [])))["rules"][0]["id"] == "doc"


@pytest.mark.parametrize(
    ("key", "text", "message"),
    [
        ("predicate", "java_method('java.lang.System', 'exit', 0) = 0", "function java_method() is not allowed"),
        ("predicate", "`case_count` >= 0 -- and more", "comments are not allowed"),
        ("predicate", "case_count >= 0", "not in the form the compiler renders it"),
        ("predicate", "`region_code` <> '${env:HOME}'", "'${' is not allowed"),
        ("filter", "`case_count` > (SELECT max(x) FROM t)", "a subquery is not allowed in a row expression"),
    ],
)
def test_every_sql_text_of_a_plan_is_checked_again(key, text, message):
    """The Spark side trusts no SQL of a plan, even one whose fingerprint was recomputed."""
    plan = load_plan(cases_plan())
    plan["rules"][5][key] = text
    plan["fingerprint"] = fingerprint(plan)
    with pytest.raises(PlanError, match=re.escape(f"rule 'case_count.minimum'.{key} is refused: ") + ".*" + re.escape(message)):
        load_plan(plan)


def test_a_plan_query_reads_only_its_placeholders(tmp_path):
    query = rule("q", "sql", [], query="SELECT count(*) FROM `orders`")
    with pytest.raises(PlanError, match="rule 'q'.query is refused: table 'orders' is not allowed"):
        load_plan(with_rules(cases_plan(), query))
    path = tmp_path / "plan.json"
    unsigned = load_plan(cases_plan())
    del unsigned["fingerprint"]
    path.write_text(json.dumps(unsigned))
    with pytest.raises(PlanError, match="plan file has no fingerprint"):
        load_plan(path)
