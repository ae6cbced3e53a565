"""Foreign-key benchmark: a batch validated with and without its ``references`` rule.

    .venv/bin/python benchmarks/validation/foreign_keys.py [--rows 10000000] [--parent-rows 1000000] [--runs 3]

A parent contract's target holds ``--parent-rows`` customers (created as the gate creates a
target, so its properties name it); the child batch of ``--rows`` orders references them, 0.1 %
of its keys absent. The same batch is validated, interleaved run by run in one Spark session,
against the child's plan with its foreign key and against the same plan without it; the median
wall times and their ratio are printed (the issue's bound: at most 1.3x). Data is generated once
into benchmarks/out/foreign_keys/ (git-ignored) and read at a pinned version.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from pyspark.sql import functions as F

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "out" / "foreign_keys"
os.environ["CONTRACT_GATE_HOME"] = str(OUT)  # the contracts' relative tables live there

from contract_gate.contract.compiler import compile_plans  # noqa: E402 - after CONTRACT_GATE_HOME
from contract_gate_plan.addresses import Address  # noqa: E402
from contract_gate_spark.runtime.session import get_session  # noqa: E402
from contract_gate_spark.steps.target import ensure_target  # noqa: E402
from contract_gate_spark.validation.candidate import read_candidate  # noqa: E402
from contract_gate_spark.validation.engine import run_validation  # noqa: E402

HEADER = """\
apiVersion: v3.1.0
kind: DataContract
id: {id}
version: 1.0.0
status: active
schema:
  - name: {object}
    physicalType: table
    properties:
"""
GATE = "customProperties:\n  - property: contractGate\n    value:\n      landing: {{path: landing/{object}}}\n"
CUSTOMERS = HEADER.format(id="bench_customers", object="customers") + """\
      - {name: customer_id, physicalType: bigint, logicalType: integer, primaryKey: true}
      - {name: segment, physicalType: string, logicalType: string}
""" + GATE.format(object="customers")
ORDERS = HEADER.format(id="bench_orders", object="orders") + """\
      - {name: order_id, physicalType: bigint, logicalType: integer, primaryKey: true}
      - name: customer_id
        physicalType: bigint
        logicalType: integer
        required: true
{relationship}      - {name: amount, physicalType: double, logicalType: number, logicalTypeOptions: {minimum: 0}}
""" + GATE.format(object="orders")
RELATIONSHIP = "        relationships:\n          - to: customers.customer_id\n"


def plans() -> tuple[dict, dict, dict]:
    """(parent, child with the foreign key, child without it) plan documents."""
    for name, text in (("with", ORDERS.replace("{relationship}", RELATIONSHIP)),
                       ("without", ORDERS.replace("{relationship}", ""))):
        folder = OUT / "contracts" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "customers.yaml").write_text(CUSTOMERS, encoding="utf-8")
        (folder / "orders.yaml").write_text(text, encoding="utf-8")
    documents = [compile_plans(OUT / "contracts" / name / f"{obj}.yaml").plan().document
                 for name, obj in (("with", "customers"), ("with", "orders"), ("without", "orders"))]
    return documents[0], documents[1], documents[2]


def prepare(spark, parent: dict, rows: int, parent_rows: int) -> str:
    target = Address.from_document(parent["tables"]["target"]).location
    if not (Path(target) / "_delta_log").exists():
        ensure_target(spark, parent)
        spark.range(1, parent_rows + 1).select(F.col("id").alias("customer_id"),
                                              F.lit("retail").alias("segment")) \
            .write.format("delta").mode("append").save(target)
    batch = OUT / f"orders_{rows}"
    if not (batch / "_delta_log").exists():
        # every 1000th order references a customer the parent lacks
        customer = F.when(F.col("id") % 1000 == 0, F.col("id") + parent_rows).otherwise(F.col("id") % parent_rows + 1)
        spark.range(rows).select(F.col("id").alias("order_id"), customer.alias("customer_id"),
                                 (F.col("id") % 97).cast("double").alias("amount")) \
            .write.format("delta").save(str(batch))
    return str(batch)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--parent-rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    spark = get_session("contract-gate-fk-bench", {"spark.ui.enabled": "false", "spark.driver.memory": "4g"})
    parent, with_fk, without_fk = plans()
    batch = prepare(spark, parent, args.rows, args.parent_rows)
    times: dict[str, list[float]] = {"without": [], "with": []}
    failed = None
    for run in range(args.runs + 1):  # the first run warms the JVM up and is not counted
        for name, plan in (("without", without_fk), ("with", with_fk)):
            started = time.perf_counter()
            report = run_validation(spark, plan, read_candidate(spark, batch, format="delta", version=0))
            elapsed = time.perf_counter() - started
            if run:
                times[name].append(elapsed)
            if name == "with":
                failed = next(r for r in report["rules"] if r["id"] == "customer_id.references")["failed_rows"]
        print(f"run {run}: " + ", ".join(f"{k} {v[-1]:.1f}s" for k, v in times.items() if v and run), flush=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"rows {args.rows}, parent rows {args.parent_rows}, orphans {failed}; median without {medians['without']:.2f}s, "
          f"with {medians['with']:.2f}s, ratio {medians['with'] / medians['without']:.2f}x; "
          f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
