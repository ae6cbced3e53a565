"""Publish: one atomic, tagged, idempotent commit of exactly the validated candidate version."""

from __future__ import annotations

from datetime import date

import pytest

from _gate_plans import case, cases_df, plan_for, table_rows, version_of
from contract_gate_plan.addresses import Address
from contract_gate_plan.model import load_plan
from contract_gate_spark.steps.history import find_submission
from contract_gate_spark.steps.publish import (
    KEYS_ACROSS_BATCHES,
    ConstraintViolation,
    PublishRefused,
    keys_across_batches,
    publish,
    read_pinned,
)


def _candidate(spark, tmp_path, name: str, rows: list[tuple]) -> dict:
    address = {"kind": "path", "path": str(tmp_path / "candidates" / name), "format": "delta"}
    cases_df(spark, rows).write.format("delta").save(address["path"])
    return address


def _history(spark, address):
    rows = spark.sql(f"DESCRIBE HISTORY delta.`{address['path']}`").orderBy("version").collect()
    return [(r["version"], r["operation"], r["userMetadata"]) for r in rows]


def test_append_publishes_once_tagged_with_the_submission(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    target = plan["tables"]["target"]
    candidate = _candidate(spark, tmp_path, "s1", [case("NL-NH", 1), case("NL-UT", 2, 9)])

    result = publish(spark, plan, "s1", candidate, 0)

    created = version_of(spark, target) - 1  # CREATE TABLE + constraints, then the publish
    assert result == {
        "status": "published", "target_version_before": created, "target_version_after": created + 1,
        "rows": 2, "mode": "append", "attempts": 1, "latest_business_date": "2024-03-02",
    }
    assert _history(spark, target)[-1] == (created + 1, "MERGE", "s1")
    assert sorted(r["region_code"] for r in table_rows(spark, target)) == ["NL-NH", "NL-UT"]

    again = publish(spark, plan, "s1", candidate, 0)

    assert again["status"] == "already_published"
    assert again["target_version_after"] == created + 1 and again["rows"] == 2
    assert version_of(spark, target) == created + 1
    assert len(table_rows(spark, target)) == 2


@pytest.mark.slow  # 6 s or more
def test_a_retry_after_another_submissions_commit_finds_its_own_further_back(spark, tmp_path):
    """After a write the step looks at the newest commit first; a retry whose commit is no
    longer the newest (another batch published since) finds it further back in the history."""
    plan = plan_for("regional_daily_cases", tmp_path)
    target = plan["tables"]["target"]
    first = _candidate(spark, tmp_path, "s1", [case("NL-NH", 1)])
    published = publish(spark, plan, "s1", first, 0)
    publish(spark, plan, "s2", _candidate(spark, tmp_path, "s2", [case("NL-UT", 2)]), 0)
    latest = version_of(spark, target)

    again = publish(spark, plan, "s1", first, 0)

    assert again["status"] == "already_published"
    assert again["target_version_after"] == published["target_version_after"] == latest - 1
    assert version_of(spark, target) == latest
    assert sorted(r["region_code"] for r in table_rows(spark, target)) == ["NL-NH", "NL-UT"]


def test_delta_itself_skips_a_second_commit_of_the_same_submission(spark, tmp_path):
    """The history check is the fast path; Delta's txnAppId/txnVersion is the guarantee."""
    from contract_gate_spark.steps import publish as module

    plan = plan_for("regional_daily_cases", tmp_path)
    target = plan["tables"]["target"]
    candidate = _candidate(spark, tmp_path, "s1", [case("NL-NH", 1)])
    publish(spark, plan, "s1", candidate, 0)
    published = version_of(spark, target)

    typed = load_plan(plan)
    session = module.tagged_session(spark, typed, "s1")
    rows = read_pinned(session, typed, Address.of(candidate), 0).select(*[c.name for c in typed.columns])
    # the skipped MERGE writes nothing and leaves no commit version in its session: how the step
    # tells already_published apart
    assert module._commit(session, typed, rows, typed.tables.target, "replace_keys") == 0
    assert module.own_commit_version(session) is None

    assert version_of(spark, target) == published
    assert len(table_rows(spark, target)) == 1


def test_the_pinned_version_is_published_not_the_latest(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    candidate = _candidate(spark, tmp_path, "landing", [case("NL-NH", 1)])
    cases_df(spark, [case("NL-UT", 1)]).write.format("delta").mode("append").save(candidate["path"])
    report = {"candidate": {"table": candidate["path"], "version": 0}, "submission_id": "s1", "outcome": "pass"}

    result = publish(spark, plan, "s1", candidate, 0, report=report)

    assert result["rows"] == 1
    assert [r["region_code"] for r in table_rows(spark, plan["tables"]["target"])] == ["NL-NH"]


def test_a_report_about_another_version_or_a_rejection_is_refused(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    candidate = _candidate(spark, tmp_path, "c", [case("NL-NH", 1)])

    with pytest.raises(PublishRefused, match="validated version 1"):
        publish(spark, plan, "s1", candidate, 0, report={"candidate": {"version": 1}, "outcome": "pass"})
    with pytest.raises(PublishRefused, match="rejected"):
        publish(spark, plan, "s1", candidate, 0, report={"candidate": {"version": 0}, "outcome": "fail"})
    assert find_submission(spark, plan["tables"]["target"], "s1") is None


@pytest.mark.slow  # 6 s or more
def test_append_rejects_keys_the_target_already_holds_and_writes_nothing(spark, tmp_path):
    """No pre-check in publish (the validation job made it, and a concurrent publish can add
    keys after any check): the MERGE fails on the first match, atomically."""
    plan = plan_for("regional_daily_cases", tmp_path)
    target = plan["tables"]["target"]
    publish(spark, plan, "s1", _candidate(spark, tmp_path, "s1", [case("NL-NH", 1), case("NL-UT", 1)]), 0)
    before = version_of(spark, target)
    second = _candidate(spark, tmp_path, "s2", [case("NL-NH", 1, 99), case("NL-UT", 1), case("NL-FR", 1)])

    result = publish(spark, plan, "s2", second, 0)

    assert result["status"] == "rejected"
    assert result["rules"] == [{"id": KEYS_ACROSS_BATCHES, "kind": "unique_across_batches", "scope": "target",
                                "columns": ["region_code", "report_date"], "severity": "error",
                                "failed_rows": 2, "passed": False}]
    assert (result["target_version_before"], result["target_version_after"]) == (before, before)
    assert version_of(spark, target) == before
    assert len(table_rows(spark, target)) == 2


def test_the_key_check_ignores_a_submissions_own_earlier_publish(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    candidate = _candidate(spark, tmp_path, "s1", [case("NL-NH", 1)])
    rows = spark.read.format("delta").load(candidate["path"])
    assert keys_across_batches(spark, plan, rows, "s1") == 0
    publish(spark, plan, "s1", candidate, 0)

    assert keys_across_batches(spark, plan, rows) == 1
    assert keys_across_batches(spark, plan, rows, "s1") == 0


@pytest.mark.slow  # 8 s or more
def test_replace_keys_replaces_in_one_commit_and_keeps_history(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path, publication={"mode": "replace_keys"})
    target = plan["tables"]["target"]
    publish(spark, plan, "s1", _candidate(spark, tmp_path, "s1", [case("NL-NH", 1, 5), case("NL-UT", 1, 6)]), 0)
    first = version_of(spark, target)

    result = publish(spark, plan, "fix", _candidate(spark, tmp_path, "fix", [case("NL-NH", 1, 50), case("NL-FR", 1, 7)]), 0)

    assert result["status"] == "published" and result["rows"] == 2
    assert version_of(spark, target) == first + 1
    now = {(r["region_code"], r["case_count"]) for r in table_rows(spark, target)}
    assert now == {("NL-NH", 50), ("NL-UT", 6), ("NL-FR", 7)}
    was = {(r["region_code"], r["case_count"]) for r in table_rows(spark, target, first)}
    assert was == {("NL-NH", 5), ("NL-UT", 6)}


def test_valid_rows_come_from_the_engines_split_of_the_same_version(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    candidate = _candidate(spark, tmp_path, "s1", [
        case("NL-NH", 1), case("NL-UT", 1, -4), case("NL-FR", 1, status="maybe"), case("NL-FR", 2)])

    result = publish(spark, plan, "s1", candidate, 0, rows="valid")

    assert result["rows"] == 2
    assert {(r["region_code"], r["report_date"]) for r in table_rows(spark, plan["tables"]["target"])} == {
        ("NL-NH", date(2024, 3, 1)), ("NL-FR", date(2024, 3, 2))}


def test_target_constraints_are_the_last_line_of_defence_and_leak_no_values(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    candidate = _candidate(spark, tmp_path, "bad", [case("NL-NH", 1, -123456789)])

    with pytest.raises(ConstraintViolation) as refused:
        publish(spark, plan, "bad", candidate, 0)

    assert "cg_case_count_minimum" in str(refused.value)
    assert "123456789" not in str(refused.value) and refused.value.__cause__ is None
    assert find_submission(spark, plan["tables"]["target"], "bad") is None
    assert table_rows(spark, plan["tables"]["target"]) == []


def test_a_plan_without_a_key_appends(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    plan["key"] = []
    plan["rules"] = [r for r in plan["rules"] if r["kind"] not in ("unique", "unique_across_batches")]  # as compiled
    plan.pop("fingerprint")
    candidate = _candidate(spark, tmp_path, "k", [case("NL-NH", 1), case("NL-NH", 1)])

    assert publish(spark, plan, "k", candidate, 0)["rows"] == 2
    assert publish(spark, plan, "k", candidate, 0)["status"] == "already_published"
    assert [c[1:] for c in _history(spark, plan["tables"]["target"])][-1] == ("WRITE", "k")
    assert len(table_rows(spark, plan["tables"]["target"])) == 2


@pytest.mark.slow  # 6 s or more
def test_column_names_that_need_column_mapping_publish_and_quarantine(spark, tmp_path):
    from _gate_plans import mapped_plan
    from contract_gate_spark.steps.quarantine import quarantine
    from contract_gate_spark.steps.stage import stage_candidate

    plan = mapped_plan(tmp_path)
    schema = "`order id` string, `amount {EUR}, net` double"
    spark.createDataFrame([("o1", 2.5), ("o2", -1.0)], schema).write.parquet(str(tmp_path / "landing"))
    staged = stage_candidate(spark, plan, "m1")

    published = publish(spark, plan, "m1", staged["candidate"], 0, rows="valid")
    quarantined = quarantine(spark, plan, "m1", staged["candidate"], 0, report=None, rows="invalid")

    assert (published["rows"], quarantined["rows"]) == (1, 1)
    target = spark.read.format("delta").load(plan["tables"]["target"]["path"])
    assert target.columns == ["order id", "amount {EUR}, net"] and target.count() == 1
    [row] = table_rows(spark, plan["tables"]["quarantine"])
    assert (row["order id"], [e["rule_id"] for e in row["_errors"]]) == ("o2", ["amount.minimum"])
    assert publish(spark, plan, "m1", staged["candidate"], 0, rows="valid")["status"] == "already_published"
