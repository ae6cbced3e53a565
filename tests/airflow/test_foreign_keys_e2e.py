"""A foreign key across two contracts of one deployment, end to end with ``dag.test()``: a batch
with 3 orphan keys is split (3 quarantined), and its report and its decision name the parent's
target and the version read; after the parent publishes the missing keys, the same batch re-run
is accepted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


CUSTOMERS = """\
apiVersion: v3.1.0
kind: DataContract
id: fk_customers
version: 1.0.0
status: active
schema:
  - name: fk_customers
    physicalType: table
    properties:
      - {name: customer_id, physicalType: bigint, logicalType: integer, primaryKey: true}
customProperties:
  - property: contractGate
    value:
      landing: {path: landing/fk_customers, format: json}
"""
ORDERS = """\
apiVersion: v3.1.0
kind: DataContract
id: fk_orders
version: 1.0.0
status: active
schema:
  - name: fk_orders
    physicalType: table
    properties:
      - {name: order_id, physicalType: bigint, logicalType: integer, primaryKey: true}
      - name: customer_id
        physicalType: bigint
        logicalType: integer
        relationships:
          - to: fk_customers.customer_id
customProperties:
  - property: contractGate
    value:
      landing: {path: landing/fk_orders, format: json}
      violations: {policy: split_rows}
"""


@pytest.fixture
def two_contracts(gate):
    from contract_gate.dag_factory import sync_dag_files

    files = [gate.contracts / "fk_customers.yaml", gate.contracts / "fk_orders.yaml"]
    for file, text in zip(files, (CUSTOMERS, ORDERS)):
        file.write_text(text, encoding="utf-8")
    try:
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()
        yield gate
    finally:
        for file in files:
            file.unlink()
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()


def reference_entry(run) -> dict:
    report = json.loads(Path(run.xcoms["stage_validate"]["report_path"]).read_text())
    return next(entry for entry in report["rules"] if entry["id"] == "customer_id.references")


@pytest.mark.slow
@pytest.mark.usefixtures("gates_over_connect")  # what the gate decides, not where Spark runs
def test_orphan_keys_are_split_off_and_the_batch_is_accepted_once_the_parent_publishes_them(two_contracts):
    gate = two_contracts
    gate.land("fk_customers", [{"customer_id": i} for i in range(1, 8)], "json")
    assert gate.run("fk_customers").decision["outcome"] == "published"
    parent_version = gate.version("lakehouse/fk_customers")

    orders = [{"order_id": i, "customer_id": i} for i in range(1, 11)]
    gate.land("fk_orders", orders, "json")
    split = gate.run("fk_orders")

    assert split.decision["outcome"] == "split"
    assert (split.decision["rows_published"], split.decision["rows_quarantined"]) == (7, 3)
    assert split.decision["rule_failures"] == {"customer_id.references": 3}
    entry = reference_entry(split)
    assert entry["reference"]["version"] == parent_version
    assert entry["reference"]["table"].endswith("lakehouse/fk_customers")
    assert split.decision["reason"] == (f"foreign keys: customer_id.references read {entry['reference']['table']} "
                                        f"(contract fk_customers) at version {parent_version}")
    assert sorted(r["customer_id"] for r in gate.rows("lakehouse/fk_orders_quarantine")) == [8, 9, 10]

    gate.land("fk_customers", [{"customer_id": i} for i in range(8, 11)], "json")
    assert gate.run("fk_customers").decision["outcome"] == "published"
    gate.land("fk_orders", orders, "json")
    rerun = gate.run("fk_orders", rerun_of=split.decision["submission_id"], correction=True)

    assert rerun.decision["outcome"] == "published" and rerun.decision["rule_failures"] == {}
    assert reference_entry(rerun)["reference"]["version"] == parent_version + 1
    assert rerun.decision["reason"].endswith(f"at version {parent_version + 1}")
    assert sorted(r["customer_id"] for r in gate.rows("lakehouse/fk_orders")) == list(range(1, 11))


def test_a_verdicts_decision_names_the_referenced_versions_a_failed_run_keeps_its_reason():
    from contract_gate.operators.record import verdict

    summary = {"outcome": "fail", "candidate": {}, "failing_rules": [], "references": {
        "customer_id.references": {"contract": "crm", "object": "customers", "table": "/l/customers", "version": 4}}}
    published = verdict({"submission_id": "s"}, summary, {"publish": {"publish": {"status": "published", "rows": 1}}}, {})
    assert published["reason"] == "foreign keys: customer_id.references read /l/customers (contract crm) at version 4"
    failed = verdict({"submission_id": "s"}, summary, {}, {"publish": "failed"})
    assert failed["reason"].startswith("task(s) publish failed")
