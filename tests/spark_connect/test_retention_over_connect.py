"""Retention (``contract_gate_spark.steps.retention``) over a real Spark Connect server with Delta: old path
candidates are found by the engine's file listing and removed through the storage the client
shares with the server, with no JVM in the client; another contract's candidate and an unowned one
in the same folder are left alone, and old quarantined rows are deleted. The client runs in its own
process (``_connect_client.py cleanup``); the folders are then looked at here."""

from __future__ import annotations

import pytest

from _client_process import run_client


@pytest.mark.slow  # the Spark Connect server, a JVM of its own
def test_retention_drops_old_path_candidates_and_quarantined_rows_over_spark_connect(spark_connect_server, tmp_path):
    found = run_client("cleanup", spark_connect_server.url, tmp_path)

    # nothing is old yet: nothing goes
    assert found["now"] == {"candidates_dropped": [], "quarantine_rows_deleted": 0}
    later = found["later"]
    assert sorted(path.rsplit("/", 1)[1].rsplit("_", 1)[0] for path in later["candidates_dropped"]) == [
        "regional_daily_cases__old_1", "regional_daily_cases__old_2"]
    assert later["quarantine_rows_deleted"] == 1 and found["quarantined_after"] == 0
    # the folders are gone from the shared storage; the other two were not this contract's
    assert found["left"] == ["regional_daily_cases__foreign", "regional_daily_cases__unowned"]
    candidates = tmp_path / "lakehouse" / "_contract_gate_candidates"
    assert sorted(path.name for path in candidates.iterdir()) == found["left"]
