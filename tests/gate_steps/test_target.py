"""The target is created from the plan's DDL in one commit, and refused — with every
difference listed — once it has drifted from the plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _gate_plans import case, cases_df, plan_for, version_of
from contract_gate_plan.addresses import Address
from contract_gate_plan.ownership import claim_statement
from contract_gate_plan.table_ddl import create_table_statements, expected_constraints
from contract_gate_spark.steps.target import TargetDriftError, ensure_target


def _constraints(spark, path):
    properties = spark.sql(f"DESCRIBE DETAIL delta.`{path}`").first()["properties"]
    return {k[len("delta.constraints."):]: v for k, v in properties.items() if k.startswith("delta.constraints.")}


def test_a_missing_target_is_created_with_the_plans_constraints(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    target = plan["tables"]["target"]

    assert ensure_target(spark, plan) is True
    assert ensure_target(spark, plan) is False  # a second call finds it compatible

    assert set(_constraints(spark, target["path"])) == set(expected_constraints(plan))
    schema = spark.read.format("delta").load(target["path"]).schema
    assert [(f.name, f.nullable) for f in schema.fields][:2] == [("region_code", False), ("report_date", False)]
    assert version_of(spark, target) == 0  # one commit: no creator can leave it half-made
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{target['path']}`").first()
    assert detail["minWriterVersion"] >= 3  # the version that enforces CHECK constraints
    assert detail["properties"]["delta.dataSkippingStatsColumns"] == "`report_date`,`region_code`"
    with pytest.raises(Exception, match="cg_case_count_minimum"):
        cases_df(spark, [case("NL-NH", 1, -1)]).write.format("delta").mode("append").save(target["path"])
    cases_df(spark, [case("NL-NH", 4)]).write.format("delta").mode("append").save(target["path"])
    log = Path(target["path"], "_delta_log", f"{version_of(spark, target):020d}.json").read_text()
    [stats] = [json.loads(json.loads(line)["add"]["stats"]) for line in log.splitlines() if '"add"' in line]
    assert stats["maxValues"] == {"report_date": "2024-03-04", "region_code": "NL-NH"}  # freshness reads these


def test_a_drifted_target_is_refused_with_every_difference(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    path = plan["tables"]["target"]["path"]
    cases_df(spark, [case("NL-NH", 1)]).withColumnRenamed("status", "state").write.format("delta").save(path)
    spark.sql(f"ALTER TABLE delta.`{path}` ADD CONSTRAINT extra CHECK (case_count < 1000)")
    spark.sql(claim_statement(f"delta.`{path}`", "regional_daily_cases", "target"))  # ours, but drifted
    before = version_of(spark, plan["tables"]["target"])

    with pytest.raises(TargetDriftError) as refused:
        ensure_target(spark, plan)

    differences = refused.value.differences
    assert "column 'status' is missing from the table" in differences
    assert "column 'state' is in the table but not in the plan" in differences
    assert "column 'region_code' is nullable in the table, the plan says NOT NULL" in differences
    assert "constraint 'extra' is on the table but not in the plan" in differences
    assert sum(d.startswith("constraint") and "missing" in d for d in differences) == len(expected_constraints(plan))
    assert all(d in str(refused.value) for d in differences)
    assert version_of(spark, plan["tables"]["target"]) == before


def test_a_target_with_data_and_a_missing_constraint_is_refused_not_altered(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    path = plan["tables"]["target"]["path"]
    statements = create_table_statements(plan)
    for statement in statements[:-1]:
        spark.sql(statement)
    cases_df(spark, [case("NL-NH", 1)]).write.format("delta").mode("append").save(path)

    with pytest.raises(TargetDriftError, match="is missing from the table"):
        ensure_target(spark, plan)


def test_a_twins_table_that_resolves_late_is_waited_for_not_refused(spark, tmp_path, monkeypatch):
    """Seen in CI with three publishes racing: the history already shows a twin's creation
    commit while ``SHOW TBLPROPERTIES`` still says the table is missing. The drift check waits."""
    from contract_gate_spark.steps import target as target_step

    plan = plan_for("regional_daily_cases", tmp_path)
    ensure_target(spark, plan)  # the twin's table, committed
    real_require_owner = target_step.require_owner
    missing = Address(kind="path", path=str(tmp_path / "nothing_here"))
    calls = []

    def still_resolving_once(spark, plan, address, role):
        calls.append(address)
        # the first read gets Delta's own "missing table" error, as the racing thread did
        return real_require_owner(spark, plan, missing if len(calls) == 1 else address, role)

    monkeypatch.setattr(target_step, "require_owner", still_resolving_once)
    versions = version_of(spark, plan["tables"]["target"])

    assert ensure_target(spark, plan) is False
    assert len(calls) == 2
    assert version_of(spark, plan["tables"]["target"]) == versions


def test_a_table_that_never_resolves_is_not_waited_for_forever(spark, tmp_path):
    from pyspark.errors import AnalysisException

    from contract_gate_plan.model import load_plan
    from contract_gate_spark.steps.target import _differences_once_readable

    plan = load_plan(plan_for("regional_daily_cases", tmp_path))
    missing = Address(kind="path", path=str(tmp_path / "nothing_here"))

    with pytest.raises(AnalysisException, match="DELTA_MISSING_DELTA_TABLE"):
        _differences_once_readable(spark, plan, missing, seconds=0.5)
