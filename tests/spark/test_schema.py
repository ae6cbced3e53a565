"""Schema first, with zero Spark actions: missing, unexpected and mistyped columns, exact
type strings, and rules on broken columns reported not_evaluated while the others run."""

from __future__ import annotations

import pytest
from _spark_plans import D, cases_plan, failed, rule, rule_entry, with_rules
from pyspark.ml.linalg import VectorUDT
from pyspark.sql.types import StructField, StructType

from contract_gate_spark.validation.engine import run_validation
from contract_gate_plan.model import load_plan
from contract_gate_plan.spark_types import TypeSyntaxError, spark_type
from contract_gate_spark.validation.schema_compare import check_schema


def statuses(report):
    return {r["id"]: (r["status"], r["reason"]) for r in report["rules"] if r["status"] != "evaluated"}


def test_missing_column_blocks_only_its_rules(spark, as_delta):
    df = spark.createDataFrame(
        [("A", D, "GGD", "confirmed"), ("B", D, "GGD", "bogus")],
        "region_code string, report_date date, reporting_org string, status string",
    )
    report = run_validation(spark, cases_plan(), as_delta(df))
    assert report["schema"] == {
        "ok": False, "policy": "strict", "missing": ["case_count"], "unexpected": [], "type_mismatches": [],
    }
    assert statuses(report) == {
        "case_count.required": ("not_evaluated", "column case_count is missing"),
        "case_count.minimum": ("not_evaluated", "column case_count is missing"),
    }
    assert failed(report) == {"status.enum": 1}
    assert report["outcome"] == "fail"


@pytest.mark.parametrize(
    ("policy", "ok", "outcome"), [("strict", False, "fail"), ("additive", True, "pass")]
)
def test_extra_column_strict_and_additive(spark, as_delta, policy, ok, outcome):
    df = spark.createDataFrame(
        [("A", D, "GGD", 1, "confirmed", "x")],
        "region_code string, report_date date, reporting_org string, case_count bigint, status string, note string",
    )
    report = run_validation(spark, cases_plan(schema_policy=policy), as_delta(df, name=policy))
    assert report["schema"]["unexpected"] == ["note"]
    assert report["schema"]["ok"] is ok
    assert report["outcome"] == outcome
    assert failed(report) == {}


def test_wrong_types_are_reported_exactly_and_never_coerced(spark, as_delta):
    plan = cases_plan()
    plan["columns"].append({"name": "amount", "type": "decimal(10,2)", "nullable": True})
    plan["rules"].append(rule("amount.minimum", "minimum", ["amount"], "(amount IS NULL OR amount >= 0)"))
    df = spark.createDataFrame(
        [("A", "2024-03-01", "GGD", 1, "confirmed", None)],
        "region_code string, report_date string, reporting_org string, case_count int, status string, amount decimal(10,3)",
    )
    report = run_validation(spark, plan, as_delta(df))
    assert report["schema"]["type_mismatches"] == [
        {"column": "report_date", "expected": "date", "actual": "string"},
        {"column": "case_count", "expected": "bigint", "actual": "int"},
        {"column": "amount", "expected": "decimal(10,2)", "actual": "decimal(10,3)"},
    ]
    assert set(statuses(report)) == {
        "report_date.required", "case_count.required", "case_count.minimum", "amount.minimum", "key.unique",
    }
    assert rule_entry(report, "key.unique")["reason"] == "column report_date has the wrong type"
    # the rules on sound columns still ran
    assert rule_entry(report, "region_code.required")["passed"] is True
    assert report["outcome"] == "fail"


def test_nested_types_compare_on_the_exact_type_string():
    plan = load_plan(cases_plan(columns=[
        {"name": "tags", "type": "ARRAY<STRING>", "nullable": True},
        {"name": "attrs", "type": "map<string, long>", "nullable": True},
        {"name": "geo", "type": "struct<lat: double, lon: double>", "nullable": True},
    ]))
    same = StructType.fromDDL("tags array<string>, attrs map<string,bigint>, geo struct<lat:double,lon:double>")
    assert check_schema(plan, same).ok
    other = StructType.fromDDL("tags array<int>, attrs map<string,int>, geo struct<lat:double,lon:float>")
    assert [m["column"] for m in check_schema(plan, other).type_mismatches] == ["tags", "attrs", "geo"]


def test_a_struct_field_of_any_name_compares_as_the_plan_writes_it(spark):
    """Spark's simpleString prints ``a;b`` bare; the schema check reads the candidate's type as
    the plan writes it (quoted), so the same field matches and another one does not."""
    plan = load_plan(cases_plan(columns=[{"name": "doc", "type": "struct<`^[0-5]$`:struct<`a;b`:string>>",
                                          "nullable": True}]))
    assert check_schema(plan, StructType.fromDDL("doc struct<`^[0-5]$`:struct<`a;b`:string>>")).ok
    vector = StructType([StructField("doc", StructType([StructField("v", VectorUDT())]))])  # its JSON needs a session
    assert check_schema(plan, vector).type_mismatches[0]["actual"] == (
        "struct<v:struct<type:tinyint,size:int,indices:array<int>,values:array<double>>>")  # not a crash
    other = StructType.fromDDL("doc struct<`^[0-5]$`:struct<`a b`:string>>")
    assert check_schema(plan, other).type_mismatches == [
        {"column": "doc", "expected": "struct<`^[0-5]$`:struct<`a;b`:string>>",
         "actual": "struct<`^[0-5]$`:struct<`a b`:string>>"}]


@pytest.mark.parametrize(
    ("written", "simple"),
    [("BIGINT", "bigint"), ("long", "bigint"), ("Integer", "int"), ("decimal", "decimal(10,0)"),
     ("DECIMAL(12, 4)", "decimal(12,4)"), ("varchar(20)", "string"), ("timestamp_ntz", "timestamp_ntz"),
     ("array<struct<`a_b`:int>>", "array<struct<a_b:int>>"), ("map<string, long>", "map<string,bigint>")],
)
def test_contract_types_are_read_as_spark_prints_them(written, simple):
    """One grammar of Spark types for both sides (contract_gate_plan.spark_types)."""
    assert spark_type(written) == simple


def test_a_struct_field_name_other_than_a_plain_word_stays_back_quoted():
    """simpleString would print ``a b`` bare (ambiguous, and no DDL): the type text quotes it."""
    assert spark_type("array<struct<`a b`:int,`x``y`:long,plain:int>>") == "array<struct<`a b`:int,`x``y`:bigint,plain:int>>"
    with pytest.raises(TypeSyntaxError):
        spark_type("struct<:int>")


def test_depth_schema_runs_no_spark_job(spark):
    df = spark.createDataFrame([("A", D, "GGD", 1, "x")], "region_code string, report_date date, reporting_org string, case_count int, status string")
    sc = spark.sparkContext
    sc.setJobGroup("schema-depth", "schema only")
    try:
        report = run_validation(spark, cases_plan(), df, depth="schema")
        jobs = sc.statusTracker().getJobIdsForGroup("schema-depth")
    finally:
        sc.setJobGroup("", "")
    assert jobs == []
    assert report["schema"]["type_mismatches"] == [{"column": "case_count", "expected": "bigint", "actual": "int"}]
    assert {r["status"] for r in report["rules"]} == {"not_evaluated"}
    assert report["rows"] == {"valid": None, "invalid": None}
    assert report["outcome"] == "fail"


def test_a_rule_whose_predicate_does_not_analyse_is_not_evaluated_and_fails(spark):
    plan = with_rules(cases_plan(), rule("bad.predicate", "custom_sql", ["case_count"], "no_such_column > 0"),
                      rule("not.boolean", "custom_sql", ["case_count"], "case_count + 1"),
                      rule("case_count.minimum", "minimum", ["case_count"], "case_count >= 0"))
    df = spark.createDataFrame([("A", D, "GGD", -1, None)], "region_code string, report_date date, reporting_org string, case_count bigint, status string")
    report = run_validation(spark, plan, df)
    assert rule_entry(report, "bad.predicate")["status"] == "not_evaluated"
    assert "not boolean" in rule_entry(report, "not.boolean")["reason"]
    assert failed(report) == {"case_count.minimum": 1}
    assert report["outcome"] == "fail"
