"""Foreign keys against published data: a batch row whose key the referenced object's target
lacks fails ``<columns>.references``; the report names the target and the version read, and the
split and the quarantine of that batch read that same version. Only a gate's own target of the
referenced contract is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from _gate_plans import table_rows, version_of
from contract_gate.contract.compiler import compile_plans
from contract_gate_plan.addresses import HOME_ENV, Address
from contract_gate_plan.ownership import properties_clause
from contract_gate_plan.references import flag_column
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.quarantine import quarantine
from contract_gate_spark.steps.target import ensure_target
from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.validation.engine import run_validation

CUSTOMERS = """\
apiVersion: v3.1.0
kind: DataContract
id: crm_customers
version: 1.0.0
status: active
schema:
  - name: customers
    physicalType: table
    properties:
      - {name: customer_id, physicalType: bigint, logicalType: integer, primaryKey: true}
      - {name: country, physicalType: string, logicalType: string}
customProperties:
  - property: contractGate
    value:
      landing: {path: landing/customers, format: parquet}
"""

ORDERS = """\
apiVersion: v3.1.0
kind: DataContract
id: shop_orders
version: 1.0.0
status: active
schema:
  - name: orders
    physicalType: table
    properties:
      - {name: order_id, physicalType: bigint, logicalType: integer, primaryKey: true}
      - name: customer_id
        physicalType: bigint
        logicalType: integer
        relationships:
          - to: customers.customer_id
customProperties:
  - property: contractGate
    value:
      landing: {path: landing/orders, format: parquet}
      violations: {policy: split_rows}
"""


@pytest.fixture
def world(tmp_path: Path, monkeypatch) -> dict:
    """Two contracts of one deployment (one folder), their relative tables under ``tmp_path``."""
    monkeypatch.setenv(HOME_ENV, str(tmp_path))
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "customers.yaml").write_text(CUSTOMERS, encoding="utf-8")
    (contracts / "orders.yaml").write_text(ORDERS, encoding="utf-8")
    return {"customers": compile_plans(contracts / "customers.yaml").plan().document,
            "orders": compile_plans(contracts / "orders.yaml").plan().document, "root": tmp_path}


def publish_customers(spark, plan: dict, ids: list[int]) -> int:
    """The parent's target with these customers (created as the gate creates it); its version."""
    ensure_target(spark, plan)
    target = path_of(plan, "target")
    spark.createDataFrame([(i, "NL") for i in ids], "customer_id bigint, country string") \
        .write.format("delta").mode("append").save(target)
    return version_of(spark, {"kind": "path", "path": target})


def path_of(plan: dict, role: str) -> str:
    return Address.from_document(plan["tables"][role]).location


def candidate(spark, world: dict, name: str, customer_ids: list[int | None]) -> dict:
    address = {"kind": "path", "path": str(world["root"] / "candidates" / name), "format": "delta"}
    rows = [(i + 1, customer) for i, customer in enumerate(customer_ids)]
    spark.createDataFrame(rows, "order_id bigint, customer_id bigint").write.format("delta").save(address["path"])
    return address


def rule_entry(report: dict, rule_id: str = "customer_id.references") -> dict:
    return next(entry for entry in report["rules"] if entry["id"] == rule_id)


def test_orphan_keys_are_split_off_against_the_pinned_parent_version_and_pass_once_published(spark, world):
    customers, orders = world["customers"], world["orders"]
    parent_version = publish_customers(spark, customers, list(range(1, 8)))
    batch = candidate(spark, world, "s1", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, None])

    report = run_validation(spark, orders, read_candidate(spark, batch["path"], format="delta", version=0),
                            submission_id="s1")

    entry = rule_entry(report)
    assert (entry["failed_rows"], entry["passed"]) == (3, False)  # 8, 9, 10; a NULL key references nothing
    assert entry["reference"] == {"contract": "crm_customers", "object": "customers",
                                  "table": path_of(customers, "target"), "version": parent_version}
    assert report["rows"] == {"valid": 8, "invalid": 3}

    # the parent publishes the missing keys before the split: the split still judges by the report's version
    publish_customers(spark, customers, [8, 9, 10])
    published = publish(spark, orders, "s1", batch, 0, rows="valid", report=report)
    quarantined = quarantine(spark, orders, "s1", batch, 0, report=report, rows="invalid")

    assert (published["rows"], quarantined["rows"]) == (8, 3)
    rows = table_rows(spark, {"kind": "path", "path": path_of(orders, "quarantine")})
    assert sorted(r["customer_id"] for r in rows) == [8, 9, 10]
    assert {e["rule_id"] for r in rows for e in r["_errors"]} == {"customer_id.references"}
    assert not [c for c in spark.read.format("delta").load(path_of(orders, "target")).columns
                if c.startswith("__contract_gate")]

    again = run_validation(spark, orders, spark.read.format("delta").load(batch["path"]), submission_id="s1r")

    assert (rule_entry(again)["failed_rows"], rule_entry(again)["passed"]) == (0, True)
    assert rule_entry(again)["reference"]["version"] == parent_version + 1


def test_a_parent_that_has_published_nothing_holds_no_key(spark, world):
    batch = candidate(spark, world, "s2", [1, None])
    report = run_validation(spark, world["orders"], spark.read.format("delta").load(batch["path"]))
    entry = rule_entry(report)
    assert (entry["failed_rows"], entry["reference"]["version"]) == (1, None)


@pytest.mark.parametrize("properties", [None, {"contract_gate.contract": "crm_customers",
                                               "contract_gate.role": "quarantine"},
                                        {"contract_gate.contract": "someone_else", "contract_gate.role": "target"}])
def test_a_table_that_is_not_the_parents_published_target_is_never_read(spark, world, properties):
    """A table at the target's path that the gate did not create as the parent's target (no
    ownership properties, another role, another contract) is not read: the rule is not evaluated."""
    path = path_of(world["customers"], "target")
    spark.createDataFrame([(1, "NL")], "customer_id bigint, country string").write.format("delta").save(path)
    if properties:
        spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ({properties_clause(properties)})")
    batch = candidate(spark, world, "s3", [1, 2])

    report = run_validation(spark, world["orders"], spark.read.format("delta").load(batch["path"]))

    entry = rule_entry(report)
    assert entry["status"] == "not_evaluated" and "not the published target of contract 'crm_customers'" in entry["reason"]
    assert "reference" not in entry and report["outcome"] == "fail"


def test_a_batch_cannot_vouch_for_its_own_keys(spark, world):
    """A batch column named like the flag (TRUE on every row) is dropped, not trusted."""
    publish_customers(spark, world["customers"], [1])
    flag = flag_column("customer_id.references")
    path = str(world["root"] / "candidates" / "forged")
    spark.createDataFrame([(1, 1, True), (2, 2, True)], f"order_id bigint, customer_id bigint, {flag} boolean") \
        .write.format("delta").save(path)

    report = run_validation(spark, world["orders"], spark.read.format("delta").load(path))

    assert rule_entry(report)["failed_rows"] == 1


def test_the_flag_column_is_the_gates_own_name_whatever_the_rule_id():
    assert flag_column("a`; DROP TABLE x; --.references").startswith("__contract_gate_found_")
    assert "`" not in flag_column("a`b")
