"""The JVM-free Delta reader (``contract_gate.delta_tables``) against tables real Spark + Delta
wrote, checked against Spark's own answer: what the freshness check reads from a target's log."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from _freshness_helpers import CASES_SCHEMA, plan_for, publish_cases, record_decisions

from contract_gate.delta_tables import StatsMissing, UnreadableTable, column_max, live_files, open_table
from contract_gate.freshness.latest import latest_accepted, latest_from_delta_log
from contract_gate_plan.model import Plan, compiled_plan

D = dt.date
UTC = dt.timezone.utc


def create_cases(spark, path, properties: dict[str, str], partitioned: bool = False) -> None:
    rendered = ", ".join(f"'{k}' = '{v}'" for k, v in properties.items())
    spark.sql(f"CREATE TABLE delta.`{path}` ({CASES_SCHEMA}) USING DELTA "
              + ("PARTITIONED BY (report_date) " if partitioned else "") + f"TBLPROPERTIES ({rendered})")


def spark_max(spark, path) -> dt.date:
    return spark.read.format("delta").load(str(path)).agg({"report_date": "max"}).first()[0]


@pytest.mark.slow  # 8 s or more
def test_checkpoint_plus_commits_with_removes_and_maintenance(spark, tmp_path):
    path = tmp_path / "cases"
    create_cases(spark, path, {"delta.checkpointInterval": "3"})
    publish_cases(spark, path, "sub-1", [D(2024, 1, 1)])
    publish_cases(spark, path, "sub-2", [D(2024, 1, 5)])
    spark.conf.set("spark.databricks.delta.checkpoint.partSize", "2")  # a multi-part checkpoint at v3
    try:
        publish_cases(spark, path, "sub-3", [D(2024, 1, 9), D(2024, 1, 3)])
    finally:
        spark.conf.unset("spark.databricks.delta.checkpoint.partSize")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE report_date = DATE'2024-01-09'")  # v4: a remove
    spark.sql(f"OPTIMIZE delta.`{path}`")  # v5: compacts the live rows into one file, no submission id

    log_files = sorted(p.name for p in (path / "_delta_log").iterdir())
    assert "00000000000000000003.checkpoint.0000000001.0000000002.parquet" in log_files
    table = open_table(str(path))
    assert table.version() == 5
    assert column_max(table, "report_date") == spark_max(spark, path) == D(2024, 1, 5)
    assert live_files(table).num_rows == 1
    latest = latest_from_delta_log(_plan(path))
    assert (latest.value, latest.submission_id, latest.target_version) == (D(2024, 1, 5), "sub-3", 5)

    # Without the checkpoint hint the folder is listed: the same answer.
    (path / "_delta_log" / "_last_checkpoint").unlink()
    assert latest_from_delta_log(_plan(path)) == latest
    # A hint naming a checkpoint that is gone: deltalake refuses the log, so it is unreadable
    # (the check then falls back to the decision table) rather than misread.
    (path / "_delta_log" / "_last_checkpoint").write_text(json.dumps({"version": 4, "size": 3}))
    with pytest.raises(UnreadableTable, match="_last_checkpoint"):
        open_table(str(path))


def test_submission_id_found_before_the_checkpoint(spark, tmp_path):
    path = tmp_path / "cases"
    publish_cases(spark, path, "sub-1", [D(2024, 1, 1)])
    spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.checkpointInterval' = '2')")  # v1
    spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.appendOnly' = 'false')")  # v2, checkpoint
    for version in (3, 4, 5):  # more untagged commits than the first history window holds
        spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('comment.v{version}' = 'x')")
    assert (path / "_delta_log" / "00000000000000000002.checkpoint.parquet").exists()
    latest = latest_from_delta_log(_plan(path))
    assert (latest.submission_id, latest.target_version) == ("sub-1", 5)


def test_a_missing_target_has_no_value_yet(tmp_path):
    latest = latest_from_delta_log(_plan(tmp_path / "never_written"))
    assert (latest.value, latest.submission_id, latest.target_version) == (None, None, None)
    assert latest.note == "the target table does not exist yet"


def test_column_mapping_partitions_and_deletion_vectors(spark, tmp_path):
    mapped = tmp_path / "mapped"
    create_cases(spark, mapped, {"delta.columnMapping.mode": "name", "delta.minReaderVersion": "2",
                                 "delta.minWriterVersion": "5", "delta.enableDeletionVectors": "true"})
    publish_cases(spark, mapped, "sub-1", [D(2024, 2, 1), D(2024, 2, 7), D(2024, 1, 30)])
    spark.sql(f"DELETE FROM delta.`{mapped}` WHERE report_date = DATE'2024-01-30'")  # a deletion vector
    schema = json.loads(open_table(str(mapped)).schema().to_json())
    [report_date] = [field for field in schema["fields"] if field["name"] == "report_date"]
    assert report_date["metadata"]["delta.columnMapping.physicalName"].startswith("col-")
    assert latest_from_delta_log(_plan(mapped)).value == D(2024, 2, 7)

    partitioned = tmp_path / "partitioned"
    create_cases(spark, partitioned, {"delta.dataSkippingNumIndexedCols": "0"}, partitioned=True)
    publish_cases(spark, partitioned, "sub-1", [D(2024, 2, 1), D(2024, 2, 9)])
    assert latest_from_delta_log(_plan(partitioned)).value == D(2024, 2, 9)


def test_timestamps_are_utc_whatever_the_writer_zone(spark, tmp_path):
    path = tmp_path / "orders"
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        spark.sql(f"CREATE TABLE delta.`{path}` (id string, ts timestamp, wall timestamp_ntz) USING DELTA")
        spark.sql(f"INSERT INTO delta.`{path}` VALUES ('a', TIMESTAMP'2024-03-01 20:30:00.250', "
                  "TIMESTAMP_NTZ'2024-03-01 20:30:00')")
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    commit = (path / "_delta_log" / "00000000000000000001.json").read_text()
    stats = json.loads(next(json.loads(line)["add"]["stats"] for line in commit.splitlines() if '"add"' in line))
    assert stats["maxValues"]["ts"].endswith("-05:00")  # the writer's offset is in the statistics
    assert latest_from_delta_log(_plan(path, "ts", "timestamp")).value == dt.datetime(2024, 3, 2, 1, 30, 0, 250000,
                                                                                       tzinfo=UTC)
    assert latest_from_delta_log(_plan(path, "wall", "timestamp_ntz")).value == dt.datetime(2024, 3, 1, 20, 30,
                                                                                             tzinfo=UTC)


def test_statistics_column_setting(spark, tmp_path):
    """report_date is the 2nd column: with 1 indexed column it has no statistics, unless the
    publish step names it in delta.dataSkippingStatsColumns."""
    without = tmp_path / "without"
    create_cases(spark, without, {"delta.dataSkippingNumIndexedCols": "1"})
    publish_cases(spark, without, "sub-1", [D(2024, 2, 1)])
    with pytest.raises(StatsMissing, match="no statistics for column 'report_date'"):
        column_max(open_table(str(without)), "report_date")

    pinned = tmp_path / "pinned"
    create_cases(spark, pinned, {"delta.dataSkippingNumIndexedCols": "1",
                                 "delta.dataSkippingStatsColumns": "report_date"})
    publish_cases(spark, pinned, "sub-1", [D(2024, 2, 1)])
    assert column_max(open_table(str(pinned)), "report_date") == D(2024, 2, 1)


def test_a_file_whose_column_is_all_null_bounds_nothing(spark, tmp_path):
    path = tmp_path / "cases"
    publish_cases(spark, path, "sub-1", [D(2024, 2, 1)])
    spark.sql(f"INSERT INTO delta.`{path}` VALUES ('NL-01', NULL, 'org', 1, 'final')")
    assert column_max(open_table(str(path)), "report_date") == D(2024, 2, 1)


def test_falls_back_to_accepted_decisions(spark, home):
    """No usable statistics for the SLA column, so the decision table answers; the later-dated
    quarantined submission does not count."""
    plan = plan_for(home)
    target = home / "lakehouse" / "regional_daily_cases"
    create_cases(spark, target, {"delta.dataSkippingNumIndexedCols": "1"})
    publish_cases(spark, target, "sub-1", [D(2024, 2, 1)])
    other = plan_for(home, base="meter_readings")
    record_decisions(plan, ("sub-1", "published", dt.datetime(2024, 2, 2, 8), "2024-02-01", 1, None),
                     ("sub-2", "quarantined", dt.datetime(2024, 2, 3, 8), "2024-02-02", None, None),
                     ("sub-3", "split", dt.datetime(2024, 2, 4, 8), "2024-02-03", 2, None))
    record_decisions(other, ("sub-9", "published", dt.datetime(2024, 2, 5, 8), "2024-02-05", 7, None))
    latest = latest_accepted(plan)
    assert (latest.value, latest.submission_id, latest.target_version, latest.source) == (
        D(2024, 2, 3), "sub-3", 2, "decisions")
    assert "no statistics for column 'report_date'" in latest.note


def _plan(path, column: str = "report_date", column_type: str = "date") -> Plan:
    """A plan with only what the Delta log reader uses: the freshness column and the target."""
    return compiled_plan({"fingerprint": "sha256:test", "contract": {"id": "c", "version": "1.0.0"}, "object": "c",
                          "columns": [], "key": [], "rules": [], "schema_policy": "strict",
                          "freshness": {"column": column, "column_type": column_type, "max_age_seconds": 86400},
                          "tables": {"target": {"kind": "path", "path": str(path), "format": "delta"}}})
