"""Landings as untrusted input, through the generated DAG (``dag.test()`` over Spark Connect, Delta):
coerced values never reach the target, an empty file is a clear decision, not a crash."""

from __future__ import annotations

import json
import os
import stat

import pytest
from _airflow_gate import HOME, order_rows

pytestmark = pytest.mark.usefixtures("gates_over_connect")  # what the gate decides, not where Spark runs

TARGET = "lakehouse/orders"
QUARANTINE = "lakehouse/orders_quarantine"


@pytest.mark.slow
def test_coerced_values_are_quarantined_and_an_empty_file_is_rejected_without_a_commit(gate):
    rows = order_rows(start=700)
    lines = [json.dumps(row) for row in rows]
    lines.append(json.dumps({**rows[0], "order_id": "J-object", "customer_id": {"id": 7}}))
    lines.append(json.dumps(rows[1]).replace('"order_total": 21.0', '"order_total": 1e999').replace("O701", "J-overflow"))
    folder = gate.land("orders", rows, "json")
    (folder / "part-0.json").write_text("\n".join(lines) + "\n")

    coerced = gate.run("orders").decision

    assert coerced["outcome"] == "split"
    assert coerced["rule_failures"] == {"customer_id.type": 1, "order_total.type": 1}
    held = {r["order_id"] for r in gate.rows(QUARANTINE) if r["_submission_id"] == coerced["submission_id"]}
    assert held == {"J-object", "J-overflow"}
    assert not {"J-object", "J-overflow"} & {r["order_id"] for r in gate.rows(TARGET)}

    before = (gate.version(TARGET), sorted(r["order_id"] for r in gate.rows(TARGET)))
    (folder / "part-0.json").write_text("")
    empty = gate.run("orders")

    assert empty.decision["outcome"] == "quarantined" and empty.decision["rows_landed"] == 0
    assert empty.decision["failed_rules"] == ["submission.not_empty"]
    assert empty.states["split"] == "skipped" and empty.states["publish"] == "skipped"
    assert (gate.version(TARGET), sorted(r["order_id"] for r in gate.rows(TARGET))) == before
    runs = HOME / "lakehouse" / "_runs"
    assert stat.S_IMODE(os.stat(runs).st_mode) == 0o700
    # this contract's runs (the standalone cluster tests share Delta's public jars beside them, 0644)
    assert {stat.S_IMODE(p.stat().st_mode) for p in (runs / "orders").rglob("*") if p.is_file()} == {0o600}
