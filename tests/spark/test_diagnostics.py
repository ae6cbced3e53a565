"""Row diagnostics and the split: several rules per row, every row of a duplicate group
marked, warnings apart from errors, and valid + invalid always equal to the input."""

from __future__ import annotations

import pytest
from _spark_plans import cases_df, cases_plan, good_row

from contract_gate_spark.validation.diagnostics import DIAGNOSTIC_TYPE, diagnose, split
from contract_gate_spark.validation.engine import run_validation

ROWS = [
    good_row(region="A", day=1),
    good_row(region="A", day=1),
    good_row(region="A", day=1),  # a group of 3
    good_row(region="B", day=2, count=-1, status="bogus"),  # two errors
    good_row(region="C", day=3),
    good_row(region="D", day=4, status="odd"),  # a warning only
]


def plan():
    p = cases_plan()
    p["rules"][6]["severity"] = "warning"  # status.enum
    return p


def ids(entries):
    return sorted(entry["rule_id"] for entry in entries)


def test_each_row_carries_every_rule_it_breaks(spark):
    df = cases_df(spark, ROWS)
    diagnosed = diagnose(df, plan())
    assert diagnosed.schema["_errors"].dataType.simpleString() == DIAGNOSTIC_TYPE
    rows = diagnosed.orderBy("region_code").collect()
    assert [ids(r["_errors"]) for r in rows] == [
        ["key.unique"], ["key.unique"], ["key.unique"], ["case_count.minimum"], [], [],
    ]
    assert [ids(r["_warnings"]) for r in rows] == [[], [], [], ["status.enum"], [], ["status.enum"]]
    entry = rows[0]["_errors"][0]
    assert (entry["columns"], entry["message"]) == (["region_code", "report_date"], "unique check key.unique failed")


def test_split_keeps_every_row_exactly_once_and_matches_the_report(spark, as_delta):
    candidate = as_delta(cases_df(spark, ROWS))
    valid, invalid = split(candidate.df, plan())
    assert (valid.count(), invalid.count()) == (2, 4)
    assert valid.columns == candidate.df.columns
    everything = valid.unionByName(invalid.drop("_errors", "_warnings"))
    assert sorted(everything.collect()) == sorted(candidate.df.collect())
    report = run_validation(spark, plan(), candidate)
    assert report["rows"] == {"valid": 2, "invalid": 4}


def test_split_refuses_a_candidate_it_cannot_check(spark):
    df = cases_df(spark, [good_row()]).drop("case_count")
    with pytest.raises(ValueError, match="schema check failed"):
        split(df, plan())
