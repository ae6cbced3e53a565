"""The decision log at scale (issue 18): concurrent gates in separate OS processes lose no
decision and never fail to record; the table is laid out by contract so that conflicts,
writes and reads stay with one submission or one contract; the retention DAG's upkeep keeps
the log bounded while time travel over the retention window keeps working."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from datetime import timedelta

import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from _decision_writers import T0, decision, decisions_plan, record_one, record_submissions, run_at_once, run_upkeep, store
from contract_gate import decisions
from contract_gate.decisions.delta_path import SCHEMA, DeltaPathDecisionStore, migrate_layout
from contract_gate.freshness.decision_log import contract_decisions, read_decisions
from contract_gate_plan.model import Plan
from contract_gate_plan.ownership import owner_properties


def _table_path(tmp_path) -> str:
    return str(tmp_path / "decisions")


def _plan(path: str, contract_id: str = "c0") -> Plan:
    return decisions_plan(path, contract_id)


def _commit_infos(path: str) -> list[dict]:
    log = os.path.join(path, "_delta_log")
    infos = []
    for name in sorted(n for n in os.listdir(log) if n.endswith(".json")):
        with open(os.path.join(log, name)) as commit:
            infos += [json.loads(line)["commitInfo"] for line in commit if '"commitInfo"' in line]
    return infos


@pytest.mark.slow
def test_sixteen_processes_record_different_submissions_and_none_fails(tmp_path):
    path = _table_path(tmp_path)
    store(path).record(decision("setup", "c0"))  # the table exists before the gates start
    contracts = [f"c{i}" for i in range(4)]  # four workers per contract: conflicts within one too
    work = {worker: [(contracts[worker % 4], f"w{worker:02d}-{n:02d}") for n in range(25)] for worker in range(16)}

    results = run_at_once(record_submissions, [(path, worker, submissions) for worker, submissions in work.items()])

    outcomes = [outcome for _, worker_outcomes in results for outcome in worker_outcomes]
    assert [o for o in outcomes if o[0] != "ok"] == []
    assert sorted(o[2] for o in outcomes) == sorted(s for subs in work.values() for _, s in subs)
    stored = store(path).records()
    counts = Counter((d.contract_id, d.submission_id) for d in stored)
    assert len(stored) == 16 * 25 + 1 and max(counts.values()) == 1
    assert set(counts) == {("c0", "setup"), *((c, s) for subs in work.values() for c, s in subs)}
    assert all(d.final and d.outcome == "published" for d in stored)


@pytest.mark.slow
def test_records_and_the_daily_upkeep_at_once_lose_nothing(tmp_path):
    path = _table_path(tmp_path)
    for n in range(10):
        store(path).record(decision(f"seed{n}", f"c{n % 2}"))
    work = {worker: [(f"c{(worker + n) % 2}", f"w{worker}-{n:02d}") for n in range(10)] for worker in range(8)}

    results = run_at_once(record_submissions, [(path, worker, submissions) for worker, submissions in work.items()],
                          others=[(run_upkeep, (path, 99, ["c0", "c1"], 4))])

    [upkeep] = [r for r in results if r[0] == 99]
    assert upkeep[1] == "ok", upkeep
    assert sum(upkeep[2]) >= 10  # at least the seeds were compacted, while the gates wrote
    outcomes = [o for r in results if r[0] != 99 for o in r[1]]
    assert [o for o in outcomes if o[0] != "ok"] == []
    counts = Counter((d.contract_id, d.submission_id) for d in store(path).records())
    assert set(counts) == {*((f"c{n % 2}", f"seed{n}") for n in range(10)),
                           *((c, s) for subs in work.values() for c, s in subs)}
    assert max(counts.values()) == 1


@pytest.mark.slow  # eight processes at once
def test_eight_processes_racing_one_submission_leave_one_final_record_and_all_are_told(tmp_path):
    path = _table_path(tmp_path)
    store(path).record(decision("other", "orders"))
    racers = [(path, worker, decision("twin", "orders", "published" if worker % 2 else "quarantined",
                                      run_id=f"run-{worker}", rows_published=worker))
              for worker in range(8)]

    results = run_at_once(record_one, racers)

    assert [r for r in results if r[1] != "ok"] == []
    told = {json.dumps(r[2], sort_keys=True) for r in results}
    assert len(told) == 1
    [final] = [d for d in store(path).records(submission_id="twin") if d.final]
    assert len(store(path).records(submission_id="twin")) == 1
    assert final.as_dict() == results[0][2]
    assert final.run_id in {f"run-{w}" for w in range(8)}


@pytest.mark.slow  # eight processes at once
def test_the_gate_beats_recovery_when_both_record_one_submission_at_once(tmp_path):
    path = _table_path(tmp_path)
    store(path).record(decision("other", "orders"))
    racers = [(path, worker, decision("late", "orders", "published", run_id=f"run-{worker}") if worker % 2 else
               decision("late", "orders", "published", source="recovery", reason="recovered"))
              for worker in range(8)]

    results = run_at_once(record_one, racers)

    assert [r for r in results if r[1] != "ok"] == []
    [final] = store(path).records(submission_id="late")
    assert (final.source, final.final) == ("gate", True) and final.run_id in {f"run-{w}" for w in range(1, 8, 2)}
    gate_told = {r[2]["run_id"] for r in results if r[0] % 2}
    assert gate_told == {final.run_id}  # every gate writer is told the gate record that stands


def test_the_table_is_partitioned_by_contract_and_each_merge_names_its_submission(tmp_path):
    path = _table_path(tmp_path)
    decisions_store = store(path)
    decisions_store.record(decision("s1", "orders"))
    decisions_store.record(decision("s2", "orders", "failed", run_id="r1"))

    table = DeltaTable(path)
    assert table.metadata().partition_columns == ["contract_id"]
    configuration = table.metadata().configuration
    assert configuration["delta.dataSkippingStatsColumns"] == "submission_id"
    assert configuration["delta.logRetentionDuration"] == configuration["delta.deletedFileRetentionDuration"]
    predicates = [info["operationParameters"]["predicate"] for info in _commit_infos(path)
                  if info.get("operation") == "MERGE"]
    assert predicates == ["contract_id = 'orders' AND submission_id = 's1' AND final",
                          "contract_id = 'orders' AND submission_id = 's2'"]
    assert [f.split("/")[-2] for f in table.file_uris()] == ["contract_id=orders"] * 2


def test_quotes_in_contract_and_submission_ids_stay_literals(tmp_path):
    path = _table_path(tmp_path)
    decisions_store = store(path)
    hostile = "x' OR true OR 'y"
    decisions_store.record(decision("s1", "orders"))
    stored = decisions_store.record(decision("s1", hostile, "quarantined"))
    decisions_store.record(decision("s1' OR '1'='1", "orders", "quarantined"))

    assert (stored.contract_id, stored.outcome) == (hostile, "quarantined")
    assert decisions_store.final("s1", "orders").outcome == "published"
    assert sorted(d.submission_id for d in decisions_store.records(contract_id="orders")) == ["s1", "s1' OR '1'='1"]
    assert [r["contract_id"] for r in contract_decisions(_plan(path, hostile))] == [hostile]


def test_a_recovered_record_is_still_replaced_by_the_gate_inside_a_compacted_file(tmp_path):
    path = _table_path(tmp_path)
    decisions_store = store(path)
    decisions_store.record(decision("early", "orders"))
    decisions_store.record(decision("s1", "orders", source="recovery"))
    decisions_store.upkeep("orders")  # both rows now share one file

    stored = decisions_store.record(decision("s1", "orders", "split", rule_failures={"r": 1}, failed_rules=["r"]))

    assert (stored.outcome, stored.source) == ("split", "gate")
    assert sorted((d.submission_id, d.outcome, d.source) for d in decisions_store.records(contract_id="orders")) == [
        ("early", "published", "gate"), ("s1", "split", "gate")]


def test_upkeep_compacts_one_contract_and_keeps_time_travel_over_the_window(tmp_path):
    path = _table_path(tmp_path)
    decisions_store = store(path)
    for n in range(12):
        decisions_store.record(decision(f"s{n}", f"c{n % 3}"))
    before = DeltaTable(path)
    rows_before = sorted(before.to_pyarrow_table().column("submission_id").to_pylist())

    done = decisions.upkeep_decisions(_plan(path, "c0"))

    after = DeltaTable(path)
    by_partition = Counter(f.split("/")[-2] for f in after.file_uris())
    assert by_partition == {"contract_id=c0": 1, "contract_id=c1": 4, "contract_id=c2": 4}
    assert (done["files_removed"], done["files_added"]) == (4, 1)
    assert sorted(after.to_pyarrow_table().column("submission_id").to_pylist()) == rows_before
    old = DeltaTable(path, version=before.version())  # time travel to before the compaction
    assert sorted(old.to_pyarrow_table().column("submission_id").to_pylist()) == rows_before
    assert len(old.file_uris()) == 12


def test_upkeep_deletes_log_entries_and_files_older_than_the_window_and_nothing_newer(tmp_path):
    path = _table_path(tmp_path)
    decisions_store = DeltaPathDecisionStore({"kind": "path", "path": path}, properties={"delta.checkpointInterval": "4"})
    for n in range(6):
        decisions_store.record(decision(f"s{n}", "c0"))
    aged = DeltaTable(path).version()
    partition = os.path.join(path, "contract_id=c0")
    orphan = os.path.join(partition, "part-00000-left-by-a-crashed-writer.parquet")
    shutil.copy(os.path.join(partition, sorted(os.listdir(partition))[0]), orphan)
    three_days_ago = time.time() - 3 * 24 * 3600  # the window is two days
    for folder in (os.path.join(path, "_delta_log"), partition):
        for name in os.listdir(folder):
            os.utime(os.path.join(folder, name), (three_days_ago, three_days_ago))
    for n in range(6, 9):  # recent commits, one of them reaches a checkpoint
        decisions_store.record(decision(f"s{n}", "c0"))
    recent = aged + 1

    done = decisions_store.upkeep("c0")  # compacts: the six aged files are removed only now

    log = os.path.join(path, "_delta_log")
    kept = sorted(int(n[:20]) for n in os.listdir(log) if n.endswith(".json"))
    checkpoints = sorted(int(n[:20]) for n in os.listdir(log) if ".checkpoint." in n)
    # the log now starts at the checkpoint the window's oldest commit builds on
    assert 0 < kept[0] == checkpoints[0] <= aged and kept[-1] == DeltaTable(path).version()
    with pytest.raises(Exception):  # noqa: B017 - deltalake's error type for a version aged out
        DeltaTable(path, version=kept[0] - 1).to_pyarrow_table()
    assert not os.path.exists(orphan) and done["files_vacuumed"] == 1
    assert len(DeltaTable(path, version=recent).to_pyarrow_table()) == 7  # inside the window, files kept
    assert sorted(d.submission_id for d in decisions_store.records(contract_id="c0")) == [f"s{n}" for n in range(9)]


def _copy_without_files(path: str, copy: str, doomed) -> str:
    """A copy of the table at ``path`` whose data files for which ``doomed(file)`` holds are
    deleted: a reader that opened one of them fails, so a read that works never opened one."""
    shutil.copytree(path, copy)
    for folder, _, names in os.walk(copy):
        for name in names:
            if name.endswith(".parquet") and "_delta_log" not in folder and doomed(os.path.join(folder, name)):
                os.remove(os.path.join(folder, name))
    return copy


def test_readers_open_only_the_files_of_the_contracts_asked_for(tmp_path):
    path = _table_path(tmp_path)
    decisions_store = store(path)
    for n in range(9):
        decisions_store.record(decision(f"s{n}", f"c{n % 3}"))
    only_c1 = _copy_without_files(path, str(tmp_path / "only_c1"), lambda file: "contract_id=c1" not in file)
    no_c1 = _copy_without_files(path, str(tmp_path / "no_c1"), lambda file: "contract_id=c1" in file)

    rows = contract_decisions(_plan(only_c1, "c1"))
    both = read_decisions(no_c1, ["c0", "c2"])

    assert sorted(r["submission_id"] for r in rows) == ["s1", "s4", "s7"]
    assert {r["contract_id"] for r in rows} == {"c1"}
    assert {c: sorted(r["submission_id"] for r in found) for c, found in both.items()} == {
        "c0": ["s0", "s3", "s6"], "c2": ["s2", "s5", "s8"]}
    with pytest.raises(Exception, match="contract_id=c1"):  # noqa: B017 - deltalake's error for a missing file
        read_decisions(no_c1, ["c1"])  # the check can fail: a file it needs is gone


def test_status_reads_the_newest_decisions_of_each_contract_across_compacted_and_new_files(tmp_path):
    path = _table_path(tmp_path)
    decisions_store = store(path)
    for n in range(8):
        decisions_store.record(decision(f"s{n}", f"c{n % 2}", decided_at=T0 + timedelta(minutes=n)))
    decisions_store.upkeep("c0")  # c0: one compacted file; c1: four small ones
    decisions_store.record(decision("s8", "c0", decided_at=T0 + timedelta(minutes=8)))

    latest = read_decisions(path, ["c0", "c1"], limit=2)

    assert {c: [r["submission_id"] for r in rows] for c, rows in latest.items()} == {
        "c0": ["s8", "s6"], "c1": ["s7", "s5"]}


def test_a_table_of_the_earlier_layout_keeps_working_and_migrates_in_one_commit(tmp_path):
    path = _table_path(tmp_path)
    old = DeltaTable.create(path, SCHEMA, name="contract_gate_decisions")  # unpartitioned, as before
    old.alter.set_table_properties(owner_properties(None, "decisions"), raise_if_not_exists=False)
    decisions_store = DeltaPathDecisionStore({"kind": "path", "path": path})
    for n in range(6):
        decisions_store.record(decision(f"s{n}", f"c{n % 2}"))
    assert decisions_store.record(decision("s1", "c1", "quarantined")).outcome == "published"
    only_c1 = _copy_without_files(path, str(tmp_path / "only_c1"),
                                  lambda file: set(pq.read_table(file).column("contract_id").to_pylist()) != {"c1"})
    kept = [name for _, _, names in os.walk(only_c1) for name in names if name.endswith(".parquet")]
    assert len(DeltaTable(only_c1).file_uris()) == 6 and len(kept) == 3  # the log still lists the three gone
    # the files' contract_id statistics prune the other three: the read never opens them
    assert sorted(r["submission_id"] for r in contract_decisions(_plan(only_c1, "c1"))) == ["s1", "s3", "s5"]
    decisions_store.upkeep("c1")
    unpartitioned = DeltaTable(path).version()

    migrated = migrate_layout({"kind": "path", "path": path})

    table = DeltaTable(path)
    assert migrated == {"rows": 6, "version": unpartitioned + 1, "migrated": True}
    assert table.metadata().partition_columns == ["contract_id"]
    assert table.metadata().configuration["contract_gate.role"] == "decisions"
    assert sorted(d.submission_id for d in decisions_store.records()) == [f"s{n}" for n in range(6)]
    assert len(DeltaTable(path, version=unpartitioned).to_pyarrow_table()) == 6
    assert migrate_layout({"kind": "path", "path": path})["migrated"] is False
    assert decisions_store.record(decision("s6", "c0")).submission_id == "s6"


def test_records_and_upkeep_leave_every_file_owner_only_without_walking_the_table(tmp_path, monkeypatch):
    import contract_gate_plan.restricted

    path = _table_path(tmp_path)
    walks = []
    monkeypatch.setattr("contract_gate.decisions.delta_path.restrict_tree", lambda folder: walks.append(folder))
    previous = os.umask(0)  # the most open umask: deltalake's files come out 0666
    try:
        decisions_store = DeltaPathDecisionStore({"kind": "path", "path": path}, properties={"delta.checkpointInterval": "3"})
        for n in range(7):
            decisions_store.record(decision(f"s{n}", f"c{n % 2}"))
        decisions_store.upkeep("c0")
    finally:
        os.umask(previous)

    modes = {(os.path.isdir(os.path.join(folder, name)), os.stat(os.path.join(folder, name)).st_mode & 0o777)
             for folder, subfolders, files in os.walk(path) for name in [*subfolders, *files]}
    assert modes == {(True, contract_gate_plan.restricted.FOLDER_MODE), (False, contract_gate_plan.restricted.FILE_MODE)}
    assert any(".checkpoint." in name for name in os.listdir(os.path.join(path, "_delta_log")))
    assert walks == []


def test_the_retention_operator_keeps_the_decision_table_after_its_spark_job(tmp_path):
    from contract_gate.operators.retention import GateRetentionOperator

    path = _table_path(tmp_path)
    for n in range(4):
        store(path).record(decision(f"s{n}", "orders"))
    spark_result = {"candidates_dropped": [], "quarantine_rows_deleted": 0}

    pushed = GateRetentionOperator(task_id="apply_retention", contract="orders.yaml").handle_result(
        {}, _plan(path, "orders"), spark_result)

    assert pushed["decisions"]["files_removed"] == 4 and pushed["decisions"]["files_added"] == 1
    assert {k: pushed[k] for k in spark_result} == spark_result
    assert len(DeltaTable(path).file_uris()) == 1


def test_the_record_a_writer_is_told_is_the_record_read_back(tmp_path):
    from datetime import datetime, timezone as tz
    from datetime import timedelta as td

    decisions_store = store(_table_path(tmp_path))
    amsterdam = datetime(2024, 3, 1, 14, 0, tzinfo=tz(td(hours=2)))

    told = decisions_store.record(decision("s1", "orders", decided_at=amsterdam, rule_failures={"r": 2},
                                           failed_rules=["r"]))

    assert told == store(_table_path(tmp_path)).final("s1", "orders")
    assert told.as_dict()["decided_at"] == "2024-03-01T12:00:00+00:00"
