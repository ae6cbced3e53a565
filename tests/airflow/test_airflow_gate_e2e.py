"""The gate end to end through the generated DAGs: ``dag.test()`` on SQLite, Spark Connect, Delta.

The Airflow world (database, DAG files, lakehouse) is the session's, so each test lands batches
of its own regions (R, S, T, U/V) and asserts on its own rows, submissions and candidates: any
test runs alone, in any order.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from _airflow_gate import gate_home, order_rows, regional_rows

pytestmark = pytest.mark.usefixtures("gates_over_connect")
REGIONAL = "regional_daily_cases"
TARGET = "lakehouse/regional_daily_cases"
QUARANTINE = "lakehouse/regional_daily_cases_quarantine"
SECRET = "ZQX-CLASSIFIED-7731"  # a reporting_org (classification: restricted) value to trace
CANDIDATES = "lakehouse/_contract_gate_candidates"


def published(run) -> dict:
    result = run.xcoms.get("publish") or run.xcoms.get("split")
    return result["publish"]


def target_rows(gate, region: str) -> list[dict]:
    """The target's rows of the regions ``<region>0..`` (each test lands its own regions)."""
    return [row for row in gate.rows(TARGET) if row["region_code"].startswith(region)]


@pytest.mark.slow
def test_good_batch_is_published_once_whatever_is_retried(gate):
    gate.land(REGIONAL, regional_rows(region="R"), "csv")
    date = datetime(2025, 6, 1, tzinfo=timezone.utc)
    # 1. The worker "dies" after publishing: the record task never runs (marked success).
    first = gate.run(REGIONAL, logical_date=date, mark_success="record_decision")
    assert first.decision is None
    commit = published(first)
    summary = first.xcoms["stage_validate"]
    assert commit["status"] == "published"
    assert commit["target_version_after"] == commit["target_version_before"] + 1
    assert gate.version(TARGET) == commit["target_version_after"]
    assert commit["rows"] == summary["candidate"]["row_count"] == len(target_rows(gate, "R")) == 3
    submission_id = first.xcoms["submission"]["submission_id"]
    assert gate.table(TARGET).history(1)[0]["userMetadata"] == submission_id
    # The validated snapshot is the published one: the report judged the staged version.
    report = json.loads(Path(summary["report_path"]).read_text())
    assert report["candidate"]["version"] == summary["candidate"]["version"]

    # 2. Clearing the run and running every task again (publish included) publishes nothing twice.
    second = gate.run(REGIONAL, logical_date=date)
    assert published(second)["status"] == "already_published"
    assert gate.version(TARGET) == commit["target_version_after"]
    assert len(target_rows(gate, "R")) == 3
    assert second.decision["outcome"] == "published"
    assert second.decision["submission_id"] == submission_id

    # 3. Triggering the same batch again: same submission id, already decided, no Spark at all.
    third = gate.run(REGIONAL)
    assert third.xcoms["submission"]["submission_id"] == submission_id
    assert third.states["stage_validate"] == "skipped"
    assert third.decision["outcome"] == "published"
    assert gate.version(TARGET) == commit["target_version_after"]
    assert len(target_rows(gate, "R")) == 3
    assert_asset_event(REGIONAL, submission_id, commit)


def assert_asset_event(contract_id: str, submission_id: str, commit: dict) -> None:
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        events = session.scalars(
            select(AssetEvent).join(AssetModel, AssetEvent.asset_id == AssetModel.id)
            .where(AssetModel.name == f"contract_gate.{contract_id}@local")  # per object and environment
        ).all()
        extras = [event.extra for event in events]
    # of this submission's three runs, the two whose publish task ran (the first, and the cleared
    # one, which found the commit done) announce the same version; the skipped re-trigger does not.
    # Other tests' submissions announce too: only this one's events are counted.
    announced = {"submission_id": submission_id, "version": commit["target_version_after"], "rows": commit["rows"]}
    assert [extra for extra in extras if extra.get("submission_id") == submission_id] == [announced, announced]


@pytest.mark.slow  # a DAG run whose gate job is a Spark JVM of its own
def test_bad_batch_is_quarantined_and_no_value_leaks(gate, capfd):
    before = (gate.version(TARGET), len(gate.rows(TARGET)))
    gate.land(REGIONAL, regional_rows(region="S", bad=True, org=SECRET), "csv")
    run = gate.run(REGIONAL)
    decision = run.decision
    assert decision["outcome"] == "quarantined"
    assert run.states["publish"] == "skipped" and run.states["quarantine"] == "success"
    assert (gate.version(TARGET), len(gate.rows(TARGET))) == before
    assert decision["rule_failures"] == {"case_count.minimum": 1, "status.enum": 1}
    assert sorted(decision["failed_rules"]) == ["case_count.minimum", "status.enum"]
    assert decision["final"] is True and decision["target_version_before"] is None
    quarantined = gate.rows(QUARANTINE)
    mine = [row for row in quarantined if row["_submission_id"] == decision["submission_id"]]
    assert len(mine) == 3 and {row["reporting_org"] for row in mine} == {SECRET}  # the value was there
    broken = [row for row in mine if row["_errors"]]
    assert {e["rule_id"] for row in broken for e in row["_errors"]} == {"case_count.minimum", "status.enum"}
    output = capfd.readouterr()
    report = Path(run.xcoms["stage_validate"]["report_path"]).read_text()
    for where, text in {"task logs": output.out + output.err, "decision": json.dumps(decision),
                        "xcoms": json.dumps(run.xcoms, default=str), "report": report}.items():
        assert SECRET not in text, f"a classified value reached the {where}"


@pytest.mark.slow
def test_rejected_batch_fixed_and_rerun_is_published_once(gate):
    gate.land(REGIONAL, regional_rows(region="T", bad=True), "csv")
    rejected = gate.run(REGIONAL).decision
    assert rejected["outcome"] == "quarantined"
    gate.land(REGIONAL, regional_rows(region="T", org="Org-B"), "csv")
    rerun = gate.run(REGIONAL, rerun_of=rejected["submission_id"])
    decision = rerun.decision
    assert decision["outcome"] == "published"
    assert decision["rerun_of"] == rejected["submission_id"]
    assert decision["submission_id"] != rejected["submission_id"]
    assert sorted(row["region_code"] for row in target_rows(gate, "T")) == ["T0", "T1", "T2"]

    from contract_gate import decisions
    from contract_gate.contract.compiler import compile_plan

    with gate_home():  # the plan's tables resolve against the gate's home when it is compiled
        plan = compile_plan(gate.contracts / f"{REGIONAL}.yaml")
        chain = [decisions.final_decision(plan, s) for s in (rejected["submission_id"], decision["submission_id"])]
    assert [d["outcome"] for d in chain] == ["quarantined", "published"]
    assert chain[1]["rerun_of"] == chain[0]["submission_id"]

    # Re-running the published re-run without asking for a correction is refused; nothing moves.
    version = gate.version(TARGET)
    refused = gate.run(REGIONAL, rerun_of=decision["submission_id"])
    assert refused.states["submission"] == "failed"
    assert refused.decision is None
    assert gate.version(TARGET) == version

    # Asked explicitly, a correction replaces the published rows by business key, once.
    gate.land(REGIONAL, [{**row, "case_count": row["case_count"] + 100}
                         for row in regional_rows(region="T", org="Org-B")], "csv")
    corrected = gate.run(REGIONAL, rerun_of=decision["submission_id"], correction=True).decision
    assert corrected["outcome"] == "published" and corrected["correction"] is True
    assert corrected["rerun_of"] == decision["submission_id"]
    fixed = sorted((r["region_code"], r["case_count"]) for r in target_rows(gate, "T"))
    assert fixed == [("T0", 110), ("T1", 111), ("T2", 112)]


@pytest.mark.slow
def test_split_rows_publish_valid_and_quarantine_invalid(gate):
    landed = order_rows(invalid=2)
    gate.land("orders", landed, "json")
    run = gate.run("orders")
    decision = run.decision
    assert decision["outcome"] == "split"
    landed_ids = {row["order_id"] for row in landed}
    target = [r for r in gate.rows("lakehouse/orders") if r["order_id"] in landed_ids]
    quarantined = [r for r in gate.rows("lakehouse/orders_quarantine") if r["_submission_id"] == decision["submission_id"]]
    assert sorted(r["order_id"] for r in target) == ["O0", "O1", "O2", "O3"]
    assert sorted(r["order_id"] for r in quarantined) == ["X0", "X1"]
    assert all({e["rule_id"] for e in r["_errors"]} == {"order_total_not_negative", "currency_allowed"}
               for r in quarantined)
    assert len(target) + len(quarantined) == len(landed) == decision["rows_landed"]
    assert decision["rows_published"] == 4 and decision["rows_quarantined"] == 2
    summary = run.xcoms["stage_validate"]
    assert json.loads(Path(summary["report_path"]).read_text())["candidate"]["version"] == summary["candidate"]["version"]
    assert decision["candidate_version"] == summary["candidate"]["version"]


@pytest.mark.slow
def test_the_retention_dag_drops_only_candidates_past_their_days(gate):
    """The daily ``<contract>__retention`` DAG runs the cleanup job: a candidate whose commit is
    older than ``candidateDays`` (7) is dropped, younger ones and the quarantined rows (90 days)
    stay. The old candidate is made old by dating its commit file back, which is what Delta's
    history reads as the commit time. The test stages its own two candidates (only the
    staging job runs: the later tasks are marked done, the candidates are all it needs). The
    first one's work folder, dated back 100 days, is removed too (``work_dir_days``, 90); the
    second one's stays."""
    import os
    import time

    from _airflow_gate import HOME

    candidates, work_folders = [], []
    for region in ("U", "V"):
        gate.land(REGIONAL, regional_rows(region=region), "csv")
        staged = gate.run(REGIONAL, mark_success="publish|quarantine|split|record_decision")
        submission_id = staged.xcoms["submission"]["submission_id"]
        candidates.append(HOME / CANDIDATES / f"{REGIONAL}__{submission_id}")
        work_folders.append(Path(staged.xcoms["stage_validate"]["report_path"]).parent)
    assert all((c / "_delta_log").is_dir() for c in candidates)
    old, kept = candidates[0], candidates[1:]
    others = sorted(set((HOME / CANDIDATES).glob(f"{REGIONAL}__*")) - set(candidates))  # other tests'
    ten_days_ago = time.time() - 10 * 86400
    for commit in (old / "_delta_log").glob("*.json"):
        os.utime(commit, (ten_days_ago, ten_days_ago))
    hundred_days_ago = time.time() - 100 * 86400
    for path in (*work_folders[0].rglob("*"), work_folders[0]):
        os.utime(path, (hundred_days_ago, hundred_days_ago))
    quarantined, target = len(gate.rows(QUARANTINE)), (gate.version(TARGET), len(gate.rows(TARGET)))

    run = gate.run(f"{REGIONAL}__retention")

    assert run.states == {"apply_retention": "success", "audit_decisions": "success"}  # the log agrees
    result = run.xcoms["apply_retention"]
    assert [Path(p).name for p in result["candidates_dropped"]] == [old.name]
    assert result["quarantine_rows_deleted"] == 0
    assert not old.exists() and all((c / "_delta_log").is_dir() for c in kept + others)
    assert result["work_folders_removed"] == [work_folders[0].name]
    assert not work_folders[0].exists() and (work_folders[1] / "report.json").is_file()
    assert len(gate.rows(QUARANTINE)) == quarantined
    assert (gate.version(TARGET), len(gate.rows(TARGET))) == target
