"""The report carries no values except an opt-in sample from allowed, unclassified columns;
metric rules; and `type: sql` rules run once each, as read-only queries."""

from __future__ import annotations

import json
import logging.config

import pytest
from _spark_plans import D, cases_df, cases_plan, good_row, rule, rule_entry, with_rules

from contract_gate_spark.validation.engine import run_validation
from contract_gate_plan.document import PlanError
from contract_gate_plan.sql_allowlist import bind_query, check_query
from contract_gate_spark.validation.report import write_report

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


def test_a_number_that_may_be_a_classified_value_is_withheld_but_still_judged(spark):
    """max(case_count) of a classified column is a value, not a count of rows; so is anything read
    through a star (it can rename columns) or from a reference table."""
    plan = cases_plan()
    plan["columns"][3]["classification"] = "confidential"  # case_count
    regions = {"regions": {"kind": "path", "path": "/nowhere", "format": "delta"}}
    plan = with_rules(
        {**plan, "tables": {"references": regions}},
        rule("max_count", "sql", [], query="SELECT max(case_count) FROM {object}",
             threshold={"operator": "mustBeLessThan", "value": 100, "unit": "rows"}),
        rule("renamed", "sql", [], query=check_query(
            "WITH t(a, b, c, d, e) AS (SELECT * FROM {object}) SELECT max(d) FROM t", {"object", "regions"}),
             threshold={"operator": "mustBeGreaterThan", "value": 0, "unit": "rows"}),
        rule("property", "sql", ["case_count"], query="SELECT min({property}) FROM {object}",
             threshold={"operator": "mustBeLessThan", "value": 0, "unit": "rows"}),
        rule("counted", "sql", [], query="SELECT count(*) FROM {object} WHERE case_count < 0"),
        rule("plain", "sql", [], query="SELECT max(char_length(region_code)) FROM {object}",
             threshold={"operator": "mustBeLessThan", "value": 5, "unit": "rows"}),
    )
    report = run_validation(spark, plan, cases_df(spark, ROWS))
    judged = {r["id"]: (r["measured"], r["passed"]) for r in report["rules"] if r["kind"] == "sql"}
    assert judged == {"max_count": (None, True), "renamed": (None, True), "property": (None, True),
                      "counted": (2, False), "plain": (2, True)}
    assert rule_entry(report, "max_count")["reason"] == \
        "the measured number is withheld: the query reads classified column(s) case_count"
    assert rule_entry(report, "renamed")["reason"] == \
        "the measured number is withheld: the query reads every column (a star), classified ones too"


@pytest.mark.parametrize("logging_reconfigured", [False, True], ids=["as_imported", "after_dictConfig"])
def test_a_failing_query_is_reported_by_its_error_condition_never_by_sparks_message(
    spark, tmp_path, caplog, capfd, logging_reconfigured
):
    """Also after a logging reconfiguration (Airflow's dictConfig in a task process running the
    engine in-process), which re-enables every existing logger that was only ``disabled``."""
    if logging_reconfigured:
        logging.config.dictConfig({"version": 1, "disable_existing_loggers": False})
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
    assert "secret-org" not in "".join(capfd.readouterr())
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


# Queries with each allowed aggregate, window, join, subquery and set operation: what runs (the
# rendered, re-checked text with the placeholders bound) computes what the contract wrote.
QUERY_FORMS = (
    'SELECT count(*) FROM {object}',
    'SELECT count(DISTINCT k) FROM {object}',
    'SELECT sum(v), avg(v), mean(v), min(v), max(v) FROM {object}',
    'SELECT count_if(b), bool_and(b), bool_or(b), every(b), some(b) FROM {object}',
    'SELECT stddev(v), stddev_pop(v), stddev_samp(v), variance(v), var_pop(v), var_samp(v) FROM {object}',
    'SELECT median(v), percentile(v, 0.5), percentile_approx(v, 0.5), approx_percentile(v, 0.5) FROM {object}',
    'SELECT approx_count_distinct(k) FROM {object}',
    'SELECT max_by(k, v), min_by(k, v) FROM {object}',
    'SELECT corr(v, g), covar_pop(v, g), covar_samp(v, g), skewness(v), kurtosis(v) FROM {object}',
    'SELECT sum(DISTINCT g) FROM {object}',
    'SELECT count(*) FROM {object} WHERE {property} IS NULL',
    'SELECT count(*) FROM (SELECT k, count(*) AS n FROM {object} GROUP BY k HAVING count(*) > 6)',
    'SELECT count(*) - count(DISTINCT k, g) FROM {object}',
    'SELECT count(*) FROM (SELECT g, row_number() OVER (PARTITION BY g ORDER BY v) AS n FROM {object}) WHERE n > 1',
    'SELECT max(r) FROM (SELECT rank() OVER (ORDER BY g) AS r, dense_rank() OVER (ORDER BY g) AS d FROM {object})',
    'SELECT sum(l) FROM (SELECT lag(v) OVER (ORDER BY v) AS l, lead(v, 2) OVER (ORDER BY v) AS m FROM {object})',
    'SELECT max(x) FROM (SELECT sum(v) OVER (PARTITION BY g ORDER BY v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS x FROM {object})',
    'SELECT max(x) FROM (SELECT ntile(3) OVER (ORDER BY v) AS x FROM {object})',
    'SELECT max(x) FROM (SELECT percent_rank() OVER (ORDER BY v) AS x FROM {object})',
    'SELECT max(x) FROM (SELECT cume_dist() OVER (ORDER BY v) AS x FROM {object})',
    'SELECT max(x) FROM (SELECT nth_value(v, 2) OVER (ORDER BY v) AS x FROM {object})',
    'SELECT max(x) FROM (SELECT first_value(v) OVER (PARTITION BY g ORDER BY v) AS x FROM {object})',
    'WITH t AS (SELECT g, sum(v) AS s FROM {object} GROUP BY g) SELECT count(*) FROM t WHERE s > 20',
    'WITH a AS (SELECT * FROM {object}), b AS (SELECT * FROM a WHERE g = 1) SELECT count(*) FROM b',
    'SELECT count(*) FROM {object} AS x JOIN {object} AS y ON x.g = y.g AND x.k = y.k',
    'SELECT count(*) FROM {object} AS x LEFT JOIN {object} AS y ON x.v = y.v + 1.5 WHERE y.v IS NULL',
    'SELECT count(*) FROM {object} AS x WHERE EXISTS (SELECT 1 FROM {object} AS y WHERE y.g = x.g AND y.v > x.v)',
    'SELECT count(*) FROM {object} WHERE k NOT IN (SELECT k FROM {object} WHERE g = 0 AND k IS NOT NULL)',
    'SELECT count(*) FROM {object} WHERE v > (SELECT avg(v) FROM {object})',
    'SELECT count(*) FROM (SELECT k FROM {object} UNION ALL SELECT k FROM {object})',
    'SELECT count(*) FROM (SELECT k FROM {object} UNION SELECT k FROM {object})',
    'SELECT count(*) FROM (SELECT k FROM {object} INTERSECT SELECT k FROM {object} WHERE g = 1)',
    'SELECT count(*) FROM (SELECT k FROM {object} EXCEPT SELECT k FROM {object} WHERE g = 1)',
    'SELECT count(*) FROM (SELECT DISTINCT g, k FROM {object})',
    'SELECT max(g) FROM (SELECT g FROM {object} ORDER BY g DESC NULLS LAST LIMIT 3)',
    'SELECT count(*) FROM {object} GROUP BY g ORDER BY g LIMIT 1',
    'SELECT CASE WHEN count(*) > 10 THEN 1 ELSE 0 END FROM {object}',
    "SELECT count(*) FROM {object} WHERE k LIKE 'k%' AND v BETWEEN 1 AND 10",
    'SELECT coalesce(sum(v), 0) FROM {object} WHERE g = 99',
    'SELECT count(*) FROM {object} LEFT ANTI JOIN {object} AS y ON {object}.g = y.g + 10',
    'SELECT count(*) FROM {object} CROSS JOIN (SELECT 1 AS one)',
    'SELECT count(*) FROM {object} WHERE g IN (1, 2) OR b',
    'SELECT count(*) FILTER (WHERE b) FROM {object}',
    'SELECT sum(CASE WHEN b THEN 1 ELSE 0 END) * 100.0 / count(*) FROM {object}',
    'FROM {object} SELECT count(*)',
    'SELECT any_value(g) IS NOT NULL FROM {object}',
    'SELECT first(g) IS NOT NULL, last(g) IS NOT NULL FROM {object}',
    'SELECT count(*) FROM {object} GROUP BY ALL',
    'SELECT count(*) FROM {object} t1, {object} t2 WHERE t1.g = t2.g',
)


@pytest.mark.slow  # a long run: every query form against Spark, about 20 s
def test_queries_run_as_rendered_with_the_same_results(spark):
    rows = [(i % 4, float(i) * 1.5, f"k{i % 3}", i % 2 == 0) for i in range(20)] + [(None, None, None, None)]
    view = "query_forms_batch"
    spark.createDataFrame(rows, "g int, v double, k string, b boolean").createOrReplaceTempView(view)
    try:
        differ = []
        for query in QUERY_FORMS:
            written = spark.sql(query.replace("{object}", view).replace("{property}", "v")).collect()
            run = spark.sql(bind_query(query, {"object": view, "property": "v"})).collect()
            if _rounded(written) != _rounded(run):
                differ.append(query)
        assert differ == []
    finally:
        spark.catalog.dropTempView(view)


def test_oracles_dual_runs_as_a_select_of_one_row(spark):
    """Spark has no ``dual``: what runs is the SELECT without a table, one row as in Oracle."""
    def run(query: str):
        return spark.sql(bind_query(query, {"object": "no_such_table"})).first()[0]

    assert (run("SELECT count(*) FROM dual"), run("SELECT count(*) FROM DUAL WHERE 1 = 0")) == (1, 0)


def _rounded(rows) -> list:
    """Rows with floats to 9 significant digits: the order in which Spark adds partial
    aggregates differs between two runs of one query, and so do the last bits of a double."""
    return [tuple(float(f"{v:.9g}") if isinstance(v, float) else v for v in row) for row in rows]


def test_validating_a_batch_alone_leaves_the_cross_batch_key_rule_to_batch_keys(spark):
    """It needs the target: reported ``not_executed`` in its plan place, and the outcome of a
    batch validated alone (a notebook, ``contract-gate validate``) does not count it."""
    across = rule("key.unique_across_batches", "unique_across_batches", ["region_code", "report_date"],
                  scope="target")
    plan = cases_plan(gate={"publication": {"mode": "append"}},
                      tables={"target": {"kind": "path", "path": "target", "format": "delta"}})
    plan["rules"].insert(len(plan["rules"]) - 1, across)  # after key.unique, as the compiler puts it
    report = run_validation(spark, plan, cases_df(spark, [good_row(), good_row(region="NL-UT")]))
    assert [r["id"] for r in report["rules"]] == [r["id"] for r in plan["rules"]]
    entry = rule_entry(report, "key.unique_across_batches")
    assert (entry["status"], entry["failed_rows"], entry["passed"]) == ("not_executed", None, None)
    assert "batch_keys" in entry["reason"] and report["outcome"] == "pass"
