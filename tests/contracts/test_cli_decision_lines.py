"""``run`` and ``rerun`` print each rule that did not pass by its state in the submission's report:
``failed``, ``not_evaluated`` and ``stopped`` are told apart, and a rule that passed is not listed."""

from __future__ import annotations

import json

from contract_gate.cli.run_cmd import format_decision

RULES = [
    {"id": "order_total_not_negative", "status": "evaluated", "passed": False, "failed_rows": 2, "severity": "error"},
    {"id": "currency_allowed", "status": "evaluated", "passed": False, "failed_rows": 1, "severity": "warning"},
    {"id": "daily_total", "status": "not_evaluated", "passed": None, "failed_rows": None, "severity": "error",
     "reason": "the query failed: column total_amount is missing"},
    {"id": "key.unique", "status": "stopped", "passed": None, "failed_rows": None, "severity": "error",
     "reason": "the validation time budget ran out"},
    {"id": "order_id.required", "status": "evaluated", "passed": True, "failed_rows": 0, "severity": "error"},
    {"id": "key.unique_across_batches", "status": "not_executed", "passed": None, "failed_rows": None,
     "severity": "error", "reason": "measured by batch_keys"},
]


def test_each_rule_that_did_not_pass_is_shown_by_its_state(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"rules": RULES}))
    decision = {"outcome": "quarantined", "report_path": str(report),
                "failed_rules": [r["id"] for r in RULES[:4]], "rule_failures": {"order_total_not_negative": 2}}

    lines = format_decision(decision).splitlines()

    assert lines[-4:] == [
        "  failed        order_total_not_negative: 2 rows",
        "  failed        currency_allowed (warning): 1 rows",
        "  not_evaluated daily_total: the query failed: column total_amount is missing",
        "  stopped       key.unique: the validation time budget ran out",
    ]
    assert not any("order_id.required" in line or "unique_across_batches" in line for line in lines)


def test_without_a_report_here_the_decisions_ids_are_shown_without_a_state(tmp_path):
    decision = {"outcome": "quarantined", "report_path": "s3://bucket/runs/report.json",
                "failed_rules": ["daily_total", "order_total_not_negative"], "rule_failures": {"order_total_not_negative": 2}}

    assert format_decision(decision).splitlines()[-2:] == ["  did not pass daily_total",
                                                          "  did not pass order_total_not_negative: 2 rows"]
