"""A history rule end to end with ``dag.test()``: the real validate task reads the accepted batches
from the decision log before its Spark job, the job judges the batch's row count against their
median, and the branch and the decision follow. The first batches, while fewer than the rule's 2
are accepted, are published with a warning that says the history is too short; then a batch of
1% of the usual volume is quarantined, its decision naming the rule, the median and the factor,
and the target is untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("gates_over_connect")  # what the gate decides, not where Spark runs

CONTRACT = """\
apiVersion: v3.1.0
kind: DataContract
id: history_e2e
version: 1.0.0
status: active
schema:
  - name: history_e2e
    physicalType: table
    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
        customProperties:
          - property: contractGate
            value: {history: {batches: 2, within: 10}}
    properties:
      - {name: order_id, physicalType: bigint, logicalType: integer, primaryKey: true}
customProperties:
  - property: contractGate
    value:
      landing: {path: landing/history_e2e, format: json}
      violations: {policy: split_rows}
"""
RULE = "dataset.rowCount"
TARGET = "lakehouse/history_e2e"


@pytest.fixture
def history_contract(gate):
    from contract_gate.dag_factory import sync_dag_files

    file = gate.contracts / "history_e2e.yaml"
    file.write_text(CONTRACT, encoding="utf-8")
    try:
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()
        yield gate
    finally:
        file.unlink()
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()


def rule_entry(run) -> dict:
    report = json.loads(Path(run.xcoms["stage_validate"]["report_path"]).read_text())
    return next(entry for entry in report["rules"] if entry["id"] == RULE)


@pytest.mark.slow
def test_a_batch_of_one_percent_is_quarantined_once_the_history_is_long_enough(history_contract):
    gate = history_contract
    for n in range(2):
        gate.land("history_e2e", [{"order_id": n * 1000 + i} for i in range(100)], "json")
        run = gate.run("history_e2e")
        assert run.decision["outcome"] == "published"
        assert run.decision["validation_outcome"] == "warn"
        assert run.decision["reason"] == (f"history rules: {RULE}: the history is too short: {n} of the 2 accepted "
                                          "batches the rule compares with; not judged until there are")
        assert rule_entry(run)["severity"] == "warning"
    before = (gate.version(TARGET), sorted(row["order_id"] for row in gate.rows(TARGET)))
    assert len(before[1]) == 200

    gate.land("history_e2e", [{"order_id": 5000}], "json")
    run = gate.run("history_e2e")

    assert run.decision["outcome"] == "quarantined" and run.decision["failed_rules"] == [RULE]
    assert run.decision["reason"] == (f"history rules: {RULE}: 1 rows against a median of 100 rows of the last 2 "
                                      "accepted batches, within a factor 10: 10 to 1000 rows")
    assert rule_entry(run)["history"] == {"batches": 2, "within": 10, "accepted": 2, "median": 100}
    assert (gate.version(TARGET), sorted(row["order_id"] for row in gate.rows(TARGET))) == before
    assert [row["order_id"] for row in gate.rows(f"{TARGET}_quarantine")] == [5000]
