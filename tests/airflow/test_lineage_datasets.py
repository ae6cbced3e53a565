"""Dataset names and outputs of the gate's OpenLineage facets (``contract_gate.lineage``) for the
cases the gate runs of test_lineage_and_metrics.py do not reach: URIs, catalog tables, a split."""

from __future__ import annotations

import json
from dataclasses import replace

from _airflow_gate import REPO

from contract_gate.contract.compiler import compile_plan
from contract_gate.lineage import dataset_id, outcome_lineage


def test_dataset_names_follow_the_openlineage_conventions(monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", "/data/home")
    assert dataset_id({"kind": "path", "path": "lakehouse/orders"}) == ("file", "/data/home/lakehouse/orders")
    assert dataset_id({"kind": "path", "path": "s3://bucket/lake/orders"}) == ("s3://bucket", "/lake/orders")
    assert dataset_id({"kind": "path", "path": "file:/srv/lake/orders"}) == ("file", "/srv/lake/orders")


def test_a_catalog_table_is_named_in_its_databricks_workspace_as_openlineage_names_unity_catalog(monkeypatch):
    for conn_id, connection in (("DATABRICKS_DEFAULT", {"host": "https://adb-1.azuredatabricks.net/"}),
                                ("GATE_WORKSPACE", {"host": "dbc-2.cloud.databricks.com"}),
                                ("LANDING_WORKSPACE", {"extra": {"host": "https://dbc-3.cloud.databricks.com"}})):
        monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id}", json.dumps({"conn_type": "databricks", **connection}))
    table = {"kind": "table", "name": "main.sales.orders"}
    assert dataset_id(table) == ("databricks://adb-1.azuredatabricks.net", "main.sales.orders")
    assert dataset_id(table, "gate_workspace") == ("databricks://dbc-2.cloud.databricks.com", "main.sales.orders")
    assert dataset_id({**table, "connection": "landing_workspace"}, "gate_workspace") == (
        "databricks://dbc-3.cloud.databricks.com", "main.sales.orders")
    # a workspace that cannot be known is named as Airflow's Databricks provider names it
    assert dataset_id(table, "no_such_connection") == ("databricks", "main.sales.orders")


def test_a_databricks_gate_names_its_catalog_tables_in_its_own_workspace(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_GATE_WORKSPACE", json.dumps({"conn_type": "databricks", "host": "dbc-2.cloud.databricks.com"}))
    plan = compile_plan(REPO / "contracts" / "orders.yaml")
    plan = replace(plan, gate={**plan.gate, "execution": {"mode": "databricks", "connectionId": "gate_workspace"}})
    summary = {"submission_id": "s1", "candidate": {"candidate": {"kind": "table", "name": "main.staging.orders__s1"},
                                                    "version": 0}}
    lineage = outcome_lineage(plan, "quarantine", summary, None)
    assert (lineage.inputs[0].namespace, lineage.inputs[0].name) == (
        "databricks://dbc-2.cloud.databricks.com", "main.staging.orders__s1")


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
