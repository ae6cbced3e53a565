"""What the gate metrics count (``contract_gate.metrics``), without a gate run: which rules a
rejection is counted against, and where a re-run chain's time to resolve starts. The metrics of
real runs, received by a StatsD listener, are in test_lineage_and_metrics.py."""

from __future__ import annotations

import pytest

from contract_gate import decisions, metrics

PLAN = {"contract": {"id": "c"}}


def test_a_rejection_counts_against_its_failing_error_rules_only():
    record = {"rules": [{"id": "b.enum", "severity": "error"}, {"id": "a.min", "severity": "error"},
                        {"id": "w.max", "severity": "warning"}]}
    assert metrics.rejected_rules(record, {"schema_ok": True}) == ["a.min", "b.enum"]
    assert metrics.rejected_rules({"rules": []}, {"schema_ok": False}) == ["schema"]
    assert metrics.rejected_rules({"rules": [{"id": "w.max", "severity": "warning"}]}, {}) == ["unattributed"]


@pytest.fixture
def log(monkeypatch):
    """A decision log of final decisions by submission id."""
    entries: dict[str, dict] = {}
    monkeypatch.setattr(decisions, "final_decision", lambda plan, sid: entries.get(sid))
    return entries


def test_time_to_resolve_starts_at_the_first_quarantine_of_the_chain(log):
    log["s1"] = {"submission_id": "s1", "outcome": "quarantined", "rerun_of": None, "decided_at": "t1"}
    log["s2"] = {"submission_id": "s2", "outcome": "quarantined", "rerun_of": "s1", "decided_at": "t2"}
    assert metrics.first_rejection(PLAN, "s2")["submission_id"] == "s1"
    assert metrics.first_rejection(PLAN, None) is None


def test_a_correction_of_a_published_submission_resolves_nothing(log):
    log["p1"] = {"submission_id": "p1", "outcome": "published", "rerun_of": None, "decided_at": "t1"}
    assert metrics.first_rejection(PLAN, "p1") is None


def test_a_looping_chain_ends(log):
    log["a"] = {"submission_id": "a", "outcome": "quarantined", "rerun_of": "b", "decided_at": "t1"}
    log["b"] = {"submission_id": "b", "outcome": "quarantined", "rerun_of": "a", "decided_at": "t2"}
    assert metrics.first_rejection(PLAN, "a")["submission_id"] == "b"


def test_a_hostile_rule_id_cannot_forge_a_metric_line():
    # a DQX check name or quality name becomes a rule id (tests/contracts_hostile/page_markup_in_text.yaml)
    assert metrics.tag("x:1|c\nairflow.evil,rule=y:9|g") == "x_1_c_airflow.evil_rule_y_9_g"
    assert metrics.tag("<b>check</b>") == "_b_check__b_"
    assert metrics.tag("case_count.minimum") == "case_count.minimum"
