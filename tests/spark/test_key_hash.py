"""Uniqueness counted on the key's hash stays exact when hashes collide.

The engine groups a key set on a 64-bit hash of its columns (``contract_gate_spark.validation.key_hash``).
Collisions are forced here by narrowing that hash to 0 bits (``HASH_BITS``, a test-only
setting): then every key, distinct or not, lands in one hash group, and the engine's second
look at the key columns must find that out and count again on them. Each case is also run at the full width, and
both must give the counts that grouping on the columns gives.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest
from _spark_plans import cases_df, cases_plan, good_row, rule, rule_entry, with_rules

from contract_gate_plan.model import load_plan
from contract_gate_spark.validation import key_hash, key_passes
from contract_gate_spark.validation.engine import run_validation
from contract_gate_spark.validation.pass_settings import pass_settings
from contract_gate_spark.validation.rule_columns import triage
from contract_gate_spark.validation.schema_compare import check_schema

WIDTHS = [0, 64]  # 0 bits: every key collides; 64: the real width
_groups = itertools.count()


@pytest.fixture(params=WIDTHS, ids=lambda bits: f"{bits}-bit hash")
def hash_bits(request, monkeypatch):
    monkeypatch.setattr(key_hash, "HASH_BITS", request.param)
    return request.param


def unique_plan(columns, **extra):
    return with_rules(cases_plan(), rule("key.unique", "unique", columns, **extra))


def duplicates(spark, plan, rows, ddl=None, df=None):
    if df is None:
        df = cases_df(spark, rows) if ddl is None else spark.createDataFrame(rows, ddl)
    entry = rule_entry(run_validation(spark, plan, df), "key.unique")
    return entry["failed_rows"], entry["duplicate_groups"]


def test_distinct_keys_that_share_a_hash_are_no_duplicates(spark, hash_bits):
    rows = [good_row(region=f"R{i}", day=i % 28 + 1) for i in range(40)]
    assert duplicates(spark, unique_plan(["region_code", "report_date"]), rows) == (0, 0)


def test_real_duplicates_among_colliding_keys_are_counted_exactly(spark, hash_bits):
    rows = [good_row(region=f"R{i}", day=1) for i in range(30)]  # 30 distinct keys
    rows += [good_row(region="R3", day=1), good_row(region="R3", day=1)]  # R3 three times
    rows += [good_row(region="R7", day=1)]  # R7 twice
    assert duplicates(spark, unique_plan(["region_code", "report_date"]), rows) == (5, 2)


@pytest.mark.parametrize(("nulls_distinct", "expected"), [(True, (0, 0)), (False, (2, 1))])
def test_null_key_parts_keep_their_meaning(spark, hash_bits, nulls_distinct, expected):
    """A key of two strings: (x, NULL) and (NULL, x) are different keys (Spark's hashes skip a
    NULL, so without the NULL mask they would hash alike); (NULL, y) twice is a duplicate only
    where NULLs compare equal."""
    ddl = "region_code string, reporting_org string"
    rows = [("x", None), (None, "x"), (None, "y"), (None, "y"), ("a", "b")]
    plan = unique_plan(["region_code", "reporting_org"], nulls_distinct=nulls_distinct)
    plan["columns"] = [c for c in plan["columns"] if c["name"] in ("region_code", "reporting_org")]
    assert duplicates(spark, plan, rows, ddl) == expected


def test_float_keys_compare_as_grouping_does(spark, hash_bits):
    """0.0 and -0.0 are one key, and NaN equals NaN, as in a GROUP BY."""
    ddl = "region_code string, amount double"
    rows = [("a", 0.0), ("a", -0.0), ("a", float("nan")), ("a", float("nan")), ("a", 1.0)]
    plan = unique_plan(["region_code", "amount"], nulls_distinct=False)
    plan["columns"] = [
        {**plan["columns"][0]},
        {**plan["columns"][3], "name": "amount", "type": "double"},
    ]
    assert duplicates(spark, plan, rows, ddl) == (4, 2)


ONE_INSTANT = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("ddl", "rows", "merged"),
    [
        ("k timestamp", [(ONE_INSTANT,), (ONE_INSTANT,)], False),
        ("k timestamp", [(ONE_INSTANT,), (ONE_INSTANT + timedelta(microseconds=1),)], True),
        ("k binary", [(bytearray(b"a"),), (bytearray(b"a"),)], False),
        ("k binary", [(bytearray(b"a"),), (bytearray(b"a\x00"),)], True),
        ("k decimal(10,2)", [(Decimal("1.10"),), (Decimal("1.1"),)], False),
        ("k decimal(10,2)", [(Decimal("1.10"),), (Decimal("1.11"),)], True),
        ("a boolean, b bigint", [(True, None), (True, None)], False),
        ("a boolean, b bigint", [(True, None), (None, 1)], True),
        ("a string, b string", [("x", None), (None, "x")], True),
        ("a string, b double", [("x", 0.0), ("x", -0.0), ("x", 0.0)], False),
        ("a string, b double", [("x", float("nan")), ("x", float("nan"))], False),
        ("a string, b double", [("x", float("nan")), ("x", float("inf"))], True),
    ],
)
def test_the_look_finds_two_keys_in_a_hash_group_exactly_when_grouping_does(
    spark, monkeypatch, ddl, rows, merged
):
    """Every row hashed to 0: the look's verdict on that one hash group (its least and greatest
    key differ) must be grouping's (more than one group), for every type that is hashed."""
    monkeypatch.setattr(key_hash, "HASH_BITS", 0)
    df = spark.createDataFrame(rows, ddl)
    keys = tuple(df.columns)
    assert key_hash.hashable(df.schema, keys)
    assert key_hash.merged_keys(df, keys, [0]) is merged
    assert (df.groupBy(*keys).count().count() > 1) is merged


def test_rows_invalid_and_filtered_rules_are_exact_under_collisions(spark, hash_bits):
    """The fused pass folds rows.invalid into the hashed group-by: a duplicate group is invalid
    entire, other groups add their broken rows; a filtered rule counts its evaluated rows."""
    rows = [good_row(region=f"R{i}", day=2, count=-1 if i == 5 else 1) for i in range(12)]
    rows += [good_row(region="R1", day=2, status="provisional")]  # R1 twice
    plan = with_rules(
        cases_plan(),
        rule("case_count.minimum", "minimum", ["case_count"], "case_count >= 0"),
        rule("key.unique", "unique", ["region_code", "report_date"], nulls_distinct=True),
        rule("key.unique_confirmed", "unique", ["region_code", "report_date"], nulls_distinct=True,
             severity="warning", filter="status = 'confirmed'"),
    )
    report = run_validation(spark, plan, cases_df(spark, rows))
    assert report["rows"]["invalid"] == 3  # R1 twice + R5's negative count
    confirmed = rule_entry(report, "key.unique_confirmed")
    assert (confirmed["failed_rows"], confirmed["evaluated_rows"]) == (0, 12)


def count_jobs(spark, action):
    sc = spark.sparkContext
    group = f"key-hash-{next(_groups)}"
    sc.setJobGroup(group, "counted")
    try:
        action()
        return len(sc.statusTracker().getJobIdsForGroup(group))
    finally:
        sc.setJobGroup("", "")


@pytest.fixture
def no_aqe(spark):
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # count passes, not shuffle stages
    yield
    spark.conf.set("spark.sql.adaptive.enabled", "true")


@pytest.mark.parametrize(
    ("bits", "repeated", "jobs", "expected"),
    [
        (64, 0, 1, (0, 0)),  # no hash group of 2+ rows: the pass alone
        (64, 2, 3, (3, 1)),  # duplicates: the pass and a look (2 jobs) that finds one key per group
        (0, 0, 4, (0, 0)),  # all keys in one hash group: pass, look, count again on columns
        (0, 2, 4, (3, 1)),
    ],
)
def test_the_second_look_runs_after_duplicates_and_the_recount_after_a_collision(
    spark, no_aqe, monkeypatch, bits, repeated, jobs, expected
):
    rows = [good_row(region=f"R{i}") for i in range(20)] + [good_row(region="R4")] * repeated
    df = cases_df(spark, rows)
    df.schema  # resolved before counting
    monkeypatch.setattr(key_hash, "HASH_BITS", bits)
    plan = unique_plan(["region_code", "report_date"])
    counted = []
    assert count_jobs(spark, lambda: counted.append(duplicates(spark, plan, rows=None, df=df))) == jobs
    assert counted == [expected]


def test_more_suspects_than_the_look_names_are_counted_on_the_columns(spark, no_aqe, monkeypatch):
    """Past LOOK_LIMIT hash groups of 2+ rows the engine skips the look and counts again."""
    monkeypatch.setattr(key_hash, "LOOK_LIMIT", 1)
    rows = [good_row(region=f"R{i % 5}") for i in range(12)]  # 5 keys, each 2 or 3 times
    df = cases_df(spark, rows)
    df.schema
    counted = []
    assert count_jobs(spark, lambda: counted.append(duplicates(spark, unique_plan(["region_code", "report_date"]), rows=None, df=df))) == 2
    assert counted == [(12, 5)]


def test_only_keys_whose_equality_is_their_bytes_are_hashed():
    from pyspark.sql.types import ArrayType, DateType, StringType, StructField, StructType

    schema = StructType([
        StructField("code", StringType()),
        StructField("day", DateType()),
        StructField("folded", StringType("UTF8_LCASE")),  # 'A' = 'a': equal keys, other bytes
        StructField("parts", ArrayType(StringType())),
    ])
    assert key_hash.hashable(schema, ("code", "day"))
    assert not key_hash.hashable(schema, ("code", "folded"))
    assert not key_hash.hashable(schema, ("parts",))


def test_the_hashed_key_is_grouped_by_one_sort_aggregate(spark):
    """The key's rows, sorted on their hash after the shuffle, are grouped in one streaming
    sort aggregate: no hash aggregate keeps a map entry per key (two would, a partial and a
    final one, without the sort), and the counts are those of the columns."""
    rows = [good_row(region=f"R{i}") for i in range(30)] + [good_row(region="R4")]
    df = cases_df(spark, rows)
    plan = load_plan(unique_plan(["region_code", "report_date"]))
    rules = triage(plan, df, check_schema(plan, df.schema), "all", submission=False)
    key_rules = rules.by_scope("group")
    with pass_settings(spark):
        summary = key_passes.key_groups(df, None, key_rules, fold=False, hashed=True)
        totals = summary.collect()
        executed = summary._jdf.queryExecution().executedPlan().toString()
    assert "isFinalPlan=true" in executed
    key_groupings = [line for line in executed.splitlines() if f"keys=[{key_passes.HASH}" in line or f"key=[{key_passes.HASH}" in line]
    assert key_groupings and all("SortAggregate" in line for line in key_groupings), executed
    assert sum(row["rows"] for row in totals) == 31
    assert sum(row["failed0"] for row in totals) == 2 and sum(row["groups0"] for row in totals) == 1
