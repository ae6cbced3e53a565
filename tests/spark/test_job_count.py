"""Count the Spark jobs of one validation: 1 fused pass (row rules, metrics, the row count and
the first key set's group-by) + 1 per further key set + 1 per sql rule, whatever the number
of row rules. A key set whose batch has duplicate keys adds the exact second look of
``contract_gate_spark.validation.key_hash``: 2 small jobs (the suspects' hashes broadcast, then their
rows' key columns grouped); one whose key groups of 3+ rows differ in their flags adds one
aggregate (the flags counted one aggregate function each).

Adaptive query execution is switched off here because it submits every shuffle stage as a
job of its own, which would count stages rather than passes over the data. The candidate is
opened before counting starts (schema resolution and the Delta version lookup are not part of
the validation), and only jobs started inside ``run_validation`` are counted.
"""

from __future__ import annotations

import itertools

import pytest
from _spark_plans import cases_plan, cases_df, good_row, rule

from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.validation.engine import run_validation

_groups = itertools.count()
LOOK_JOBS = 2


def count_jobs(spark, action):
    sc = spark.sparkContext
    group = f"job-count-{next(_groups)}"
    sc.setJobGroup(group, "counted")
    try:
        result = action()
        return len(sc.statusTracker().getJobIdsForGroup(group)), result
    finally:
        sc.setJobGroup("", "")


@pytest.fixture
def no_aqe(spark):
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    yield
    spark.conf.set("spark.sql.adaptive.enabled", "true")


def plan_with(row_rules: int, key_sets: int, sql_rules: int):
    plan = cases_plan()
    base = [r for r in plan["rules"] if r["scope"] == "row"][:row_rules]
    extra = [
        rule(f"case_count.below_{n}", "maximum", ["case_count"], f"case_count <= {1000 + n}")
        for n in range(row_rules - len(base))
    ]
    row_count = [r for r in plan["rules"] if r["kind"] == "row_count"]
    groups = [
        rule("key.unique", "unique", ["region_code", "report_date"], nulls_distinct=False),
        # the same columns in another order, NULLs distinct: still the same group-by
        rule("key.unique_dqx", "unique", ["report_date", "region_code"], nulls_distinct=True),
        rule("org.unique", "unique", ["reporting_org", "report_date"], severity="warning"),
    ]
    groups = groups[: 2 if key_sets == 1 else 3] if key_sets else []
    queries = [
        rule(f"sql.{n}", "sql", ["case_count"], query=f"SELECT count(*) FROM {{object}} WHERE {{property}} > {n}",
             threshold={"operator": "mustBeLessThan", "value": 1000, "unit": "rows"})
        for n in range(sql_rules)
    ]
    plan["rules"] = base + extra + row_count + groups + queries
    return plan


def parquet_of(spark, folder, rows):
    path = str(folder / "cases.parquet")
    cases_df(spark, rows).write.parquet(path)
    return read_candidate(spark, path, format="parquet")


@pytest.fixture(scope="module")
def parquet_candidate(spark, tmp_path_factory):
    """200 rows in which every key set of ``plan_with`` repeats; the rows of one key have the
    same count (three keys' negative), so they raise the same flags."""
    rows = [good_row(region=f"R{i % 7}", day=i % 28 + 1, count=i % 28 - 3) for i in range(200)]
    return parquet_of(spark, tmp_path_factory.mktemp("jobs"), rows)


@pytest.fixture(scope="module")
def distinct_candidate(spark, tmp_path_factory):
    """28 rows, no key of any key set of ``plan_with`` twice."""
    rows = [good_row(region=f"R{i}", day=i + 1, count=i - 3) for i in range(28)]
    return parquet_of(spark, tmp_path_factory.mktemp("distinct"), rows)


@pytest.mark.parametrize("row_rules", [3, 40])
@pytest.mark.parametrize(("key_sets", "sql_rules"), [(0, 0), (1, 0), (2, 0), (1, 2)])
@pytest.mark.parametrize("keys", ["distinct", "duplicate"])
def test_one_pass_plus_one_per_further_key_set_plus_one_per_sql_rule(
    spark, no_aqe, request, row_rules, key_sets, sql_rules, keys
):
    candidate = request.getfixturevalue(f"{'parquet' if keys == 'duplicate' else 'distinct'}_candidate")
    plan = plan_with(row_rules, key_sets, sql_rules)
    jobs, report = count_jobs(spark, lambda: run_validation(spark, plan, candidate))
    looks = key_sets if keys == "duplicate" else 0
    assert jobs == max(1, key_sets) + sql_rules + looks * LOOK_JOBS
    assert {r["status"] for r in report["rules"]} == {"evaluated"}
    assert len([r for r in report["rules"] if r["scope"] == "row"]) == row_rules


def test_key_groups_of_three_rows_that_differ_in_flags_cost_one_more_aggregate(spark, no_aqe, tmp_path):
    """A key group carries the bits all its rows raise and those any of them raises; where a
    group of 3+ rows differs, the flags are counted one aggregate function each."""
    rows = [good_row(region=f"R{i % 7}", day=i % 28 + 1, count=i - 3) for i in range(200)]
    candidate = parquet_of(spark, tmp_path, rows)
    jobs, report = count_jobs(spark, lambda: run_validation(spark, plan_with(6, 1, 0), candidate))
    assert jobs == 1 + LOOK_JOBS + 1
    assert {r["id"]: r["failed_rows"] for r in report["rules"]}["case_count.minimum"] == 3


def test_error_uniqueness_on_two_key_sets_costs_one_more_pass_for_rows_invalid(
    spark, no_aqe, parquet_candidate
):
    plan = plan_with(6, 2, 0)
    plan["rules"][-1]["severity"] = "error"
    jobs, report = count_jobs(spark, lambda: run_validation(spark, plan, parquet_candidate))
    assert jobs == 2 + 1 + 2 * LOOK_JOBS  # a look per key set: both repeat
    assert report["rows"]["invalid"] == 200  # every (org, date) pair repeats in this data


def test_a_pinned_delta_candidate_adds_one_log_job_per_query(spark, no_aqe, as_delta):
    """Delta lists the files of a time-travel snapshot for every query (a small job over its
    cached log state), so each pass costs 2 jobs: the pass itself and that listing."""
    candidate = as_delta(cases_df(spark, [good_row(day=d) for d in range(1, 11)]))
    # A probe that must read data (Delta answers a bare count(*) from its log statistics).
    # The first query on a fresh table also replays and caches the log: not counted.
    def probe():
        return candidate.df.selectExpr("count_if(case_count > 0)").collect()

    probe()
    per_query, _ = count_jobs(spark, probe)
    assert per_query == 2
    for plan, passes in ((plan_with(3, 0, 0), 1), (plan_with(40, 1, 2), 3)):
        jobs, _ = count_jobs(spark, lambda: run_validation(spark, plan, candidate))
        assert jobs == passes * per_query
