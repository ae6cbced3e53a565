"""The JVM-free log reader against tables real Spark + Delta wrote, checked against Spark's own answer."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from _freshness_helpers import CASES_SCHEMA, plan_for, publish_cases, record_decisions

from contract_gate.freshness.delta_log import DeltaLog, DeltaLogError
from contract_gate.freshness.delta_stats import StatsMissing, max_business_value
from contract_gate.freshness.latest import latest_accepted, latest_from_delta_log

D = dt.date


def create_cases(spark, path, properties: dict[str, str], partitioned: bool = False) -> None:
    rendered = ", ".join(f"'{k}' = '{v}'" for k, v in properties.items())
    spark.sql(f"CREATE TABLE delta.`{path}` ({CASES_SCHEMA}) USING DELTA "
              + ("PARTITIONED BY (report_date) " if partitioned else "") + f"TBLPROPERTIES ({rendered})")


def spark_max(spark, path) -> dt.date:
    return spark.read.format("delta").load(str(path)).agg({"report_date": "max"}).first()[0]


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
    snapshot = DeltaLog(str(path)).snapshot()
    assert (snapshot.version, snapshot.checkpoint_version) == (5, 3)
    assert max_business_value(snapshot, "report_date", "date") == spark_max(spark, path) == D(2024, 1, 5)
    assert len(snapshot.files) == 1
    latest = latest_from_delta_log(_plan(path))
    assert (latest.submission_id, latest.target_version) == ("sub-3", 5)

    # Without the hint the folder is listed; a hint naming missing files is not trusted.
    (path / "_delta_log" / "_last_checkpoint").unlink()
    assert DeltaLog(str(path)).snapshot().checkpoint_version == 3
    (path / "_delta_log" / "_last_checkpoint").write_text(json.dumps({"version": 4, "size": 3}))
    again = DeltaLog(str(path)).snapshot()
    assert (again.version, again.checkpoint_version, len(again.files)) == (5, 3, len(snapshot.files))


def test_submission_id_found_before_the_checkpoint(spark, tmp_path):
    path = tmp_path / "cases"
    publish_cases(spark, path, "sub-1", [D(2024, 1, 1)])
    spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.checkpointInterval' = '2')")  # v1
    spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.appendOnly' = 'false')")  # v2, checkpoint
    snapshot = DeltaLog(str(path)).snapshot()
    assert snapshot.checkpoint_version == 2 and snapshot.commits == []
    assert latest_from_delta_log(_plan(path)).submission_id == "sub-1"


def test_column_mapping_partitions_and_deletion_vectors(spark, tmp_path):
    mapped = tmp_path / "mapped"
    create_cases(spark, mapped, {"delta.columnMapping.mode": "name", "delta.minReaderVersion": "2",
                                 "delta.minWriterVersion": "5", "delta.enableDeletionVectors": "true"})
    publish_cases(spark, mapped, "sub-1", [D(2024, 2, 1), D(2024, 2, 7), D(2024, 1, 30)])
    spark.sql(f"DELETE FROM delta.`{mapped}` WHERE report_date = DATE'2024-01-30'")  # a deletion vector
    snapshot = DeltaLog(str(mapped)).snapshot()
    assert snapshot.physical_name("report_date").startswith("col-")
    assert max_business_value(snapshot, "report_date", "date") == D(2024, 2, 7)

    partitioned = tmp_path / "partitioned"
    create_cases(spark, partitioned, {"delta.dataSkippingNumIndexedCols": "0"}, partitioned=True)
    publish_cases(spark, partitioned, "sub-1", [D(2024, 2, 1), D(2024, 2, 9)])
    snapshot = DeltaLog(str(partitioned)).snapshot()
    assert max_business_value(snapshot, "report_date", "date") == D(2024, 2, 9)


def test_timestamps_are_utc_whatever_the_writer_zone(spark, tmp_path):
    path = tmp_path / "orders"
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        spark.sql(f"CREATE TABLE delta.`{path}` (id string, ts timestamp, wall timestamp_ntz) USING DELTA")
        spark.sql(f"INSERT INTO delta.`{path}` VALUES ('a', TIMESTAMP'2024-03-01 20:30:00.250', "
                  "TIMESTAMP_NTZ'2024-03-01 20:30:00')")
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    stats = json.loads(DeltaLog(str(path)).snapshot().files[0].stats)
    assert stats["maxValues"]["ts"].endswith("-05:00")  # the writer's offset is in the statistics
    snapshot = DeltaLog(str(path)).snapshot()
    utc = dt.timezone.utc
    assert max_business_value(snapshot, "ts", "timestamp") == dt.datetime(2024, 3, 2, 1, 30, 0, 250000, tzinfo=utc)
    assert max_business_value(snapshot, "wall", "timestamp_ntz") == dt.datetime(2024, 3, 1, 20, 30, tzinfo=utc)


def test_statistics_column_setting(spark, tmp_path):
    """report_date is the 2nd column: with 1 indexed column it has no statistics, unless the
    publish step names it in delta.dataSkippingStatsColumns."""
    without = tmp_path / "without"
    create_cases(spark, without, {"delta.dataSkippingNumIndexedCols": "1"})
    publish_cases(spark, without, "sub-1", [D(2024, 2, 1)])
    with pytest.raises(StatsMissing, match="no statistics for column 'report_date'"):
        max_business_value(DeltaLog(str(without)).snapshot(), "report_date", "date")

    pinned = tmp_path / "pinned"
    create_cases(spark, pinned, {"delta.dataSkippingNumIndexedCols": "1",
                                 "delta.dataSkippingStatsColumns": "report_date"})
    publish_cases(spark, pinned, "sub-1", [D(2024, 2, 1)])
    assert max_business_value(DeltaLog(str(pinned)).snapshot(), "report_date", "date") == D(2024, 2, 1)


def test_falls_back_to_accepted_decisions(spark, home):
    """No usable statistics (here: a v2-checkpoint table this reader refuses to guess at), so the
    decision table answers; the later-dated quarantined submission does not count."""
    plan = plan_for(home)
    target = home / "lakehouse" / "regional_daily_cases"
    publish_cases(spark, target, "sub-1", [D(2024, 2, 1)])
    spark.sql(f"ALTER TABLE delta.`{target}` SET TBLPROPERTIES ('delta.checkpointPolicy' = 'v2')")
    with pytest.raises(DeltaLogError, match="v2Checkpoint"):
        DeltaLog(str(target)).snapshot()
    other = plan_for(home, base="meter_readings")
    record_decisions(plan, ("sub-1", "published", dt.datetime(2024, 2, 2, 8), "2024-02-01", 1, None),
                     ("sub-2", "quarantined", dt.datetime(2024, 2, 3, 8), "2024-02-02", None, None),
                     ("sub-3", "split", dt.datetime(2024, 2, 4, 8), "2024-02-03", 2, None))
    record_decisions(other, ("sub-9", "published", dt.datetime(2024, 2, 5, 8), "2024-02-05", 7, None))
    latest = latest_accepted(plan)
    assert (latest.value, latest.submission_id, latest.target_version, latest.source) == (
        D(2024, 2, 3), "sub-3", 2, "decisions")
    assert "v2Checkpoint" in latest.note


def _plan(path) -> dict:
    return {"freshness": {"column": "report_date", "column_type": "date"},
            "tables": {"target": {"kind": "path", "path": str(path), "format": "delta"}}}
