"""CLI benchmark: ``contract-gate validate`` on a Parquet file against datacontract-cli with DuckDB.

    .venv/bin/python benchmarks/cli/run.py [--rows 200000] [--runs 3]

What a user at a terminal waits for, each a fresh process timed from start to exit, interleaved
run by run:

  remote      ``contract-gate validate --remote sc://...`` to a Spark Connect server already up
              (started here from the pip-installed pyspark with Delta, as tests/connect_server.py
              does): a thin client, no JVM in the command's process
  local       ``contract-gate validate`` with no server: a cold local Spark, started the way the
              local runner starts a gate job (jars from the cache, the class archive)
  datacontract  ``datacontract test`` (datacontract-cli with DuckDB) with the same rules, written
              here as an ODCS contract of its own; installed into a virtualenv of its own under
              ~/.cache/contract-gate-bench (never into .venv)

The data is the orders contract's shape (contracts/orders.yaml), generated once with pyarrow into
benchmarks/out/cli/ (git-ignored), with a few rows breaking each rule; both tools must report the
same rules failing, or the figures are not printed. Also a 10-row file through both contract-gate
modes: the fixed start-up cost. Medians and ratios go to benchmarks/RESULTS.md, section "CLI".
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "out" / "cli"
CONTRACT = ROOT / "contracts" / "orders.yaml"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "contract-gate-bench"
DATACONTRACT_VENV = CACHE / "datacontract-venv"
DATACONTRACT = "datacontract-cli[duckdb]==1.2.8"
CONTRACT_GATE = [sys.executable, "-m", "contract_gate.cli.main"]
WARM_UP_RUNS = 3

# rows that break each rule, by row number (one row each breaks at most one rule)
NEGATIVE_TOTAL = range(100, 112)      # order_total < 0            12 rows
BAD_CURRENCY = range(200, 207)        # currency not USD/EUR/GBP    7 rows
NULL_CUSTOMER = range(300, 305)       # customer_id NULL            5 rows
DUPLICATED = range(400, 403)          # order_id of the row before  3 keys, 6 rows
EXPECTED_FAILING = {"order_total", "currency", "customer_id", "order_id"}

DATACONTRACT_YAML = """\
apiVersion: v3.0.2
kind: DataContract
id: orders
name: Checkout orders
version: 1.0.0
status: active
servers:
  - server: local
    type: local
    format: parquet
    path: {path}
schema:
  - name: orders
    physicalType: table
    properties:
      - name: order_id
        physicalType: varchar
        logicalType: string
        required: true
        unique: true
        primaryKey: true
      - name: customer_id
        physicalType: varchar
        logicalType: string
        required: true
      - name: order_total
        physicalType: double
        logicalType: number
        required: true
        logicalTypeOptions:
          minimum: 0
      - name: currency
        physicalType: varchar
        logicalType: string
        required: true
        quality:
          - type: sql
            description: currency is USD, EUR or GBP
            query: SELECT COUNT(*) FROM orders WHERE currency NOT IN ('USD', 'EUR', 'GBP')
            mustBe: 0
      - name: order_timestamp
        physicalType: timestamp
        logicalType: timestamp
        required: true
"""
"""The same rules as contracts/orders.yaml: five required columns, the key unique, order_total not
negative, currency in the list (a ``type: sql`` check: datacontract-cli has no enum check of ODCS
values)."""


def generate(path: Path, rows: int) -> Path:
    """The orders batch as one Parquet file, with the rule breakers above."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.is_file() and pq.read_metadata(path).num_rows == rows:
        return path
    ids = [f"O{i:09d}" for i in range(rows)]
    for i in DUPLICATED:
        if i < rows:
            ids[i] = ids[i - 1]
    currencies = ("EUR", "USD", "GBP")
    table = pa.table({
        "order_id": ids,
        "customer_id": [None if i in NULL_CUSTOMER else f"C{i % 5000:05d}" for i in range(rows)],
        "order_total": [-1.5 if i in NEGATIVE_TOTAL else round(5 + (i * 7919) % 50000 / 100, 2) for i in range(rows)],
        "currency": ["XXX" if i in BAD_CURRENCY else currencies[i % 3] for i in range(rows)],
        "order_timestamp": pa.array([1_740_000_000_000_000 + i * 1_000_000 for i in range(rows)],
                                    pa.timestamp("us", tz="UTC")),
    })
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def datacontract_cli() -> Path:
    """The ``datacontract`` command of a virtualenv of its own, made on first use."""
    command = DATACONTRACT_VENV / "bin" / "datacontract"
    if not command.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(DATACONTRACT_VENV)], check=True)
        subprocess.run([str(DATACONTRACT_VENV / "bin" / "pip"), "install", "--quiet", DATACONTRACT], check=True)
    return command


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=OUT, timeout=900)
    return time.perf_counter() - started, done


def failing_gate(report: Path) -> set[str]:
    """The columns of the rules contract-gate's report says failed."""
    rules = json.loads(report.read_text(encoding="utf-8"))["rules"]
    return {column for rule in rules if rule["passed"] is False for column in rule["columns"]}


def failing_datacontract(done: subprocess.CompletedProcess) -> set[str]:
    """The fields of the checks datacontract-cli's result table says failed (its columns: result,
    check, field, details)."""
    failed = set()
    for line in done.stdout.splitlines():
        cells = [cell.strip() for cell in line.split("│")]
        if len(cells) > 4 and cells[1] == "failed":
            failed.add(cells[3])
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    big = generate(OUT / f"orders-{args.rows}.parquet", args.rows)
    small = generate(OUT / "orders-10.parquet", 10)
    (OUT / "datacontract.yaml").write_text(DATACONTRACT_YAML.format(path=big), encoding="utf-8")
    datacontract = datacontract_cli()

    sys.path.insert(0, str(ROOT / "tests"))
    from connect_server import ConnectServer

    server_folder = OUT / "connect-server"
    server_folder.mkdir(exist_ok=True)
    server = ConnectServer(server_folder).start()
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    report = OUT / "report.json"
    gate = [*CONTRACT_GATE, "validate", str(CONTRACT), "--format", "parquet", "--report", str(report), "--data"]
    runs = {
        "remote 200k": [*gate, str(big), "--remote", server.url],
        "local 200k": [*gate, str(big)],
        "datacontract 200k": [str(datacontract), "test", str(OUT / "datacontract.yaml"), "--server", "local"],
        "remote 10": [*gate, str(small), "--remote", server.url],
        "local 10": [*gate, str(small)],
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    try:
        # A server that is up has served queries: its JVM has compiled the query paths. Its first
        # few runs (2-3x slower) are the server's warm-up, not the client's cost.
        for _ in range(WARM_UP_RUNS):
            timed(runs["remote 10"], env)
            timed(runs["remote 200k"], env)
        started_load = os.getloadavg()[0]
        for _ in range(args.runs):
            for name, argv in runs.items():
                report.unlink(missing_ok=True)
                seconds, done = timed(argv, env)
                if name.endswith("200k"):
                    found = failing_datacontract(done) if name.startswith("datacontract") else failing_gate(report)
                    if found != EXPECTED_FAILING:
                        print(f"{name}: failing rules {sorted(found)}, expected {sorted(EXPECTED_FAILING)}\n"
                              f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}", file=sys.stderr)
                        return 1
                times[name].append(seconds)
                print(f"{name:18} {seconds:6.2f} s", flush=True)
    finally:
        server.stop()
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"\nmedians of {args.runs} ({args.rows} rows; load average {started_load:.1f} at the start,"
          f" {os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores)")
    for name, value in median.items():
        print(f"  {name:18} {value:6.2f} s   ({', '.join(f'{v:.2f}' for v in times[name])})")
    print(f"  remote / datacontract  {median['remote 200k'] / median['datacontract 200k']:.2f}x (target <= 1.5)")
    print(f"  local / datacontract   {median['local 200k'] / median['datacontract 200k']:.2f}x")
    print(f"  local 200k             {median['local 200k']:.2f} s (target <= 12 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
