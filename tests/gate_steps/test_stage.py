"""Stage freezes a landed batch once, as a Delta candidate read with the plan's types."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
from pyspark.errors import AnalysisException

from _gate_plans import case, cases_df, order, plan_for, table_rows, version_of, write_csv, write_json
from contract_gate_plan.addresses import Address
from contract_gate_plan.document import read_document
from contract_gate_plan.landing_files import LandingRefused
from contract_gate_spark.steps.stage import stage_candidate


def test_csv_landing_is_frozen_once_with_the_plans_types(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1), case("NL-UT", 1, 7)])

    staged = stage_candidate(spark, plan, "sub-1")

    assert staged["status"] == "staged"
    assert staged["version"] == 0 and staged["row_count"] == 2
    assert staged["candidate"]["path"].endswith("_contract_gate_candidates/regional_daily_cases__sub_1_" + staged["candidate"]["path"][-8:])
    frozen = spark.read.format("delta").load(staged["candidate"]["path"])
    assert dict(frozen.dtypes) == {"region_code": "string", "report_date": "date", "reporting_org": "string",
                                   "case_count": "bigint", "status": "string",
                                   "_contract_gate_unfit": "array<string>"}  # contract_gate_spark.validation.unparseable_values's marker
    assert [r._contract_gate_unfit for r in frozen.collect()] == [[], []]
    history = spark.sql(f"DESCRIBE HISTORY delta.`{staged['candidate']['path']}`").collect()
    assert [(h["version"], h["userMetadata"]) for h in history] == [(0, "sub-1")]


def test_a_retried_stage_returns_the_first_attempts_candidate_unchanged(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    landing = write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1)])
    first = stage_candidate(spark, plan, "s2")
    write_csv(landing, [case("NL-NH", 1), case("NL-NH", 2)])  # the folder changed meanwhile

    again = stage_candidate(spark, plan, "s2")

    assert again["status"] == "already_staged"
    assert (again["candidate"], again["version"], again["row_count"]) == (first["candidate"], 0, 1)
    assert version_of(spark, again["candidate"]) == 0
    assert len(table_rows(spark, again["candidate"])) == 1


def test_a_retry_after_an_attempt_that_died_in_its_write_stages_the_batch(spark, tmp_path):
    """An attempt killed in its CREATE TABLE AS SELECT (the model-based walk: a Spark Connect
    client killed while the server wrote its candidate) leaves a data file and a log folder
    without a commit; the retry of the same submission stages the batch (it was refused as
    "not a Delta table" for good), and the dead attempt's file is in no version."""
    plan = plan_for("regional_daily_cases", tmp_path)
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1), case("NL-UT", 1)])
    first = stage_candidate(spark, plan, "s3")
    folder = Path(first["candidate"]["path"])
    debris = folder.with_name(folder.name.replace("s3", "s4"))
    debris.mkdir()
    (debris / "_delta_log" / "_staged_commits").mkdir(parents=True)
    (debris / "part-00000-dead.snappy.parquet").write_bytes(next(folder.glob("part-*.parquet")).read_bytes())

    staged = stage_candidate(spark, plan, "s4")

    assert staged["candidate"]["path"] == str(debris)
    assert (staged["status"], staged["version"], staged["row_count"]) == ("staged", 0, 2)
    assert len(table_rows(spark, staged["candidate"])) == 2 and version_of(spark, staged["candidate"]) == 0


def test_json_landing_given_as_a_path_keeps_the_plans_format(spark, tmp_path):
    plan = plan_for("orders", tmp_path)
    batch = write_json(tmp_path / "drop/batch-7", [order("o1"), order("o2", 3.5)])

    staged = stage_candidate(spark, plan, "b7", landing=str(batch))

    rows = spark.read.format("delta").load(staged["candidate"]["path"])
    assert staged["row_count"] == 2
    assert dict(rows.dtypes)["order_timestamp"] == "timestamp"
    assert dict(rows.dtypes)["order_total"] == "double"


def test_a_json_candidate_frozen_under_an_earlier_version_gets_the_optional_columns_a_newer_one_adds(
        spark, tmp_path):
    """A run stopped after its stage under 1.0.0; the contract gains an optional column (1.1.0)
    and the same batch is gated again. Its candidate is the one already frozen, but read as 1.1.0
    reads a JSON batch that names no such key: the column NULL in every row, not missing (which
    would fail the schema check and quarantine a batch the new version accepts)."""
    plan = plan_for("orders", tmp_path)
    write_json(tmp_path / "lakehouse/landing/orders", [order("o1"), order("o2", 3.5)])
    first = stage_candidate(spark, plan, "j1")
    newer = copy.deepcopy(plan)
    newer.pop("fingerprint")
    newer["contract"]["version"] = "1.1.0"
    newer["columns"].append({"name": "coupon", "type": "string", "nullable": True, "classification": None,
                             "description": None, "sample_allowed": False})
    newer["columns"].append({"name": "channel", "type": "string", "nullable": False, "classification": None,
                             "description": None, "sample_allowed": False})

    again = stage_candidate(spark, read_document(newer), "j1")

    assert (again["status"], again["row_count"], again["candidate"]) == ("already_staged", 2, first["candidate"])
    assert again["version"] == 1 and version_of(spark, again["candidate"]) == 1
    rows = table_rows(spark, again["candidate"], again["version"])
    assert [r.coupon for r in rows] == [None, None]
    assert "channel" not in rows[0].asDict()  # a required column the batch lacks is still missing
    assert len(table_rows(spark, first["candidate"], 0)) == 2  # the frozen version as it was
    assert stage_candidate(spark, read_document(newer), "j1")["version"] == 1  # added once
    history = spark.sql(f"DESCRIBE HISTORY delta.`{again['candidate']['path']}`").collect()
    assert sorted((h["version"], h["userMetadata"]) for h in history) == [(0, "j1"), (1, "j1")]


def test_parquet_landing_keeps_its_own_types_for_the_schema_check(spark, tmp_path):
    plan = plan_for("meter_readings", tmp_path)
    landing = tmp_path / "lakehouse/landing/meter_readings"
    spark.createDataFrame([("M000001", 1)], "meter_id string, channel bigint").write.parquet(str(landing))

    staged = stage_candidate(spark, plan, "p1")

    assert dict(spark.read.format("delta").load(staged["candidate"]["path"]).dtypes)["channel"] == "bigint"


def test_delta_landing_is_pinned_not_copied(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    landing = tmp_path / "landing_delta"
    cases_df(spark, [case("NL-NH", 1)]).write.format("delta").save(str(landing))
    cases_df(spark, [case("NL-UT", 1)]).write.format("delta").mode("append").save(str(landing))
    address = {"kind": "path", "path": str(landing), "format": "delta"}

    staged = stage_candidate(spark, plan, "d1", landing=address)

    assert staged == {"candidate": address, "version": 1, "row_count": 2, "status": "pinned"}
    assert not (tmp_path / "lakehouse/_contract_gate_candidates").exists()


def test_relative_landing_and_candidate_paths_resolve_against_contract_gate_home(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    plan = plan_for("regional_daily_cases", None)
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1)])

    staged = stage_candidate(spark, plan, "rel")

    # the plan's relative candidate folder, resolved once against CONTRACT_GATE_HOME
    assert staged["candidate"]["path"] == str(tmp_path / "lakehouse/_contract_gate_candidates/regional_daily_cases__rel")
    assert (tmp_path / staged["candidate"]["path"] / "_delta_log").is_dir()


def test_catalog_candidates_are_tables_named_object__submission(spark, tmp_path):
    schema = f"cg_stage_{tmp_path.name[-8:].lower()}".replace("-", "_")
    spark.sql(f"CREATE DATABASE spark_catalog.{schema} LOCATION '{tmp_path}/warehouse'")
    plan = plan_for("regional_daily_cases", tmp_path)
    plan["tables"]["candidate_schema"] = {"kind": "table", "name": f"spark_catalog.{schema}", "format": "delta"}
    plan.pop("fingerprint")
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1)])
    try:
        staged = stage_candidate(spark, plan, "cat1")

        assert staged["candidate"]["name"] == f"spark_catalog.{schema}.regional_daily_cases__cat1"
        assert (staged["version"], staged["row_count"]) == (0, 1)
        assert spark.table(staged["candidate"]["name"]).count() == 1
        assert stage_candidate(spark, plan, "cat1")["status"] == "already_staged"
    finally:
        spark.sql(f"DROP DATABASE spark_catalog.{schema} CASCADE")


def test_column_names_that_need_delta_column_mapping(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    plan["columns"][0]["name"] = "region code, ISO"
    plan["delta_column_mapping"] = True
    plan["rules"] = [r for r in plan["rules"] if "region_code" not in r["columns"] and r["kind"] != "unique"]
    plan["key"] = []
    plan.pop("fingerprint")
    landing = tmp_path / "cm"
    spark.createDataFrame([("NL-NH", 1)], "`region code, ISO` string, n int").write.parquet(str(landing))

    staged = stage_candidate(spark, plan, "cm1", landing={"kind": "path", "path": str(landing), "format": "parquet"})

    properties = dict(spark.sql(f"DESCRIBE DETAIL delta.`{staged['candidate']['path']}`").first()["properties"])
    assert properties["delta.columnMapping.mode"] == "name"
    assert spark.read.format("delta").load(staged["candidate"]["path"]).columns == ["region code, ISO", "n"]


def test_a_missing_landing_fails_the_step(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    with pytest.raises(AnalysisException):
        stage_candidate(spark, plan, "nothing")


@pytest.mark.slow  # 6 s or more
def test_a_value_that_does_not_fit_is_frozen_marked_then_quarantined_never_published(spark, tmp_path):
    """A CSV count of "five": the candidate keeps the row with its marker, validation fails
    ``case_count.type`` for it, the split publishes the other rows and quarantines it."""
    from contract_gate_spark.validation.candidate import read_candidate
    from contract_gate_spark.validation.engine import run_validation
    from contract_gate_spark.steps.publish import publish
    from contract_gate_spark.steps.quarantine import quarantine

    plan = plan_for("regional_daily_cases", tmp_path, violations={"policy": "split_rows"})
    landing = write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1), case("NL-UT", 1)])
    (landing / "batch.csv").write_text((landing / "batch.csv").read_text() + "NL-FR,2024-03-01,GGD,five,final\n")
    staged = stage_candidate(spark, plan, "unfit")
    candidate = read_candidate(spark, staged["candidate"]["path"], version=staged["version"])

    report = run_validation(spark, plan, candidate, submission_id="unfit")

    assert (report["rows"]["valid"], report["rows"]["invalid"]) == (2, 1)
    assert {r["id"]: r["failed_rows"] for r in report["rules"] if r["failed_rows"]}["case_count.type"] == 1
    published = publish(spark, plan, "unfit", staged["candidate"], staged["version"], "valid", report)
    quarantined = quarantine(spark, plan, "unfit", staged["candidate"], staged["version"], report, "invalid")
    assert (published["rows"], quarantined["rows"]) == (2, 1)
    assert sorted(r.region_code for r in table_rows(spark, plan["tables"]["target"])) == ["NL-NH", "NL-UT"]
    assert "_contract_gate_unfit" not in spark.read.format("delta").load(plan["tables"]["target"]["path"]).columns
    [row] = table_rows(spark, plan["tables"]["quarantine"])
    assert row.region_code == "NL-FR" and "case_count.type" in {e.rule_id for e in row._errors}


def test_a_link_in_the_landing_is_refused_before_spark_follows_it(spark, tmp_path):
    """A link added after the batch was identified is still refused: the stage step lists the
    landing again before Spark reads it, and no candidate is written."""
    plan = plan_for("regional_daily_cases", tmp_path)
    landing = write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1)])
    elsewhere = write_csv(tmp_path / "other_team/cases", [case("XX-SECRET", 9)])
    target = next(elsewhere.glob("*.csv"))
    os.symlink(target, landing / "zz-linked.csv")

    with pytest.raises(LandingRefused, match="zz-linked.csv in landing .* is a link or a special file"):
        stage_candidate(spark, plan, "s-link")

    candidates = tmp_path / "lakehouse/_contract_gate_candidates"
    assert not candidates.exists() or not any(candidates.iterdir())


def test_the_row_count_is_read_from_the_candidates_own_commit_file_not_a_glob(spark, tmp_path):
    """The row count comes from the new candidate's first commit file, read by Spark, which
    expands glob characters: the path is escaped, so ``c[1]`` never reads the log of ``c1``."""
    from contract_gate_spark.steps.stage import _rows_created

    cases_df(spark, [case("NL-NH", 1), case("NL-UT", 1), case("NL-FR", 1)]).write.format("delta").save(str(tmp_path / "c1"))
    cases_df(spark, [case("NL-NH", 1)]).writeTo(f"delta.`{tmp_path / 'c[1]'}`").using("delta").create()

    assert _rows_created(spark, Address(kind="path", path=str(tmp_path / "c[1]"))) == 1
    assert _rows_created(spark, Address(kind="path", path=str(tmp_path / "c1"))) == 3
