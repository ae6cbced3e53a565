"""Submission identity, the branch decision and the decision fields: pure logic, no Spark."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from contract_gate.operators.branch import decide
from contract_gate.operators.record import verdict
from contract_gate.submission import check_submission_id, derive_submission_id
from contract_gate_plan.model import Plan, compiled_plan



def _policy_plan(violations: dict) -> Plan:
    """A plan with only the gate's violation settings: what the branch decides by."""
    return compiled_plan({"fingerprint": "sha256:test", "contract": {"id": "c", "version": "1.0.0"}, "object": "c",
                          "columns": [], "key": [], "rules": [], "schema_policy": "strict",
                          "gate": {"violations": violations}})


SPLIT_PLAN = _policy_plan({"policy": "split_rows", "maxInvalidShare": 0.5})
REJECT_PLAN = _policy_plan({"policy": "reject_batch", "maxInvalidShare": None})


def summary(outcome="fail", valid=8, invalid=2, rules=(("a.minimum", "row"),), schema_ok=True):
    return {"submission_id": "s", "outcome": outcome, "schema_ok": schema_ok,
            "rows": {"valid": valid, "invalid": invalid},
            "failing_rules": [{"id": i, "scope": scope, "severity": "error", "status": "evaluated",
                               "failed_rows": invalid, "measured": invalid} for i, scope in rules]}


def landing(folder, fmt="csv"):
    return {"kind": "path", "path": str(folder), "format": fmt}


def test_the_same_batch_content_gets_the_same_submission_id(tmp_path):
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "a.csv").write_text("x\n1\n")
    (batch / "_SUCCESS").write_text("")
    first = derive_submission_id("c", landing(batch))
    os.utime(batch / "a.csv", (1, 1))  # re-copied: new mtime, same bytes
    assert derive_submission_id("c", landing(batch)) == first
    assert derive_submission_id("other", landing(batch)) != first
    rerun = derive_submission_id("c", landing(batch), rerun_of=first)
    assert rerun != first and rerun == derive_submission_id("c", landing(batch), rerun_of=first)
    (batch / "a.csv").write_text("x\n2\n")
    assert derive_submission_id("c", landing(batch)) != first


def test_a_delta_landing_is_identified_by_its_version(tmp_path):
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"x": [1]}))
    first = derive_submission_id("c", landing(table, "delta"))
    assert derive_submission_id("c", landing(table, "delta")) == first  # same version, same id
    write_deltalake(str(table), pa.table({"x": [2]}), mode="append")
    assert derive_submission_id("c", landing(table, "delta")) != first


def test_a_delta_landing_without_a_delta_table_is_refused(tmp_path):
    (tmp_path / "t" / "_delta_log").mkdir(parents=True)  # a log folder with no commit in it
    with pytest.raises(FileNotFoundError, match="is not a Delta table"):
        derive_submission_id("c", landing(tmp_path / "t", "delta"))


def test_nothing_landed_or_an_unsafe_id_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError):
        derive_submission_id("c", landing(tmp_path / "missing"))
    with pytest.raises(ValueError):
        check_submission_id("../etc")


@pytest.mark.parametrize(
    ("plan", "summary_", "expected"),
    [
        (REJECT_PLAN, summary(outcome="pass"), "publish"),
        (REJECT_PLAN, summary(outcome="warn"), "publish"),
        (REJECT_PLAN, summary(), "quarantine"),
        (SPLIT_PLAN, summary(), "split"),
        (SPLIT_PLAN, summary(valid=4, invalid=6), "quarantine"),  # above maxInvalidShare
        (SPLIT_PLAN, summary(valid=0, invalid=3), "quarantine"),
        (SPLIT_PLAN, summary(rules=(("a.minimum", "row"), ("rows", "dataset"))), "quarantine"),
        (SPLIT_PLAN, summary(rules=(("key.unique", "group"),)), "split"),
        (SPLIT_PLAN, summary(valid=10, invalid=0, rules=(("key.unique_across_batches", "target"),)), "quarantine"),
        (SPLIT_PLAN, summary(schema_ok=False), "quarantine"),
    ],
)
def test_branch_follows_the_violation_policy(plan, summary_, expected):
    assert decide(plan, summary_)[0] == expected


def test_a_correction_plan_is_the_replace_keys_plan_without_the_cross_batch_key_rule():
    from pathlib import Path

    from contract_gate.contract.compiler import compile_plan
    from contract_gate.operators.base import as_correction
    from contract_gate_plan.document import read_document

    plan = compile_plan(Path(__file__).resolve().parents[2] / "contracts" / "regional_daily_cases.yaml")
    assert "key.unique_across_batches" in [r.id for r in plan.rules]
    correction = read_document(as_correction(plan).document)  # a plan the Spark side accepts
    assert correction["gate"]["publication"]["mode"] == "replace_keys"
    assert [r["id"] for r in correction["rules"]] == [r.id for r in plan.rules if r.id != "key.unique_across_batches"]


def test_the_decision_names_rules_and_counts_only():
    submission = {"submission_id": "s1", "rerun_of": "s0", "correction": False}
    split = {"publish": {"status": "published", "rows": 8, "target_version_before": 3, "target_version_after": 4,
                         "latest_business_date": "2025-03-01"},
             "quarantine": {"status": "quarantined", "rows": 2, "version": 0}}
    record = verdict(submission, {**summary(), "candidate": {"version": 0, "row_count": 10}},
                     {"split": split}, {})
    assert record["outcome"] == "split" and record["rows_published"] == 8 and record["rows_quarantined"] == 2
    assert record["rules"] == [{"id": "a.minimum", "severity": "error", "failed_rows": 2, "measured": 2}]
    assert record["rerun_of"] == "s0" and record["target_version_after"] == 4
    failed = verdict(submission, None, {}, {"stage_validate": "failed", "publish": "upstream_failed"})
    assert failed["outcome"] == "failed" and "stage_validate" in failed["reason"]
