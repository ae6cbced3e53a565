"""The orders example from contracts/orders.yaml, compiled by the real compiler: a 10-row
batch split into exactly the right valid and invalid rows, and a v2 of the contract that
only allows one more currency moving the split with no code change."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from contract_gate.contract.compiler import compile_plan
from contract_gate_spark.validation.diagnostics import split
from contract_gate_spark.validation.engine import run_validation

ORDERS = Path(__file__).resolve().parents[2] / "contracts" / "orders.yaml"
T = datetime(2024, 3, 1, 12, 0)
DDL = "order_id string, customer_id string, order_total double, currency string, order_timestamp timestamp"
BATCH = [
    ("O1", "C1", 10.0, "USD", T),
    ("O2", "C2", 20.5, "EUR", T),
    ("O3", "C3", 99.99, "GBP", T),
    ("O4", "C4", 0.0, "USD", T),  # zero total: on the boundary, valid
    ("O5", "C5", -0.01, "USD", T),  # negative total
    ("O6", "C6", 12.0, "JPY", T),  # currency not allowed (yet)
    ("O7", None, 15.0, "EUR", T),  # no customer
    ("O8", "C8", 15.0, "EUR", None),  # no timestamp
    ("O9", "C9", 7.25, "EUR", T),
    ("O10", None, -5.0, "CHF", T),  # three rules at once
]


@pytest.fixture(scope="module")
def candidate(spark, tmp_path_factory):
    from contract_gate_spark.validation.candidate import read_candidate

    path = str(tmp_path_factory.mktemp("orders") / "orders_candidate")
    spark.createDataFrame(BATCH, DDL).write.format("delta").save(path)
    return read_candidate(spark, path)


def errors_by_order(invalid):
    return {
        row["order_id"]: sorted(entry["rule_id"] for entry in row["_errors"])
        for row in invalid.select("order_id", "_errors").collect()
    }


def test_ten_row_batch_splits_exactly(spark, candidate):
    plan = compile_plan(ORDERS)
    report = run_validation(spark, plan, candidate)
    assert {r["id"]: r["failed_rows"] for r in report["rules"] if r["failed_rows"]} == {
        "customer_id.required": 2,
        "order_total_not_negative": 2,
        "currency_allowed": 2,
        "order_timestamp.required": 1,
    }
    assert report["rows"] == {"valid": 5, "invalid": 5}
    assert report["outcome"] == "fail"

    valid, invalid = split(candidate.df, plan)
    assert sorted(r["order_id"] for r in valid.collect()) == ["O1", "O2", "O3", "O4", "O9"]
    assert valid.columns == candidate.df.columns
    assert errors_by_order(invalid) == {
        "O5": ["order_total_not_negative"],
        "O6": ["currency_allowed"],
        "O7": ["customer_id.required"],
        "O8": ["order_timestamp.required"],
        "O10": ["currency_allowed", "customer_id.required", "order_total_not_negative"],
    }


def test_v2_allowing_one_more_currency_moves_the_split(spark, candidate, tmp_path):
    text = ORDERS.read_text(encoding="utf-8")
    allowed = """allowed: ["'USD'", "'EUR'", "'GBP'"]"""
    assert allowed in text
    v2 = tmp_path / "orders_v2.yaml"
    v2.write_text(
        text.replace(allowed, allowed[:-1] + """, "'JPY'"]""").replace("version: 1.0.0", "version: 2.0.0"),
        encoding="utf-8",
    )
    plan = compile_plan(v2)
    report = run_validation(spark, plan, candidate)
    assert report["contract"]["version"] == "2.0.0"
    assert report["rows"] == {"valid": 6, "invalid": 4}
    valid, invalid = split(candidate.df, plan)
    assert "O6" in {r["order_id"] for r in valid.collect()}
    assert errors_by_order(invalid)["O10"] == ["currency_allowed", "customer_id.required", "order_total_not_negative"]
