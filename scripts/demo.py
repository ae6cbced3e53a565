"""The main job: land a good and a bad sample batch for each example contract, gate each one
through the contract's generated DAG (``dag.test()`` on the local Airflow, SQLite), and print
the decision table.

    .venv/bin/python scripts/demo.py [--contract contracts/orders.yaml ...] [--mode spark_connect|local]

By default every gate runs in the ``spark_connect`` mode against one Spark Connect server that
the demo starts on 127.0.0.1 (local Spark with Delta) and stops at the end: one warm JVM for all
six gates, which takes a fraction of the time of the ``local`` mode's two cold spark-submit JVMs
per gate (``--mode local``).

Tables land under ``lakehouse/`` in ``CONTRACT_GATE_HOME`` (default: the repository root):
``lakehouse/landing/<object>`` (the batches), ``lakehouse/<object>`` (targets),
``lakehouse/<object>_quarantine``, ``lakehouse/contract_gate_decisions``. Sample batches carry
a new business key range on every run, so running the demo again gates new batches.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

from contract_gate.cli.quiet import engine_output_to, log_path
from contract_gate.cli.tables import render_table

REPO = Path(__file__).resolve().parents[1]


def regional(bad: bool, salt: int) -> list[dict]:
    day = datetime.now(timezone.utc).date()
    rows = [{"region_code": f"DE-{salt % 100000:05d}{i}", "report_date": str(day - timedelta(days=1)),
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
    parser.add_argument("--mode", choices=("spark_connect", "local"), default="spark_connect",
                        help="spark_connect (default): every gate through one local Spark Connect server; "
                             "local: the contracts' own mode, two spark-submit JVMs per gate")
    args = parser.parse_args(argv)
    home = Path(os.environ.setdefault("CONTRACT_GATE_HOME", str(REPO))).resolve()
    contracts = [c.resolve() for c in args.contract or sorted((REPO / "contracts").glob("*.yaml"))]
    # the table, not the tasks' log lines (set before Airflow is imported: it reads its configuration once)
    os.environ.setdefault("AIRFLOW__LOGGING__LOGGING_LEVEL", "WARNING")

    log = log_path("demo")
    # Airflow logs on stdout too: both go to the log, the table comes after
    with engine_output_to(log) as terminal, contextlib.redirect_stdout(sys.stderr), \
            warm_spark(args.mode, terminal) as ready:
        from contract_gate.cli.run_cmd import prepare_environment, run_dag
        from contract_gate.contract.compiler import compile_plan

        salt = int(time.time()) % 1_000_000
        table = []
        for contract in contracts:
            prepare_environment(contract, None)
            plan = compile_plan(contract)
            sample = SAMPLES.get(plan.contract_id)
            if sample is None:
                print(f"demo: no sample batches for {contract.name}; skipped", file=terminal)
                continue
            landing = plan.require_tables().landing  # resolved against CONTRACT_GATE_HOME
            for batch in ("good", "bad"):
                # the bad batch has its own business keys: it is judged on its rows, not on the good one's keys
                write_batch(Path(landing.path), landing.format, sample(batch == "bad", salt + (batch == "bad")))
                ready()
                started = time.perf_counter()
                [decision] = run_dag(contract, {})  # each example contract gates one object
                table.append((plan.contract_id, batch, decision, time.perf_counter() - started))
    print_table(table, home)
    print(f"Airflow's and Spark's output: {log}")
    return 0 if all(d.get("outcome") in ("published", "split", "quarantined") for _, _, d, _ in table) else 1


@contextlib.contextmanager
def warm_spark(mode: str, terminal):
    """In ``spark_connect`` mode: launch one local Spark Connect server, point every gate at it
    (``CONTRACT_GATE_EXECUTION_MODE`` and the ``spark_connect_default`` connection) and stop it
    at the end. Yields a function that waits until the server listens (the demo imports Airflow
    and lands its first batch while the JVM starts)."""
    if mode == "local":
        yield lambda: None
        return
    from contract_gate.local_spark.connect_server import LocalConnectServer

    with tempfile.TemporaryDirectory(prefix="contract-gate-demo-connect-") as folder:
        server = LocalConnectServer(Path(folder))
        launched = time.perf_counter()
        server.launch()
        waited: list[float] = []

        def ready() -> None:
            if not waited:
                server.wait()
                waited.append(time.perf_counter() - launched)
                print(f"demo: a local Spark Connect server is up on {server.url} after {waited[0]:.0f} s; "
                      "every gate runs through it", file=terminal)

        os.environ.update(CONTRACT_GATE_EXECUTION_MODE="spark_connect",
                          AIRFLOW_CONN_SPARK_CONNECT_DEFAULT=server.connection())
        try:
            yield ready
        finally:
            server.stop()


def print_table(table: list, home: Path) -> None:
    header = ("contract", "batch", "submission", "decision", "landed", "published", "quarantined", "seconds",
              "failing rules")
    rows = [(c, b, d.get("submission_id", "-"), d.get("outcome"), d.get("rows_landed"), d.get("rows_published"),
             d.get("rows_quarantined"), f"{s:.1f}",
             ", ".join(f"{rule}={d.get('rule_failures', {}).get(rule, '-')}" for rule in d.get("failed_rules") or [])
             or "-")
            for c, b, d, s in table]
    print()
    print("\n".join(render_table(header, rows)))
    print(f"\ntables under {home / 'lakehouse'}; decisions in {home / 'lakehouse' / 'contract_gate_decisions'}")


if __name__ == "__main__":
    sys.exit(main())
