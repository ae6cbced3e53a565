"""The landing generator writes the rows it promises: every column typed as the plan says, no
NULLs, keys unique, and the same file for the same seed."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from generate import arrow_type, rows, write_landing

COLUMNS = [
    {"name": "order_id", "type": "string", "nullable": False},
    {"name": "line_no", "type": "int", "nullable": False},
    {"name": "amount", "type": "decimal(12,2)", "nullable": True},
    {"name": "placed_at", "type": "timestamp", "nullable": False},
    {"name": "day", "type": "date", "nullable": True},
    {"name": "lines", "type": "array<struct<sku:string,qty:int>>", "nullable": True},
    {"name": "labels", "type": "map<string,bigint>", "nullable": True},
]


def test_parquet_has_the_plan_types_and_no_nulls(tmp_path):
    table = pq.read_table(write_landing(tmp_path / "landing", COLUMNS, count=25))
    assert table.num_rows == 25
    assert [table.schema.field(c["name"]).type for c in COLUMNS] == [arrow_type(c["type"]) for c in COLUMNS]
    assert table.schema.field("amount").type == pa.decimal128(12, 2)
    assert all(table.column(c["name"]).null_count == 0 for c in COLUMNS)
    assert len(set(table.column("order_id").to_pylist())) == 25


def test_same_seed_same_rows_and_pinned_values(tmp_path):
    assert rows(COLUMNS, 5, seed=3) == rows(COLUMNS, 5, seed=3)
    pinned = rows(COLUMNS, 4, values={"order_id": ["A", "B"]})
    assert [row["order_id"] for row in pinned] == ["A", "B", "A", "B"]


def test_json_lines_one_record_per_row(tmp_path):
    lines = write_landing(tmp_path / "landing", COLUMNS, count=3, fmt="json").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["order_id"] for r in records] == ["order_id-000000", "order_id-000001", "order_id-000002"]
    assert records[0]["placed_at"] == "2024-01-01T00:00:00+00:00" and records[0]["labels"] == {"labels-000000": 1}
