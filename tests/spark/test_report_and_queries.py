"""The report carries no values except an opt-in sample from allowed, unclassified columns;
metric rules; and `type: sql` rules run once each, as read-only queries."""

from __future__ import annotations

import json

import pytest
from _spark_plans import D, cases_df, cases_plan, good_row, rule, rule_entry, with_rules

from spark_jobs.engine import run_validation
from spark_jobs.plan import PlanError
from spark_jobs.sql_allowlist import check_query
from spark_jobs.report import write_report

ROWS = [
    ("", D, "secret-org", -4, "bogus"),
    ("X", D, None, -9, None),
    good_row(region="NL", day=2),
]


def test_no_values_unless_sampling_is_asked_for(spark, tmp_path):
    df = cases_df(spark, ROWS)
    report = run_validation(spark, cases_plan(), df)
    write_report(report, tmp_path / "r.json")
    text = (tmp_path / "r.json").read_text()
    assert json.loads(text) == report
    assert "secret-org" not in text and "bogus" not in text and '"sample"' not in text


def test_sample_only_from_allowed_unclassified_columns(spark):
    report = run_validation(spark, cases_plan(), cases_df(spark, ROWS), sample_size=1)
    # region_code and case_count allow sampling; reporting_org is classified; status does not allow it
    assert rule_entry(report, "case_count.minimum")["sample"] == {"case_count": [-4]}
    assert rule_entry(report, "region_code.not_blank")["sample"] == {"region_code": [""]}
    assert "sample" not in rule_entry(report, "reporting_org.required")
    assert "sample" not in rule_entry(report, "status.enum")


def test_metric_rules_count_rows_and_judge_the_batch_only(spark):
    plan = with_rules(
        cases_plan(),
        rule("status.null_values", "metric", ["status"], "status IS NOT NULL", metric="nullValues",
             threshold={"operator": "mustBeLessOrEqualTo", "value": 50, "unit": "percent"}),
        rule("status.invalid_values", "metric", ["status"], "(status IS NULL OR status <> 'bogus')",
             metric="invalidValues", threshold={"operator": "mustBe", "value": 0, "unit": "rows"}),
    )
    report = run_validation(spark, plan, cases_df(spark, ROWS))
    nulls, invalid = rule_entry(report, "status.null_values"), rule_entry(report, "status.invalid_values")
    assert (nulls["failed_rows"], nulls["measured"], nulls["passed"]) == (1, 33.333333333333336, True)
    assert (invalid["failed_rows"], invalid["passed"]) == (1, False)
    assert report["rows"] == {"valid": 3, "invalid": 0}  # dataset rules mark no rows


def test_sql_rules_see_the_candidate_and_the_property(spark):
    plan = with_rules(
        cases_plan(),
        rule("negatives", "sql", ["case_count"], query="SELECT count(*) FROM {object} WHERE {property} < 0",
             threshold={"operator": "mustBeLessThan", "value": 2, "unit": "rows"}),
        rule("orgs", "sql", [], query="WITH o AS (SELECT DISTINCT reporting_org FROM {object}) SELECT count(*) FROM o",
             threshold={"operator": "mustBeBetween", "value": [1, 3], "unit": "rows"}),
        rule("bare", "sql", [], query="SELECT count(*) FROM {object} WHERE region_code = ''"),
        rule("null_result", "sql", [], query="SELECT max(case_count) FROM {object} WHERE case_count > 1000",
             threshold={"operator": "mustBeLessThan", "value": 5, "unit": "rows"}),
    )
    report = run_validation(spark, plan, cases_df(spark, ROWS))
    judged = {r["id"]: (r["measured"], r["passed"]) for r in report["rules"] if r["kind"] == "sql"}
    assert judged == {"negatives": (2, False), "orgs": (3, True), "bare": (1, False), "null_result": (None, False)}
    assert "not a number" in rule_entry(report, "null_result")["reason"]
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("contract_gate_candidate_")]


def test_a_plan_with_a_statement_for_a_query_is_refused_before_anything_runs(spark, tmp_path):
    target = str(tmp_path / "victim")
    spark.range(1).write.format("delta").save(target)
    for query in (f"DROP TABLE delta.`{target}`",
                  f"SELECT 1) AS q; DELETE FROM delta.`{target}`; SELECT * FROM (SELECT 1"):
        plan = with_rules(cases_plan(), rule("ddl", "sql", [], query=query))
        with pytest.raises(PlanError, match="rule 'ddl'.query is refused"):
            run_validation(spark, plan, cases_df(spark, ROWS))
    assert spark.read.format("delta").load(target).count() == 1


def test_a_non_numeric_query_result_is_reported_by_its_type_never_its_value(spark, tmp_path):
    plan = with_rules(
        cases_plan(),
        rule("org_name", "sql", [], query="SELECT max(reporting_org) FROM {object}"),
        rule("org_of_region", "sql", ["region_code"], query="SELECT min(reporting_org) FROM {object} WHERE {property} = 'NL'"),
        rule("nothing", "sql", [], query="SELECT case_count FROM {object} WHERE case_count > 1000"),
    )
    report = run_validation(spark, plan, cases_df(spark, ROWS))
    write_report(report, tmp_path / "r.json")
    text = (tmp_path / "r.json").read_text()
    assert "secret-org" not in text and "GGD" not in text
    assert {r["id"]: (r["passed"], r["reason"]) for r in report["rules"] if r["kind"] == "sql"} == {
        "org_name": (False, "the query returned a string value, not a number"),
        "org_of_region": (False, "the query returned a string value, not a number"),
        "nothing": (False, "the query returned no row, not a number"),
    }


def test_a_failing_query_is_reported_by_its_error_condition_never_by_sparks_message(spark, tmp_path, caplog):
    plan = with_rules(
        cases_plan(),
        # under ANSI mode the cast fails, and Spark's message quotes the value it could not cast
        rule("cast", "sql", [], query="SELECT sum(CAST(reporting_org AS INT)) FROM {object}"),
        rule("ok", "sql", [], query="SELECT count(*) FROM {object} WHERE case_count < 0"),
    )
    report = run_validation(spark, plan, cases_df(spark, ROWS))
    write_report(report, tmp_path / "r.json")
    text = (tmp_path / "r.json").read_text()
    assert "secret-org" not in text and "secret-org" not in caplog.text
    assert rule_entry(report, "cast")["status"] == "not_evaluated"
    assert rule_entry(report, "cast")["reason"] == "query failed: CAST_INVALID_INPUT"
    assert (rule_entry(report, "ok")["measured"], rule_entry(report, "ok")["passed"]) == (2, False)
    assert report["outcome"] == "fail"


def test_a_query_reads_a_reference_table_listed_by_the_gate_only(spark, tmp_path):
    regions = str(tmp_path / "regions")
    spark.createDataFrame([("NL",), ("BE",)], "code string").write.format("delta").save(regions)
    plan = with_rules(
        cases_plan(tables={"references": {"regions": {"kind": "path", "path": regions, "format": "delta"}}}),
        rule("unknown_region", "sql", [], query=check_query(
            "SELECT count(*) FROM {object} AS c WHERE NOT EXISTS (SELECT 1 FROM {regions} AS r WHERE r.code = c.region_code)",
            {"object", "regions"})),
    )
    report = run_validation(spark, plan, cases_df(spark, ROWS))
    assert (rule_entry(report, "unknown_region")["measured"], rule_entry(report, "unknown_region")["passed"]) == (2, False)
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("contract_gate_")]
    unlisted = with_rules(cases_plan(), rule("unlisted", "sql", [], query="SELECT count(*) FROM {regions}"))
    with pytest.raises(PlanError, match="unknown placeholder {regions}"):
        run_validation(spark, unlisted, cases_df(spark, ROWS))


def test_text_rules_are_reported_not_executed(spark):
    plan = with_rules(cases_plan(), rule("doc", "text", []))
    report = run_validation(spark, plan, cases_df(spark, ROWS))
    assert (rule_entry(report, "doc")["status"], report["outcome"]) == ("not_executed", "pass")
