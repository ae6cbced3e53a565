"""Opening candidates: Delta pinned to a version (path or catalog table), parquet, and CSV /
JSON read with the contract's types, a value that does not fit failing ``<column>.type``."""

from __future__ import annotations

import json

import pytest
from _spark_plans import cases_df, cases_plan, good_row

from contract_gate_plan.addresses import looks_like_path as is_path
from contract_gate_plan.sql_text import quote_qualified as quote_table_name
from contract_gate_plan.model import load_plan
from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.validation.diagnostics import split
from contract_gate_spark.validation.engine import run_validation


def test_delta_is_pinned_at_the_latest_version_or_the_one_asked_for(spark, tmp_path):
    path = str(tmp_path / "t")
    cases_df(spark, [good_row(day=1)]).write.format("delta").save(path)
    cases_df(spark, [good_row(day=2), good_row(day=3)]).write.format("delta").mode("append").save(path)
    latest = read_candidate(spark, path)
    assert (latest.version, latest.df.count()) == (1, 3)
    cases_df(spark, [good_row(day=4)]).write.format("delta").mode("append").save(path)
    assert latest.df.count() == 3  # pinned: a later commit does not leak in
    first = read_candidate(spark, path, version=0)
    report = run_validation(spark, cases_plan(), first)
    assert (report["candidate"]["table"], report["candidate"]["version"], report["candidate"]["row_count"]) == (path, 0, 1)


def test_a_catalog_table_is_read_at_a_version(spark, tmp_path):
    spark.sql(f"CREATE TABLE cg_candidate_test ({', '.join(['region_code string', 'report_date date', 'reporting_org string', 'case_count bigint', 'status string'])}) USING delta LOCATION '{tmp_path / 'cat'}'")
    try:
        cases_df(spark, [good_row()]).writeTo("cg_candidate_test").append()
        cases_df(spark, [good_row(day=2)]).writeTo("cg_candidate_test").append()
        candidate = read_candidate(spark, "default.cg_candidate_test", version=1)
        assert (candidate.version, candidate.df.count()) == (1, 1)
        assert read_candidate(spark, "cg_candidate_test").version == 2
    finally:
        spark.sql("DROP TABLE cg_candidate_test")


def test_csv_gets_the_contract_types_and_keeps_extra_columns(spark, tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text(
        "region_code,report_date,reporting_org,case_count,status,note\n"
        "NL,2024-03-01,GGD,5,confirmed,x\nBE,2024-03-01,GGD,-2,confirmed,y\n"
    )
    candidate = read_candidate(spark, str(path), format="csv", columns=load_plan(cases_plan()).columns)
    assert candidate.df.schema.simpleString() == (
        "struct<region_code:string,report_date:date,reporting_org:string,case_count:bigint,status:string,note:string,"
        "_contract_gate_unfit:array<string>>"
    )
    report = run_validation(spark, cases_plan(), candidate)
    assert report["schema"]["unexpected"] == ["note"]
    assert [(r["id"], r["failed_rows"]) for r in report["rules"] if r["failed_rows"]] == [("case_count.minimum", 1)]


SECRET = "ZQX-SECRET-ORG"  # a reporting_org value (the column is classified in the example)


def test_values_that_do_not_fit_their_type_fail_the_type_rule_and_are_never_printed(spark, tmp_path, capfd):
    """No coercion and no silent NULL: a count of "five", a date of "yesterday" and a count
    opened with a quote that never closes each mark their row with ``<column>.type``; the
    typed value is NULL, so the column's other rules count the row too. The report names
    rules and counts, and neither the report nor Spark's log shows the row's values."""
    path = tmp_path / "bad.csv"
    path.write_text(
        "region_code,report_date,reporting_org,case_count,status\n"
        f"NL,2024-03-01,{SECRET},five,confirmed\n"
        f"BE,yesterday,{SECRET},3,confirmed\n"
        f"DE,2024-03-02,{SECRET},\"7,confirmed\n"
        "FR,2024-03-01,GGD,4,confirmed\n"
    )
    candidate = read_candidate(spark, str(path), format="csv", columns=load_plan(cases_plan()).columns)
    report = run_validation(spark, cases_plan(), candidate)

    failed = {r["id"]: r["failed_rows"] for r in report["rules"] if r["failed_rows"]}
    assert failed == {"case_count.type": 2, "report_date.type": 1, "case_count.required": 2,
                      "case_count.minimum": 2, "report_date.required": 1}
    assert report["schema"]["ok"] is True and report["outcome"] == "fail"
    assert (report["rows"]["valid"], report["rows"]["invalid"]) == (1, 3)
    valid, invalid = split(candidate.df, cases_plan())
    assert [r.region_code for r in valid.collect()] == ["FR"]
    marked = {r.region_code: {e.rule_id for e in r._errors} for r in invalid.collect()}
    assert "case_count.type" in marked["NL"] and "report_date.type" in marked["BE"]
    output = capfd.readouterr()
    assert SECRET not in json.dumps(report) and SECRET not in output.out + output.err


def test_json_values_that_do_not_fit_are_marked_too(spark, tmp_path):
    (tmp_path / "cases.json").write_text(
        '{"region_code": "NL", "report_date": "2024-03-01", "reporting_org": "GGD", "case_count": "many", "status": "confirmed"}\n'
        '{"region_code": "BE", "report_date": "2024-03-01", "reporting_org": "GGD", "case_count": 2, "status": "confirmed"}\n'
        '{"region_code": "DE", "report_date": \n'
    )
    candidate = read_candidate(spark, str(tmp_path / "cases.json"), format="json", columns=load_plan(cases_plan()).columns)
    report = run_validation(spark, cases_plan(), candidate)
    failed = {r["id"]: r["failed_rows"] for r in report["rules"] if r["failed_rows"]}
    # the broken last record parses to nothing: record.parseable counts it, and no other rule judges it
    assert failed == {"case_count.type": 1, "record.parseable": 1, "case_count.required": 1, "case_count.minimum": 1}
    assert report["rows"]["valid"] == 1


def test_an_oversized_record_is_unparseable_only_and_sparks_own_column_never_shows(spark, tmp_path):
    """A value past the JSON parser's string limit (20 MB): the record counts once, as
    ``record.parseable``; Spark's ``_corrupt_record`` column, which its schema inference adds,
    is neither a column of the batch nor a word of the report."""
    good = {"region_code": "NL", "report_date": "2024-03-01", "reporting_org": "GGD", "case_count": 2,
            "status": "confirmed"}
    (tmp_path / "cases.json").write_text(json.dumps(good) + "\n" + json.dumps({**good, "reporting_org": "G" * 21_000_000})
                                         + "\n")
    candidate = read_candidate(spark, str(tmp_path / "cases.json"), format="json", columns=load_plan(cases_plan()).columns)
    report = run_validation(spark, cases_plan(), candidate)

    failed = {r["id"]: r["failed_rows"] for r in report["rules"] if r["failed_rows"]}
    assert failed == {"record.parseable": 1}
    assert report["schema"]["ok"] is True and report["schema"]["unexpected"] == []
    assert "_corrupt_record" not in json.dumps(report) and "_corrupt_record" not in candidate.df.columns
    assert (report["rows"]["valid"], report["rows"]["invalid"]) == (1, 1)


def test_a_json_key_no_record_names_is_null_for_an_optional_column_and_missing_for_a_required_one(spark, tmp_path):
    """JSON records have no header: an optional column (``status``) that no record names reads as
    NULL, so a batch written before the column was added passes; a required one is still missing."""
    (tmp_path / "old.json").write_text(
        '{"region_code": "NL", "report_date": "2024-03-01", "reporting_org": "GGD", "case_count": 3}\n')
    old = read_candidate(spark, str(tmp_path / "old.json"), format="json", columns=load_plan(cases_plan()).columns)
    report = run_validation(spark, cases_plan(), old)
    assert (report["schema"]["ok"], report["outcome"]) == (True, "pass")
    assert old.df.select("status").first()[0] is None
    (tmp_path / "keyless.json").write_text(
        '{"region_code": "NL", "report_date": "2024-03-01", "reporting_org": "GGD", "status": "confirmed"}\n')
    keyless = read_candidate(spark, str(tmp_path / "keyless.json"), format="json", columns=load_plan(cases_plan()).columns)
    assert run_validation(spark, cases_plan(), keyless)["schema"]["missing"] == ["case_count"]


def test_json_and_parquet(spark, tmp_path):
    (tmp_path / "cases.json").write_text(
        '{"region_code": "NL", "report_date": "2024-03-01", "reporting_org": "GGD", "case_count": 3, "status": "confirmed"}\n'
    )
    from_json = read_candidate(spark, str(tmp_path / "cases.json"), format="json", columns=load_plan(cases_plan()).columns)
    assert run_validation(spark, cases_plan(), from_json)["schema"]["ok"] is True
    cases_df(spark, [good_row()]).write.parquet(str(tmp_path / "p"))
    from_parquet = read_candidate(spark, str(tmp_path / "p"), format="parquet")
    assert run_validation(spark, cases_plan(), from_parquet)["outcome"] == "pass"
    with pytest.raises(ValueError, match="Delta"):
        read_candidate(spark, str(tmp_path / "p"), format="parquet", version=1)


def test_paths_and_table_names():
    assert is_path("lakehouse/orders") and is_path("s3://b/x") and is_path("./x")
    assert not is_path("main.sales.orders")
    assert quote_table_name("main.sales.orders") == "`main`.`sales`.`orders`"
    assert quote_table_name("`odd.name`.t") == "`odd.name`.`t`"
    with pytest.raises(ValueError):
        quote_table_name("a..b")
