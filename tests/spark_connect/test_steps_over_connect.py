"""The gate's steps over a real Spark Connect server with Delta, through the ``spark_connect``
runner: stage, validate, batch_keys, publish, quarantine and split each run in the client process
(``_connect_client.py``, a child: a process is a Connect client or a classic driver, not both);
the tables are then read here with ``deltalake``, without Spark."""

from __future__ import annotations

import pytest
from _client_process import run_client
from deltalake import DeltaTable


def _table(address: dict) -> DeltaTable:
    return DeltaTable(address["path"])


def _history(address: dict) -> list[tuple[int, str, str | None]]:
    return sorted((h["version"], h["operation"], h.get("userMetadata")) for h in _table(address).history())


def _column(address: dict, name: str) -> list:
    return sorted(_table(address).to_pyarrow_table().column(name).to_pylist())


@pytest.mark.slow  # five gate jobs: 1.5-2 min on two shared cores
def test_stage_validate_publish_quarantine_and_split_over_spark_connect(spark_connect_server, tmp_path):
    found = run_client("steps", spark_connect_server.url, tmp_path)
    cases, orders = found["tables"]["cases"], found["tables"]["orders"]

    # a good batch: staged (candidate version 0), passed, published in one tagged commit; a retry
    # of the publish is skipped by Delta's idempotent write and says so (its session had a commit
    # version of its own: the tagged clone must not take it for this write's)
    assert found["good"]["staged"]["version"] == 0 and found["good"]["staged"]["row_count"] == 2
    assert found["good"]["outcome"] == "pass"
    assert {k: found["good"]["result"][k] for k in ("status", "rows", "target_version_before",
                                                    "target_version_after")} == {
        "status": "published", "rows": 2, "target_version_before": 0, "target_version_after": 1}
    assert found["again"]["status"] == "already_published" and found["again"]["target_version_after"] == 1

    # a bad batch: rejected, quarantined whole; the target did not move
    assert found["bad"]["outcome"] == "fail" and found["bad"]["step"] == "quarantine"
    assert found["bad"]["result"] == {"rows": 2, "status": "quarantined", "version": 1}
    assert found["bad_again"] == {"rows": 2, "status": "already_quarantined", "version": 1}  # Delta skipped it
    assert _history(cases["target"]) == [(0, "CREATE TABLE", None), (1, "MERGE", "cases-good")]
    assert _column(cases["target"], "region_code") == ["R1", "R2"]
    assert _history(cases["quarantine"]) == [(0, "CREATE TABLE", None), (1, "WRITE", "cases-bad")]
    assert _column(cases["quarantine"], "region_code") == ["R3", "R4"]
    assert set(_column(cases["quarantine"], "_submission_id")) == {"cases-bad"}

    # split_rows: the valid rows published, the invalid one quarantined, from the same version
    split = found["split"]["result"]
    assert found["split"]["outcome"] == "fail"
    assert (split["publish"]["status"], split["publish"]["rows"], split["publish"]["target_version_after"]) == (
        "published", 3, 1)
    assert split["quarantine"] == {"rows": 1, "status": "quarantined", "version": 1}
    assert _column(orders["target"], "order_id") == ["O0", "O1", "O2"]
    assert _column(orders["quarantine"], "order_id") == ["X1"]
    assert _history(orders["target"])[-1] == (1, "MERGE", "orders-mixed")
    assert _history(orders["quarantine"])[-1] == (1, "WRITE", "orders-mixed")


@pytest.mark.slow  # two gates at once through the Spark Connect server
def test_two_gates_publishing_through_one_server_at_once_tag_only_their_own_commit(
        spark_connect_server, tmp_path):
    found = run_client("concurrent", spark_connect_server.url, tmp_path)
    target = found["tables"]["target"]
    results = found["results"]

    assert {s: r.get("status") for s, r in results.items()} == {"twin-a": "published", "twin-b": "published"}, (
        results, (tmp_path / "client-concurrent.log").read_text(encoding="utf-8")[-6000:])
    history = _history(target)
    assert [h[0] for h in history] == [0, 1, 2] and history[0] == (0, "CREATE TABLE", None)
    # each commit carries its own submission id, and holds exactly that submission's rows
    by_submission = {metadata: version for version, _, metadata in history[1:]}
    assert set(by_submission) == {"twin-a", "twin-b"}
    for submission, rows in (("twin-a", 3), ("twin-b", 2)):
        assert results[submission]["target_version_after"] == by_submission[submission]
        assert results[submission]["rows"] == rows
    table = _table(target)
    for submission, prefix in (("twin-a", "A"), ("twin-b", "B")):
        version = by_submission[submission]
        table.load_as_version(version)
        added = set(table.to_pyarrow_table().column("region_code").to_pylist())
        table.load_as_version(version - 1)
        added -= set(table.to_pyarrow_table().column("region_code").to_pylist())
        assert added and {region[0] for region in added} == {prefix}, (submission, added)
    assert _column(target, "region_code") == ["A0", "A1", "A2", "B0", "B1"]
