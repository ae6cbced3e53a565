"""Dataset names and outputs of the gate's OpenLineage facets (``contract_gate.lineage``) for the
cases the gate runs of test_lineage_and_metrics.py do not reach: URIs, catalog tables, a split."""

from __future__ import annotations

from _airflow_gate import REPO

from contract_gate.contract.compiler import compile_plan
from contract_gate.lineage import dataset_id, outcome_lineage


def test_dataset_names_follow_the_openlineage_conventions(monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", "/data/home")
    assert dataset_id({"kind": "path", "path": "lakehouse/orders"}) == ("file", "/data/home/lakehouse/orders")
    assert dataset_id({"kind": "path", "path": "s3://bucket/lake/orders"}) == ("s3://bucket", "/lake/orders")
    assert dataset_id({"kind": "path", "path": "file:/srv/lake/orders"}) == ("file", "/srv/lake/orders")
    assert dataset_id({"kind": "table", "name": "main.sales.orders"}) == ("catalog", "main.sales.orders")


def test_a_split_writes_the_target_and_the_quarantine_at_their_versions():
    plan = compile_plan(REPO / "contracts" / "orders.yaml")
    summary = {"submission_id": "s1", "candidate": {"candidate": {"kind": "path", "path": "/c/orders__s1"},
                                                    "version": 0}}
    result = {"publish": {"status": "published", "target_version_after": 3},
              "quarantine": {"status": "quarantined", "version": 1}}

    lineage = outcome_lineage(plan, "split", summary, result)

    assert [(d.name.rsplit("/", 1)[1], d.facets["version"].datasetVersion) for d in lineage.outputs] == [
        ("orders", "3"), ("orders_quarantine", "1")]
    assert "schema" in lineage.outputs[0].facets and "schema" not in lineage.outputs[1].facets
    tags = {t.key: t.value for t in lineage.run_facets["tags"].tags}
    assert tags["gate_outcome"] == "split" and tags["contract"] == "orders" and tags["submission_id"] == "s1"
    # before the step ran (the start event): the tables it will write, without versions
    started = outcome_lineage(plan, "split", summary, None)
    assert [("version" in d.facets) for d in started.outputs] == [False, False]
