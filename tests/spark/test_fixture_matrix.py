"""The fixture matrix: each bad batch, written as a real Delta table, yields exactly the rule
ids and failed-row counts it should, and nothing else."""

from __future__ import annotations

from datetime import date

from _spark_plans import D, cases_df, cases_plan, failed, good_row, rule, rule_entry, with_rules

from contract_gate_spark.validation.engine import run_validation


def validate(spark, candidate, plan=None):
    return run_validation(spark, plan or cases_plan(), candidate)


def test_clean_batch_passes(spark, as_delta):
    report = validate(spark, as_delta(cases_df(spark, [good_row(day=1), good_row(day=2)])))
    assert report["outcome"] == "pass"
    assert failed(report) == {}
    assert report["rows"] == {"valid": 2, "invalid": 0}
    assert report["candidate"]["version"] == 0
    assert report["candidate"]["row_count"] == 2


def test_null_in_each_required_column(spark, as_delta):
    rows = [
        good_row(day=1),
        (None, D, "GGD", 1, None),
        ("NL-NH", None, "GGD", 1, None),
        ("NL-NH", date(2024, 3, 9), None, 1, None),
        ("NL-NH", date(2024, 3, 10), "GGD", None, None),
    ]
    report = validate(spark, as_delta(cases_df(spark, rows)))
    assert failed(report) == {
        "region_code.required": 1,
        "report_date.required": 1,
        "reporting_org.required": 1,
        "case_count.required": 1,
        # the not-blank and minimum predicates are NULL on a NULL value: NULL is a failure
        "region_code.not_blank": 1,
        "case_count.minimum": 1,
    }
    assert report["rows"] == {"valid": 1, "invalid": 4}
    assert report["outcome"] == "fail"


def test_negative_counts_and_invalid_status(spark, as_delta):
    rows = [
        good_row(day=1, count=-1),
        good_row(day=2, count=-100),
        good_row(day=3, status="Confirmed"),  # case matters
        good_row(day=4, status=""),
        good_row(day=5, status=None),  # status is optional
    ]
    report = validate(spark, as_delta(cases_df(spark, rows)))
    assert failed(report) == {"case_count.minimum": 2, "status.enum": 2}
    assert report["rows"] == {"valid": 1, "invalid": 4}


def test_duplicate_keys_in_groups_of_two_and_three_and_null_in_key(spark, as_delta):
    rows = [
        good_row(region="A", day=1),
        good_row(region="A", day=1),  # group of 2
        good_row(region="B", day=2),
        good_row(region="B", day=2),
        good_row(region="B", day=2),  # group of 3
        good_row(region="C", day=3),  # unique
        (None, D, "GGD", 1, None),
        (None, D, "GGD", 2, None),  # NULL key parts are distinct, as in SQL: not duplicates
        ("D", None, "GGD", 1, None),  # alone: not a duplicate
    ]
    report = validate(spark, as_delta(cases_df(spark, rows)))
    # Issue 15: key.unique was 7 in 3 groups while NULL key parts compared equal; the NULL rows are
    # still invalid, through required.
    assert failed(report) == {
        "key.unique": 5,
        "region_code.required": 2,
        "region_code.not_blank": 2,
        "report_date.required": 1,
    }
    assert rule_entry(report, "key.unique")["duplicate_groups"] == 2
    assert report["rows"] == {"valid": 1, "invalid": 8}


def test_nulls_equal_key_makes_rows_with_the_same_null_part_duplicates(spark, as_delta):
    """``nulls_distinct: false`` (ODCS ``duplicateValues`` with ``nullsDistinct: false``, DQX
    ``is_unique`` with ``nulls_distinct: false``): NULL key parts compare equal."""
    plan = cases_plan()
    plan["rules"][7]["nulls_distinct"] = False
    rows = [good_row(region="A"), good_row(region="A"), (None, D, "GGD", 1, None), (None, D, "GGD", 1, None)]
    report = validate(spark, as_delta(cases_df(spark, rows)), plan)
    assert rule_entry(report, "key.unique")["failed_rows"] == 4


def test_blank_identifiers(spark, as_delta):
    blanks = ["", "   ", "\t", "\n", "\u00a0", " \t\u00a0\n "]
    rows = [good_row(region=value, day=i + 1) for i, value in enumerate(blanks)]
    rows += [good_row(region=" NL ", day=20), good_row(region="\u00a0x", day=21)]
    report = validate(spark, as_delta(cases_df(spark, rows)))
    assert failed(report) == {"region_code.not_blank": 6}
    assert report["rows"] == {"valid": 2, "invalid": 6}


def test_empty_candidate_against_a_non_empty_rule(spark, as_delta):
    report = validate(spark, as_delta(cases_df(spark, [])))
    row_count = rule_entry(report, "dataset.row_count")
    assert row_count["measured"] == 0 and row_count["passed"] is False
    assert failed(report) == {}
    assert report["rows"] == {"valid": 0, "invalid": 0}
    assert report["outcome"] == "fail"


def test_exact_boundary_values(spark, as_delta):
    plan = with_rules(
        cases_plan(),
        rule("case_count.minimum", "minimum", ["case_count"], "case_count >= 0"),
        rule("case_count.maximum", "maximum", ["case_count"], "case_count <= 100"),
        rule("case_count.exclusive_minimum", "exclusive_minimum", ["case_count"], "case_count > -1"),
        rule("case_count.exclusive_maximum", "exclusive_maximum", ["case_count"], "case_count < 101"),
        rule("region_code.min_length", "min_length", ["region_code"], "char_length(region_code) >= 2"),
        rule("region_code.max_length", "max_length", ["region_code"], "char_length(region_code) <= 5"),
    )
    on_the_edge = [good_row(region="AB", day=1, count=0), good_row(region="ABCDE", day=2, count=100)]
    one_past = [good_row(region="A", day=3, count=-1), good_row(region="ABCDEF", day=4, count=101)]
    report = validate(spark, as_delta(cases_df(spark, on_the_edge + one_past)), plan)
    assert failed(report) == {
        "case_count.minimum": 1,
        "case_count.maximum": 1,
        "case_count.exclusive_minimum": 1,
        "case_count.exclusive_maximum": 1,
        "region_code.min_length": 1,
        "region_code.max_length": 1,
    }
    assert report["rows"] == {"valid": 2, "invalid": 2}


def test_nan_and_infinity_follow_spark_ordering(spark, as_delta):
    """Spark orders NaN above every number, +Infinity included, and NaN = NaN. The engine
    keeps exactly that meaning (the same predicate is the Delta CHECK constraint), so NaN
    passes a minimum and fails a maximum; a contract rejects NaN with its own rule."""
    plan = with_rules(
        cases_plan(),
        rule("rate.minimum", "minimum", ["rate"], "(rate IS NULL OR rate >= 0)"),
        rule("rate.maximum", "maximum", ["rate"], "(rate IS NULL OR rate <= 1000)"),
        rule("rate.not_nan", "custom_sql", ["rate"], "NOT isnan(rate)"),
    )
    plan["columns"] = [{"name": "rate", "type": "double", "nullable": True}]
    values = [0.0, 1000.0, float("nan"), float("inf"), float("-inf"), None]
    df = spark.createDataFrame([(v,) for v in values], "rate double")
    report = validate(spark, as_delta(df), plan)
    assert failed(report) == {
        "rate.minimum": 1,  # -Infinity
        "rate.maximum": 2,  # NaN and +Infinity
        "rate.not_nan": 1,  # NaN only: isnan(NULL) is false, so NULL is left to a required rule
    }


def test_percent_thresholds_just_below_and_just_above(spark, as_delta):
    """mustBeLessThan 5 percent of the rows the rule evaluated: 4 of 100 pass, 5 of 100 fail;
    with a filter, the denominator is the filtered rows only."""
    plan = with_rules(
        cases_plan(),
        rule("case_count.mostly_positive", "minimum", ["case_count"], "case_count >= 0",
             threshold={"operator": "mustBeLessThan", "value": 5, "unit": "percent"}),
        rule("status.confirmed_positive", "custom_sql", ["case_count", "status"], "case_count > 0",
             filter="status = 'confirmed'",
             threshold={"operator": "mustBeLessOrEqualTo", "value": 10, "unit": "percent"}),
    )

    def batch(negatives):
        rows = [good_row(region=f"R{i}", count=-1 if i < negatives else 1, status="confirmed" if i < 20 else "revised") for i in range(100)]
        return as_delta(cases_df(spark, rows), name=f"n{negatives}")

    def judged(report, rule_id):
        entry = rule_entry(report, rule_id)
        return entry["failed_rows"], entry["evaluated_rows"], entry["measured"], entry["passed"]

    below = validate(spark, batch(4), plan)
    assert judged(below, "case_count.mostly_positive") == (4, 100, 4, True)
    assert judged(validate(spark, batch(5), plan), "case_count.mostly_positive") == (5, 100, 5, False)
    # filtered: 2 of 20 confirmed rows = 10 % (on the limit, passes); 3 of 20 = 15 % fails
    assert judged(validate(spark, batch(2), plan), "status.confirmed_positive") == (2, 20, 10, True)
    assert judged(validate(spark, batch(3), plan), "status.confirmed_positive") == (3, 20, 15, False)
    # A threshold judges the batch; the rows that break the rule are still invalid rows.
    assert below["rows"] == {"valid": 96, "invalid": 4}


def test_a_warning_does_not_fail_the_batch(spark, as_delta):
    plan = cases_plan()
    plan["rules"][6]["severity"] = "warning"  # status.enum
    report = validate(spark, as_delta(cases_df(spark, [good_row(day=1), good_row(day=2, status="odd")])), plan)
    assert failed(report) == {"status.enum": 1}
    assert report["outcome"] == "warn"
    assert report["rows"] == {"valid": 2, "invalid": 0}


def test_a_warning_uniqueness_rule_does_not_make_rows_invalid(spark, as_delta):
    plan = cases_plan()
    plan["rules"][7]["severity"] = "warning"
    rows = [good_row(), good_row(), good_row(day=2, count=-5)]
    report = validate(spark, as_delta(cases_df(spark, rows)), plan)
    assert failed(report) == {"key.unique": 2, "case_count.minimum": 1}
    assert report["rows"] == {"valid": 2, "invalid": 1}
    assert report["outcome"] == "fail"
