"""Contract forms of other tools, gated end to end on real Spark and Delta: physicalName columns
are validated and published under their physical names while the report says the property
names; a check the gate cannot run is listed as not_evaluated (unsupportedChecks: warn); a
{model} query and one naming the object's own table read the batch."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from _gate_plans import table_rows, version_of
from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.loader import load_contract_text
from contract_gate.operators.branch import PUBLISH, QUARANTINE, decide
from contract_gate.operators.validate import summarize
from contract_gate.pages.report_view import rules_view
from contract_gate_plan.document import read_document
from contract_gate_plan.model import load_plan
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.stage import stage_candidate
from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.validation.engine import run_validation

CONTRACT = """\
apiVersion: v3.1.0
kind: DataContract
id: urn:example:crm:customers
version: 1.0.0
status: active
schema:
  - name: customers
    physicalName: crm_customers
    properties:
      - name: customer_id
        physicalName: cust_id
        physicalType: string
        logicalType: string
        primaryKey: true
      - name: customer_name
        physicalName: cust_nm
        physicalType: string
        logicalType: string
        required: true
        logicalTypeOptions: {maxLength: 5}
      - name: segment
        physicalType: string
        logicalType: string
        quality:
          - metric: invalidValues
            arguments: {validValues: [retail, b2b, null]}
            mustBe: 0
          - type: custom
            engine: soda
            implementation: "invalid_count(segment) = 0"
    quality:
      - type: sql
        query: SELECT count(*) FROM {model} WHERE cust_nm = ''
        mustBe: 0
      - type: sql
        query: SELECT count(*) FROM crm_customers c WHERE c.segment = 'retail'
        mustBeGreaterThan: 0
      - type: custom
        engine: great-expectations
        implementation: {expectation_type: expect_table_row_count_to_be_between}
customProperties:
  - property: contractGate
    value:
      landing: {path: landing, format: parquet}
      unsupportedChecks: warn
"""
SCHEMA = "cust_id string, cust_nm string, segment string"


def _plan(tmp_path: Path) -> dict:
    plan = copy.deepcopy(compile_plan(load_contract_text(CONTRACT, str(tmp_path / "customers.yaml"))).document)
    plan.pop("fingerprint")
    for address in plan["tables"].values():
        if address["kind"] == "path":
            address["path"] = f"{tmp_path}/{address['path']}"
    return read_document(plan)


def _gate(spark, plan: dict, submission_id: str, rows: list[tuple], tmp_path: Path) -> tuple[dict, str]:
    spark.createDataFrame(rows, SCHEMA).write.mode("overwrite").parquet(plan["tables"]["landing"]["path"])
    staged = stage_candidate(spark, plan, submission_id)
    candidate = read_candidate(spark, staged["candidate"]["path"], version=staged["version"])
    report = run_validation(spark, plan, candidate, submission_id=submission_id)
    report_path = tmp_path / f"{submission_id}.json"
    report_path.write_text(json.dumps(report), encoding="utf-8")
    branch, _ = decide(load_plan(plan), summarize(report, report_path, staged))
    if branch == PUBLISH:
        publish(spark, plan, submission_id, staged["candidate"], staged["version"], "all", report)
    return report, branch


def test_physical_names_are_validated_and_published_and_the_report_says_the_property_names(spark, tmp_path):
    plan = _plan(tmp_path)
    target = plan["tables"]["target"]
    assert target["path"].endswith("/crm_customers")

    report, branch = _gate(spark, plan, "good", [("c1", "Ann", "retail"), ("c2", "Bo", None)], tmp_path)

    by_id = {entry["id"]: entry for entry in report["rules"]}
    assert report["column_names"] == {"cust_id": "customer_id", "cust_nm": "customer_name"}
    assert by_id["customer_name.max_length"]["columns"] == ["cust_nm"] and by_id["customer_name.max_length"]["passed"]
    assert by_id["segment.invalidValues"]["passed"]  # NULL is listed as valid
    assert by_id["dataset.sql"]["passed"] and by_id["dataset.sql_2"]["measured"] == 1  # {model}, the own table
    unsupported = [entry for entry in report["rules"] if entry["kind"] == "unsupported"]
    assert [(e["id"], e["status"], e["severity"]) for e in unsupported] == [
        ("segment.unsupported", "not_evaluated", "warning"), ("dataset.unsupported", "not_evaluated", "warning")]
    assert "engine 'soda'" in unsupported[0]["reason"] and "engine 'great-expectations'" in unsupported[1]["reason"]
    # the checks not run make the verdict a warning, and the batch is published
    assert (report["outcome"], branch) == ("warn", PUBLISH)
    published = spark.read.format("delta").load(target["path"])
    assert published.columns == ["cust_id", "cust_nm", "segment"]
    assert sorted(r["cust_id"] for r in table_rows(spark, target)) == ["c1", "c2"]

    shown = {rule["id"]: rule for rule in rules_view(load_plan(plan), report, None)}
    assert shown["customer_name.max_length"]["physical_columns"] == [{"name": "customer_name", "physical": "cust_nm"}]
    assert (shown["segment.unsupported"]["status"], shown["segment.unsupported"]["failing"]) == ("not_evaluated", False)


@pytest.mark.slow  # two gates
def test_a_failure_on_a_physical_column_is_reported_by_its_property_name_and_never_published(spark, tmp_path):
    plan = _plan(tmp_path)
    target = plan["tables"]["target"]
    _gate(spark, plan, "first", [("c1", "Ann", "retail")], tmp_path)
    before = version_of(spark, target)

    report, branch = _gate(spark, plan, "bad", [("c3", "Annabel", "retail"), ("c4", None, "gold")], tmp_path)

    failed = {entry["id"]: entry["failed_rows"] for entry in report["rules"] if entry["passed"] is False}
    assert failed == {"customer_name.max_length": 1, "customer_name.required": 1, "segment.invalidValues": 1}
    assert (report["outcome"], branch) == ("fail", QUARANTINE)
    assert version_of(spark, target) == before
    assert [r["cust_id"] for r in table_rows(spark, target)] == ["c1"]
