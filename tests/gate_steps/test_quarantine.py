"""Quarantine keeps rejected rows with rule ids (never values) once per submission; retention
removes old candidates and old quarantined rows."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from _gate_plans import case, cases_df, plan_for, table_rows, version_of, write_csv
from contract_gate_spark.steps.quarantine import quarantine
from contract_gate_spark.steps.retention import cleanup
from contract_gate_spark.steps.stage import stage_candidate

COLUMNS = ["region_code", "report_date", "reporting_org", "case_count", "status",
           "_errors", "_warnings", "_submission_id", "_contract_version", "_quarantined_at"]


def _candidate(spark, tmp_path, name, rows, df=None):
    address = {"kind": "path", "path": str(tmp_path / "candidates" / name), "format": "delta"}
    (df if df is not None else cases_df(spark, rows)).write.format("delta").save(address["path"])
    return address


def _errors(row):
    return sorted(entry["rule_id"] for entry in row["_errors"])


def test_invalid_rows_are_quarantined_with_their_rule_ids_once(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    table = plan["tables"]["quarantine"]
    candidate = _candidate(spark, tmp_path, "s1", [case("NL-NH", 1), case("NL-UT", 1, -4), case("NL-FR", 1, status="x")])

    result = quarantine(spark, plan, "s1", candidate, 0, report=None, rows="invalid")

    assert result == {"status": "quarantined", "rows": 2, "version": 1}  # 0 is the table's creation
    rows = sorted(table_rows(spark, table), key=lambda r: r["region_code"])
    assert spark.read.format("delta").load(table["path"]).columns == COLUMNS
    assert [(r["region_code"], _errors(r)) for r in rows] == [
        ("NL-FR", ["status.enum"]), ("NL-UT", ["case_count.minimum"])]
    assert {(r["_submission_id"], r["_contract_version"]) for r in rows} == {("s1", "1.0.0")}
    assert all(entry["columns"] and entry["message"] for r in rows for entry in r["_errors"])

    again = quarantine(spark, plan, "s1", candidate, 0, report=None, rows="invalid")

    assert again == {"status": "already_quarantined", "rows": 2, "version": 1}
    assert version_of(spark, table) == 1 and len(table_rows(spark, table)) == 2


def test_a_rejected_batch_carries_its_batch_level_failures_on_every_row(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    candidate = _candidate(spark, tmp_path, "s2", [case("NL-NH", 1), case("NL-NH", 1, 3)])
    report = {"schema": {"ok": True}, "rules": [
        {"id": "submission_not_empty", "kind": "row_count", "scope": "dataset", "columns": [],
         "severity": "error", "passed": False},
        {"id": "case_count.minimum", "kind": "minimum", "scope": "row", "columns": ["case_count"],
         "severity": "error", "passed": True}]}

    result = quarantine(spark, plan, "s2", candidate, 0, report=report)

    assert result["rows"] == 2
    rows = table_rows(spark, plan["tables"]["quarantine"])
    assert [_errors(r) for r in rows] == [["key.unique", "submission_not_empty"]] * 2


def test_a_batch_with_the_wrong_schema_is_kept_as_far_as_the_plan_goes(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    broken = spark.createDataFrame([("NL-NH", "2024-03-01", "lots", "extra")],
                                   "region_code string, report_date string, case_count string, surprise string")
    candidate = _candidate(spark, tmp_path, "s3", None, df=broken)
    report = {"schema": {"ok": False, "policy": "strict", "missing": ["reporting_org", "status"],
                         "unexpected": ["surprise"], "type_mismatches": [
                             {"column": "report_date", "expected": "date", "actual": "string"},
                             {"column": "case_count", "expected": "bigint", "actual": "string"}]},
              "rules": []}

    quarantine(spark, plan, "s3", candidate, 0, report=report)

    [row] = table_rows(spark, plan["tables"]["quarantine"])
    assert (row["region_code"], str(row["report_date"]), row["case_count"], row["status"]) == (
        "NL-NH", "2024-03-01", None, None)
    schema_entry = next(e for e in row["_errors"] if e["rule_id"] == "schema")
    assert sorted(schema_entry["columns"]) == ["case_count", "report_date", "reporting_org", "status", "surprise"]


@pytest.mark.slow  # 8 s or more
def test_retention_drops_old_candidates_and_old_quarantined_rows(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1, -1)])
    staged = stage_candidate(spark, plan, "old")
    quarantine(spark, plan, "old", staged["candidate"], 0, report=None, rows="invalid")
    other_object = tmp_path / "lakehouse/_contract_gate_candidates/orders__x"
    spark.range(1).write.format("delta").save(str(other_object))

    assert cleanup(spark, plan) == {"candidates_dropped": [], "quarantine_rows_deleted": 0}

    later = datetime.now(timezone.utc) + timedelta(days=91)
    result = cleanup(spark, plan, now=later)

    assert [path.rsplit("/", 1)[1] for path in result["candidates_dropped"]] == ["regional_daily_cases__old"]
    assert result["quarantine_rows_deleted"] == 1
    assert not (tmp_path / staged["candidate"]["path"]).exists()
    assert other_object.exists()  # another contract's candidate is not this contract's business
    assert table_rows(spark, plan["tables"]["quarantine"]) == []
