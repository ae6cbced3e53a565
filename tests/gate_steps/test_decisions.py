"""The path decision store (deltalake, no JVM): exactly one final record per submission."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

from _decision_writers import decisions_plan
from contract_gate import decisions
from contract_gate.decisions.delta_path import DeltaPathDecisionStore
from contract_gate.decisions.record import Decision
from contract_gate.freshness.decision_log import accepted_decisions, contract_decisions
from contract_gate_plan.model import Plan

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def _plan(tmp_path) -> Plan:
    return decisions_plan(str(tmp_path / "decisions"), "orders")


def _decision(submission_id="s1", outcome="published", minutes=0, **extra) -> Decision:
    return Decision(submission_id=submission_id, contract_id="orders", contract_version="1.0.0",
                    outcome=outcome, decided_at=T0 + timedelta(minutes=minutes), **extra)


def _rows(store, submission_id="s1"):
    return store.records(submission_id=submission_id)


def test_the_same_final_decision_twice_keeps_one(tmp_path):
    store = DeltaPathDecisionStore(_plan(tmp_path).tables.decisions)

    first = store.record(_decision(rows_published=3))
    again = store.record(_decision(rows_published=3, minutes=5))
    other = store.record(_decision(outcome="quarantined", minutes=9))

    assert first == again == other == _decision(rows_published=3)
    assert len(_rows(store)) == 1


def test_failed_runs_are_kept_once_each_and_never_after_the_final(tmp_path):
    store = DeltaPathDecisionStore(_plan(tmp_path).tables.decisions)

    assert store.record(_decision(outcome="failed", run_id="r1")).outcome == "failed"
    store.record(_decision(outcome="failed", run_id="r1", minutes=1))  # the record task cleared
    store.record(_decision(outcome="failed", run_id="r2", minutes=2))
    assert store.final("s1") is None
    store.record(_decision(run_id="r3", minutes=3))
    store.record(_decision(outcome="failed", run_id="r4", minutes=4))

    assert sorted((d.run_id, d.outcome) for d in _rows(store)) == [
        ("r1", "failed"), ("r2", "failed"), ("r3", "published")]
    assert store.final("s1").run_id == "r3"


def test_the_gates_own_record_replaces_a_recovered_one(tmp_path):
    store = DeltaPathDecisionStore(_plan(tmp_path).tables.decisions)
    store.record(_decision(source="recovery", reason="recovered"))

    stored = store.record(_decision(outcome="split", minutes=1, rule_failures={"x": 2}, failed_rules=["x"]))
    store.record(_decision(source="recovery", minutes=2))

    assert [(d.outcome, d.source, d.rule_failures) for d in _rows(store)] == [("split", "gate", {"x": 2})]
    assert stored.outcome == "split"


def test_concurrent_writers_leave_exactly_one_final_record_each(tmp_path):
    store = DeltaPathDecisionStore(_plan(tmp_path).tables.decisions)
    errors = []

    def write(index):
        try:
            DeltaPathDecisionStore(_plan(tmp_path).tables.decisions).record(
                _decision(f"s{index % 3}", minutes=index))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sorted(d.submission_id for d in store.records()) == ["s0", "s1", "s2"]


def test_records_from_the_record_task_keep_ids_and_counts_only(tmp_path):
    plan = _plan(tmp_path)
    record = {
        "submission_id": "s9", "contract_id": "orders", "contract_version": "1.0.0", "outcome": "quarantined",
        "plan_fingerprint": "sha256:ab", "validation_outcome": "fail", "reason": None,
        "candidate": {"candidate": {"kind": "path", "path": "lh/_c/orders__s9", "format": "delta"}, "version": 0},
        "rules": [{"id": "currency_allowed", "severity": "error", "failed_rows": 2, "measured": 2},
                  {"id": "no_refunds", "severity": "error", "failed_rows": None, "measured": 123456.78}],
        "rows_landed": 5, "rows_published": 0, "rows_quarantined": 5, "rerun_of": None, "correction": False,
        "dag_id": "contract_gate__orders", "run_id": "manual__1", "report_path": "/x/report.json",
        "latest_business_date": None, "target_version_before": None, "target_version_after": None,
    }

    stored = decisions.record_decision(plan, record)

    assert stored["rule_failures"] == {"currency_allowed": 2}
    assert stored["failed_rules"] == ["currency_allowed", "no_refunds"]
    assert (stored["candidate"], stored["candidate_version"]) == ("lh/_c/orders__s9", 0)
    assert "123456" not in str(stored)
    assert decisions.final_decision(plan, "s9") == stored
    assert decisions.final_decision(plan, "other") is None
    with pytest.raises(ValueError, match="unknown decision fields: colour"):
        decisions.record_decision(plan, {**record, "colour": "red"})


def test_the_freshness_and_status_readers_read_the_table(tmp_path):
    plan = _plan(tmp_path)
    store = decisions.store_for(plan)
    store.record(_decision("a", latest_business_date="2024-03-01", target_version_after=4))
    store.record(_decision("b", outcome="quarantined", minutes=1))

    assert [r["submission_id"] for r in contract_decisions(plan)] == ["b", "a"]
    [accepted] = accepted_decisions(plan)
    assert (accepted["latest_business_date"], accepted["target_version_after"]) == ("2024-03-01", 4)


def test_decisions_refuse_unknown_outcomes_and_naive_times():
    with pytest.raises(ValueError, match="outcome"):
        _decision(outcome="maybe")
    with pytest.raises(ValueError, match="timezone"):
        Decision(submission_id="s", contract_id="c", contract_version="1", outcome="published",
                 decided_at=datetime(2024, 1, 1))
