"""The main job: land a good and a bad sample batch for each example contract, gate each one
through the contract's generated DAG (``dag.test()`` on the local Airflow, SQLite, local
Spark), and print the decision table.

    .venv/bin/python scripts/demo.py [--contract contracts/orders.yaml ...]

Tables land under ``lakehouse/`` in ``CONTRACT_GATE_HOME`` (default: the repository root):
``lakehouse/landing/<object>`` (the batches), ``lakehouse/<object>`` (targets),
``lakehouse/<object>_quarantine``, ``lakehouse/contract_gate_decisions``. Sample batches carry
a new business key range on every run, so running the demo again gates new batches.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import time
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def regional(bad: bool, salt: int) -> list[dict]:
    day = datetime.now(timezone.utc).date()
    rows = [{"region_code": f"DE-{salt % 97:02d}{i}", "report_date": str(day - timedelta(days=1)),
             "reporting_org": f"Health office {i}", "case_count": 40 + i, "status": "provisional"} for i in range(5)]
    if bad:
        rows[1]["case_count"] = -3          # case_count.minimum
        rows[2]["status"] = "estimated"     # status.enum
        rows[3]["region_code"] = " "        # region_code.not_blank
    return rows


def orders(bad: bool, salt: int) -> list[dict]:
    now = datetime.now(timezone.utc).replace(microsecond=0)
    rows = [{"order_id": f"ORD-{salt}-{i}", "customer_id": f"CUST-{i % 3}", "order_total": 19.5 + i,
             "currency": ["EUR", "USD", "GBP"][i % 3], "order_timestamp": (now - timedelta(minutes=i)).isoformat()}
            for i in range(8)]
    if bad:
        rows[0]["order_total"] = -12.0      # order_total_not_negative
        rows[1]["currency"] = "JPY"         # currency_allowed
    return rows


def meter_readings(bad: bool, salt: int) -> list[dict]:
    start = (datetime.now(timezone.utc) - timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
    rows = [{"meter_id": f"M{(salt % 9000) * 10 + i:06d}", "channel": 1 + i % 4, "reading_ts": start,
             "kwh": Decimal(f"{100 + i}.125"), "voltage": 230.0, "quality_flag": "ok"} for i in range(6)]
    if bad:
        rows[0]["channel"] = 9              # channel.maximum
        rows[1]["meter_id"] = "X1"          # meter_id.pattern
    return rows


SAMPLES = {"regional_daily_cases": regional, "orders": orders, "meter_readings": meter_readings}


def write_batch(folder: Path, fmt: str, rows: list[dict]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    if fmt == "csv":
        with (folder / "part-0.csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    elif fmt == "json":
        (folder / "part-0.json").write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema([("meter_id", pa.string()), ("channel", pa.int32()), ("reading_ts", pa.timestamp("us", "UTC")),
                            ("kwh", pa.decimal128(12, 3)), ("voltage", pa.float64()), ("quality_flag", pa.string())])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-0.parquet")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contract", action="append", type=Path, help="default: every contracts/*.yaml with samples")
    args = parser.parse_args(argv)
    home = Path(os.environ.setdefault("CONTRACT_GATE_HOME", str(REPO))).resolve()
    contracts = [c.resolve() for c in args.contract or sorted((REPO / "contracts").glob("*.yaml"))]

    from contract_gate.cli.run_cmd import prepare_environment, run_dag

    salt = int(time.time()) % 1_000_000
    table = []
    for contract in contracts:
        prepare_environment(contract, None, verbose=False)
        from contract_gate.contract.compiler import compile_plan

        plan = compile_plan(contract)
        sample = SAMPLES.get(plan["contract"]["id"])
        if sample is None:
            print(f"demo: no sample batches for {contract.name}; skipped", file=sys.stderr)
            continue
        landing = plan["tables"]["landing"]
        for batch in ("good", "bad"):
            # the bad batch has its own business keys: it is judged on its rows, not on the good one's keys
            write_batch(home / landing["path"], landing["format"], sample(batch == "bad", salt + (batch == "bad")))
            started = time.perf_counter()
            decision = run_dag(contract, {})
            table.append((plan["contract"]["id"], batch, decision, time.perf_counter() - started))
    print_table(table, home)
    return 0 if all(d.get("outcome") in ("published", "split", "quarantined") for _, _, d, _ in table) else 1


def print_table(table: list, home: Path) -> None:
    header = ("contract", "batch", "submission", "decision", "landed", "published", "quarantined", "seconds",
              "failing rules")
    rows = [(c, b, d.get("submission_id", "-"), d.get("outcome"), d.get("rows_landed"), d.get("rows_published"),
             d.get("rows_quarantined"), f"{s:.1f}",
             ", ".join(f"{rule}={d.get('rule_failures', {}).get(rule, '-')}" for rule in d.get("failed_rules") or [])
             or "-")
            for c, b, d, s in table]
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    print()
    for row in (header, *rows):
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip())
    print(f"\ntables under {home / 'lakehouse'}; decisions in {home / 'lakehouse' / 'contract_gate_decisions'}")


if __name__ == "__main__":
    sys.exit(main())
