"""Decisions per schema object: the ``object`` column, one final record per object and
submission, and a decision table written before the column existed (deltalake, no JVM)."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from _decision_writers import T0, decision, decisions_plan
from contract_gate import decisions
from contract_gate.decisions.delta_path import LAYOUT_PROPERTIES, SCHEMA, DeltaPathDecisionStore, migrate_layout
from contract_gate.decisions.record import ObjectScope
from contract_gate.freshness.decision_log import accepted_decisions, contract_decisions, of_object, read_decisions
from contract_gate_plan.model import Plan
from contract_gate_plan.names import gate_names
from contract_gate_plan.ownership import owner_properties

OLD_SCHEMA = pa.schema([field for field in SCHEMA if field.name != "object"])  # before the column


def plan(path: str, contract_id: str, object_name: str, objects: int) -> Plan:
    return decisions_plan(path, contract_id, object_name=object_name,
                          names=gate_names(contract_id, object_name, objects, None))


def old_table(path: str, *rows) -> None:
    """A decision table as the gate created it before records named their object, holding ``rows``."""
    table = DeltaTable.create(path, OLD_SCHEMA, partition_by=["contract_id"], name="contract_gate_decisions",
                              configuration=LAYOUT_PROPERTIES)
    table.alter.set_table_properties(owner_properties(None, "decisions"), raise_if_not_exists=False)
    for record in rows:
        row = record.as_row()
        row.pop("object")
        row["rule_failures"] = list(row["rule_failures"].items())
        write_deltalake(path, pa.Table.from_pylist([row], schema=OLD_SCHEMA), mode="append")


def operations(path: str) -> list[str]:
    return [entry["operation"] for entry in reversed(DeltaTable(path).history())]


def test_an_old_table_gets_the_column_once_and_its_rows_are_the_only_objects(tmp_path):
    path = str(tmp_path / "decisions")
    old_table(path, decision("s1", "orders", rows_published=3), decision("s2", "orders", "quarantined"))
    orders = plan(path, "orders", "orders", objects=1)

    # a re-triggered old batch is found decided by the one-object contract: no second final record
    stored = decisions.record_decision(orders, decision("s1", "orders", "quarantined", object="orders"))
    assert (stored["outcome"], stored["object"]) == ("published", None)
    decisions.record_decision(orders, decision("s3", "orders", decided_at=T0 + timedelta(minutes=3), object="orders"))
    decisions.record_decision(orders, decision("s4", "orders", decided_at=T0 + timedelta(minutes=4), object="orders"))

    table = DeltaTable(path)
    assert [field.name for field in table.schema().fields][-1] == "object"
    assert operations(path).count("ADD COLUMN") == 1  # added by the first write only
    assert table.metadata().partition_columns == ["contract_id"]
    store = DeltaPathDecisionStore(orders.tables.decisions)
    assert sorted((d.submission_id, d.object) for d in store.records(contract_id="orders")) == [
        ("s1", None), ("s2", None), ("s3", "orders"), ("s4", "orders")]
    assert decisions.final_decision(orders, "s2")["outcome"] == "quarantined"
    assert [r["submission_id"] for r in contract_decisions(orders)] == ["s4", "s3", "s2", "s1"]
    assert [r["submission_id"] for r in accepted_decisions(orders)] == ["s4", "s3", "s1"]


def test_an_old_table_holds_nothing_of_a_contract_of_several_objects(tmp_path):
    path = str(tmp_path / "decisions")
    old_table(path, decision("s1", "shop"))
    lines = plan(path, "shop", "lines", objects=2)

    assert decisions.final_decision(lines, "s1") is None  # read before any write: no column yet
    assert contract_decisions(lines) == []
    stored = decisions.record_decision(lines, decision("s1", "shop", "quarantined", object="lines"))

    assert (stored["outcome"], stored["object"]) == ("quarantined", "lines")


def test_each_object_keeps_its_own_final_record_of_one_submission(tmp_path):
    path = str(tmp_path / "decisions")
    orders, lines = (plan(path, "urn:shop", name, objects=2) for name in ("orders", "lines"))

    # identical batches at two objects' landings derive one submission id: two decisions all the same
    decisions.record_decision(orders, decision("s1", "urn:shop", object="orders"))
    decisions.record_decision(lines, decision("s1", "urn:shop", "quarantined", object="lines"))
    again = decisions.record_decision(lines, decision("s1", "urn:shop", object="lines"))

    assert again["outcome"] == "quarantined"
    assert decisions.final_decision(orders, "s1")["outcome"] == "published"
    assert decisions.final_decision(lines, "s1")["outcome"] == "quarantined"
    rows = read_decisions(path, ["urn:shop"], limit=1)["urn:shop"]
    assert sorted((r["object"], r["outcome"]) for r in rows) == [("lines", "quarantined"), ("orders", "published")]
    assert [r["outcome"] for r in of_object(rows, lines)] == ["quarantined"]
    scope = ObjectScope.of(lines)
    assert (scope.sole, scope.holds(None), scope.holds("lines")) == (False, False, True)


def test_migrating_an_old_unpartitioned_table_keeps_its_rows_and_adds_the_column(tmp_path):
    path = str(tmp_path / "decisions")
    old = DeltaTable.create(path, OLD_SCHEMA, name="contract_gate_decisions")  # unpartitioned, no object
    old.alter.set_table_properties(owner_properties(None, "decisions"), raise_if_not_exists=False)
    row = decision("s1", "orders").as_row()
    row.pop("object")
    row["rule_failures"] = []
    write_deltalake(path, pa.Table.from_pylist([row], schema=OLD_SCHEMA), mode="append")

    assert migrate_layout({"kind": "path", "path": path})["rows"] == 1

    table = DeltaTable(path)
    assert "object" in [field.name for field in table.schema().fields]
    [kept] = DeltaPathDecisionStore({"kind": "path", "path": path}).records()
    assert (kept.submission_id, kept.object) == ("s1", None)
