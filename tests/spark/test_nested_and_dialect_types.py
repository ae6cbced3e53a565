"""Nested data and dialect types on real Spark and Delta: struct and array columns and a JSON
column validated in the fused pass with dotted rule ids, and a nested batch gated to a Delta
target whose CHECK constraints hold the struct field rules."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.loader import load_contract_text
from contract_gate.operators.branch import PUBLISH, decide
from contract_gate.operators.validate import summarize
from contract_gate_plan.document import read_document
from contract_gate_plan.model import load_plan
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.stage import stage_candidate
from contract_gate_spark.validation.candidate import Candidate, read_candidate
from contract_gate_spark.validation.engine import run_validation

CONTRACT = """\
apiVersion: v3.1.0
kind: DataContract
id: urn:example:shop:orders
version: 1.0.0
status: active
schema:
  - name: nested_orders
    properties:
      - name: order_id
        physicalType: text
        logicalType: string
        primaryKey: true
      - name: address
        logicalType: object
        properties:
          - {name: city, logicalType: string, required: true, logicalTypeOptions: {maxLength: 10}}
          - {name: zip, physicalType: varchar(5), logicalType: string}
      - name: lines
        logicalType: array
        items:
          logicalType: object
          properties:
            - {name: sku, logicalType: string, required: true, logicalTypeOptions: {pattern: '^S-[0-9]+$'}}
            - {name: qty, logicalType: integer, logicalTypeOptions: {format: i32, minimum: 1}}
      - name: tags
        logicalType: array
        items: {logicalType: string, enum: [{value: new}, {value: gift}]}
      - name: doc
        physicalType: jsonb
        logicalType: string
customProperties:
  - property: contractGate
    value:
      landing: {path: landing, format: parquet}
"""
SCHEMA = ("order_id string, address struct<city:string,zip:string>, "
          "lines array<struct<sku:string,qty:int>>, tags array<string>, doc string")
GOOD = [
    ("o1", ("Utrecht", "3511"), [("S-1", 2), ("S-22", 1)], ["new"], '{"note": "x"}'),
    ("o2", None, [], None, None),  # a NULL struct and an empty array hold every nested rule
    ("o3", (None, None), None, ["gift", "new"], "[1, 2]"),  # city NULL: fails address.city.required
]


def _plan(tmp_path: Path) -> dict:
    plan = copy.deepcopy(compile_plan(load_contract_text(CONTRACT, str(tmp_path / "orders.yaml"))).document)
    plan.pop("fingerprint")
    for address in plan["tables"].values():
        if address["kind"] == "path":
            address["path"] = f"{tmp_path}/{address['path']}"
    return read_document(plan)


def _failed(report: dict) -> dict[str, int]:
    return {r["id"]: r["failed_rows"] for r in report["rules"] if r["failed_rows"]}


def test_nested_fields_and_json_text_are_counted_under_their_dotted_rule_ids(spark, tmp_path):
    plan = _plan(tmp_path)
    rows = [
        *GOOD,
        ("o4", ("Amersfoort-Noord", "123456"), [("S-1", 0), (None, 1)], ["sale"], "{'a': 1}x"),
        ("o5", ("Ede", "67"), [None, ("X-9", 3)], [None], "not json"),
        ("o6", ("Ede", None), [("S-7", 1)], [], "12"),
    ]
    df = spark.createDataFrame(rows, SCHEMA)
    report = run_validation(spark, plan, Candidate(df), submission_id="nested")

    assert report["schema"]["ok"], report["schema"]
    assert _failed(report) == {
        "address.city.required": 1,  # o3
        "address.city.max_length": 1,  # o4
        "address.zip.max_length": 1,  # o4: varchar(5)
        "lines[].qty.minimum": 1,  # o4
        "lines[].sku.required": 1,  # o4 (a NULL element, o5, has no sku to require)
        "lines[].sku.pattern": 1,  # o5
        "tags[].enum": 1,  # o4 'sale' (o5's NULL element passes, as NULL passes a column's enum)
        "doc.json": 1,  # o5 (Spark's JSON reader takes o4's single quotes)
    }
    assert report["rows"]["invalid"] == 3
    by_id = {r["id"]: r for r in report["rules"]}
    assert by_id["lines[].sku.required"]["columns"] == ["lines"]


def test_a_nested_batch_is_staged_validated_and_published_to_a_delta_target(spark, tmp_path):
    plan = _plan(tmp_path)
    rows = [row for row in GOOD if row[0] != "o3"]
    spark.createDataFrame(rows, SCHEMA).write.mode("overwrite").parquet(plan["tables"]["landing"]["path"])
    staged = stage_candidate(spark, plan, "nested-1")
    candidate = read_candidate(spark, staged["candidate"]["path"], version=staged["version"])
    report = run_validation(spark, plan, candidate, submission_id="nested-1")
    report_path = tmp_path / "nested-1.json"
    report_path.write_text(json.dumps(report), encoding="utf-8")
    branch, _ = decide(plan, summarize(report, report_path, staged))
    assert (report["outcome"], branch) == ("pass", PUBLISH), _failed(report)

    publish(spark, plan, "nested-1", staged["candidate"], staged["version"], "all", report)

    target = plan["tables"]["target"]["path"]
    published = spark.read.format("delta").load(target)
    assert {f.name: f.dataType.simpleString() for f in published.schema.fields} == {
        "order_id": "string", "address": "struct<city:string,zip:string>",
        "lines": "array<struct<sku:string,qty:int>>", "tags": "array<string>", "doc": "string"}
    assert sorted(r["order_id"] for r in published.collect()) == ["o1", "o2"]
    constraints = {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES delta.`{target}`").collect()
                   if r["key"].startswith("delta.constraints.")}
    assert "delta.constraints.cg_address_city_required" in constraints
    assert "delta.constraints.cg_doc_json" in constraints
    assert not any("forall" in text for text in constraints.values())  # Delta cannot hold a lambda


def test_a_json_text_column_of_a_json_landing_takes_any_json_value_as_its_text(spark, tmp_path):
    """A jsonb column exported to a JSON landing holds objects and arrays inline: they fit the
    column, kept as their JSON text, and only text that is not JSON fails ``doc.json``. A plain
    string column holding an object still fails its type."""
    plan = _plan(tmp_path)
    docs = {"o1": {"note": "x", "n": [1, 2]}, "o2": [1, {"a": None}], "o3": 12, "o4": '{"quoted": true}',
            "o5": "not json"}
    rows = [*({"order_id": key, "doc": doc} for key, doc in docs.items()), {"order_id": {"an": "object"}, "doc": None}]
    landing = tmp_path / "orders.json"
    landing.write_text("".join(json.dumps({"address": None, "lines": [], "tags": None, **row}) + "\n" for row in rows),
                       encoding="utf-8")

    candidate = read_candidate(spark, str(landing), format="json", columns=load_plan(plan).columns)
    read = {row["order_id"]: row["doc"] for row in candidate.df.collect()}
    assert {key: json.loads(read[key]) for key in ("o1", "o2", "o3")} == {key: docs[key] for key in ("o1", "o2", "o3")}
    assert (read["o4"], read["o5"]) == ('{"quoted": true}', "not json")  # a JSON string is its own text

    report = run_validation(spark, plan, candidate, submission_id="json-text")
    assert report["schema"]["ok"], report["schema"]
    assert _failed(report) == {"doc.json": 1, "order_id.type": 1}  # o5; the object where a string belongs
    # no value of the failing rows reaches the report: neither the text that is not JSON nor the object
    assert "not json" not in json.dumps(report) and '"an"' not in json.dumps(report)
