"""Validation benchmark: this engine against the floor and two other ways to gate a batch.

    .venv/bin/python benchmarks/validation/run.py [--rows 1000000 10000000] [--runs 3]

For each data shape (regional_daily_cases, orders; wide_50, a generated 50-column contract with
150 rules, at 10M rows only unless --wide-rows says otherwise) and size, with about 1 % of rows
breaking a rule, it times in one Spark session, interleaved run by run:

  (a) floor     one aggregate scan reading every column + one group-by on the key
  (b) engine    contract_gate_spark.validation.engine.run_validation on the contract's compiled plan
  (c) pyspark-contracts   the same rules as a pyspark_contracts.Contract (mode="soft")
  (d) plain     the usual hand-written gate: one filter().count() per rule + a group-by

Data is generated once into benchmarks/out/ (git-ignored) as Delta tables and read at a
pinned version. Medians and ratios replace the current table of benchmarks/RESULTS.md, section
"Validation engine" (``--no-write`` only prints them).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DateType, DoubleType, LongType, StringType, TimestampType
from pyspark_contracts import Contract, Field, check

from contract_gate.contract.compiler import compile_plan
from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.validation.engine import run_validation
from contract_gate_spark.runtime.session import get_session

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "out" / "validation"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
SECTION = "## Validation engine"
RUN_BEGIN = "<!-- current run: written by benchmarks/validation/run.py -->"
RUN_END = "<!-- end of current run -->"
SESSION_CONF = {
    "spark.ui.enabled": "false",
    "spark.driver.memory": "8g",
    # Spark keeps 100 generated classes by default; the four variants make more, so each
    # interleaved run would compile its classes again and the JIT start over on them: no
    # run after the warm-up would be warm (at 1M rows the engine compiled 33 per run).
    "spark.sql.codegen.cache.maxEntries": "1000",
}
BLANK = r"^[\s\p{Z}\x{85}\x{200B}\x{FEFF}]*$"


def bucket() -> F.Column:
    """0..999 per row, spread by hash: each violation kind takes 2 buckets (0.2 % of rows)."""
    return F.pmod(F.xxhash64("id"), F.lit(1000))


def generate_cases(spark: SparkSession, rows: int) -> DataFrame:
    b = bucket()
    source_id = F.when(b.between(8, 9), F.col("id") - 1).otherwise(F.col("id"))  # duplicate key
    region = F.concat(F.lit("R"), F.lpad((source_id % 5000).cast("string"), 5, "0"))
    return spark.range(rows).select(
        F.when(b < 2, F.lit(None)).when(b.between(2, 3), F.lit("  ")).otherwise(region).alias("region_code"),
        F.date_add(F.lit(date(2020, 1, 1)), (source_id / 5000).cast("int")).alias("report_date"),
        F.concat(F.lit("ORG"), (F.col("id") % 40).cast("string")).alias("reporting_org"),
        F.when(b.between(4, 5), -F.col("id") % 7 - 1).otherwise(F.col("id") % 500).cast("bigint").alias("case_count"),
        F.when(b.between(6, 7), F.lit("unknown")).when(F.col("id") % 3 == 0, "provisional").otherwise("final").alias("status"),
    )


def generate_orders(spark: SparkSession, rows: int) -> DataFrame:
    b = bucket()
    source_id = F.when(b.between(6, 7), F.col("id") - 1).otherwise(F.col("id"))  # duplicate key
    return spark.range(rows).select(
        F.concat(F.lit("O"), source_id.cast("string")).alias("order_id"),
        F.when(b < 2, F.lit(None)).otherwise(F.concat(F.lit("C"), (F.col("id") % 100000).cast("string"))).alias("customer_id"),
        F.when(b.between(2, 3), -1.5).otherwise((F.col("id") % 10000) / 100.0).cast("double").alias("order_total"),
        F.when(b.between(4, 5), F.lit("JPY")).otherwise(F.element_at(F.array(F.lit("USD"), F.lit("EUR"), F.lit("GBP")), (F.col("id") % 3 + 1).cast("int"))).alias("currency"),
        F.when(b.between(8, 9), F.lit(None)).otherwise(F.timestamp_seconds(F.lit(1_700_000_000) + F.col("id"))).alias("order_timestamp"),
    )


WIDE_COLUMNS = 50
WIDE_KINDS = ("bigint", "double", "string", "date")  # column c01 is bigint, c02 double, ...
WIDE_CODES = ("ALPHA", "BRAVO", "CHARLIE", "DELTA")


def wide_contract_text() -> str:
    """The 50-column contract: a string key (required, maxLength, primary key) and 49 columns
    with 3 rules each (required + two range, length or enum options): 149 row rules and the
    key's uniqueness, 150 rules."""
    options = {
        "bigint": ("integer", "logicalTypeOptions: {minimum: 0, maximum: 1000000}"),
        "double": ("number", "logicalTypeOptions: {minimum: 0, maximum: 1000000}"),
        "string": ("string", "logicalTypeOptions: {maxLength: 12}\n        enum: ["
                   + ", ".join(f"{{value: {code}}}" for code in WIDE_CODES) + "]"),
        "date": ("date", 'logicalTypeOptions: {minimum: "2020-01-01", maximum: "2030-12-31"}'),
    }
    properties = [
        "      - {name: record_id, physicalType: string, logicalType: string, required: true,\n"
        "         primaryKey: true, logicalTypeOptions: {maxLength: 20}}"
    ]
    for index in range(1, WIDE_COLUMNS):
        kind = WIDE_KINDS[(index - 1) % len(WIDE_KINDS)]
        logical, extra = options[kind]
        properties.append(
            f"      - name: c{index:02d}\n        physicalType: {kind}\n        logicalType: {logical}\n"
            f"        required: true\n        {extra}"
        )
    return (
        "apiVersion: v3.1.0\nkind: DataContract\nid: wide_50\nname: Fifty columns\nversion: 1.0.0\n"
        "status: active\nschema:\n  - name: wide_50\n    physicalType: table\n    properties:\n"
        + "\n".join(properties) + "\n"
    )


def wide_contract_path() -> Path:
    path = OUT / "wide_50.yaml"
    if not path.exists() or path.read_text(encoding="utf-8") != wide_contract_text():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wide_contract_text(), encoding="utf-8")
    return path


def generate_wide(spark: SparkSession, rows: int) -> DataFrame:
    """50 columns; each of the 49 checked columns breaks a rule on 2 of 10,000 buckets (half
    NULL, half out of range or not in the list), so about 1 % of rows break one rule; 0.1 % of
    keys repeat the previous row's."""
    b = F.pmod(F.xxhash64("id"), F.lit(10000))
    source_id = F.when(b >= 9990, F.col("id") - 1).otherwise(F.col("id"))
    columns = [F.concat(F.lit("K"), source_id.cast("string")).alias("record_id")]
    for index in range(1, WIDE_COLUMNS):
        kind = WIDE_KINDS[(index - 1) % len(WIDE_KINDS)]
        spread = F.col("id") + index
        value, bad = {
            "bigint": ((spread * 7919) % 1_000_000, F.lit(-1)),
            "double": ((spread * 7919) % 10_000_000 / 10.0, F.lit(2e6)),
            "string": (F.element_at(F.array(*map(F.lit, WIDE_CODES)), (spread % 4 + 1).cast("int")), F.lit("ZULU")),
            "date": (F.date_add(F.lit(date(2020, 1, 1)), (spread % 3000).cast("int")), F.lit(date(2019, 12, 31))),
        }[kind]
        columns.append(
            F.when(b == 2 * index, F.lit(None)).when(b == 2 * index + 1, bad).otherwise(value)
            .cast(kind).alias(f"c{index:02d}")
        )
    return spark.range(rows).select(*columns)


def wide_contract_class() -> type:
    """The wide contract's rules as a pyspark_contracts.Contract."""
    fields = {"record_id": Field(StringType(), nullable=False, max_length=20, unique=True), "strict": True}
    for index in range(1, WIDE_COLUMNS):
        kind = WIDE_KINDS[(index - 1) % len(WIDE_KINDS)]
        fields[f"c{index:02d}"] = {
            "bigint": lambda: Field(LongType(), nullable=False, min_value=0, max_value=1_000_000),
            "double": lambda: Field(DoubleType(), nullable=False, min_value=0, max_value=1_000_000),
            "string": lambda: Field(StringType(), nullable=False, max_length=12, allowed_values=list(WIDE_CODES)),
            "date": lambda: Field(DateType(), nullable=False, min_value=date(2020, 1, 1), max_value=date(2030, 12, 31)),
        }[kind]()
    return type("WideContract", (Contract,), fields)


class CasesContract(Contract):
    region_code = Field(StringType(), nullable=False, max_length=10, regex=r"(?s).*[^\s\p{Z}\x{85}\x{200B}\x{FEFF}].*")
    report_date = Field(DateType(), nullable=False, min_value=date(2020, 1, 1))
    reporting_org = Field(StringType(), nullable=False)
    case_count = Field(LongType(), nullable=False, min_value=0)
    status = Field(StringType(), nullable=False, allowed_values=["provisional", "final"])
    min_rows = 1
    strict = True

    @check("region_code + report_date is unique")  # Field(unique=) takes one column only
    def key_unique(self, df):
        duplicates = df.groupBy("region_code", "report_date").count().filter("count > 1")
        return df.join(duplicates.drop("count"), ["region_code", "report_date"], "left_semi")


class OrdersContract(Contract):
    order_id = Field(StringType(), nullable=False, unique=True)
    customer_id = Field(StringType(), nullable=False)
    order_total = Field(DoubleType(), nullable=False, min_value=0)
    currency = Field(StringType(), nullable=False, allowed_values=["USD", "EUR", "GBP"])
    order_timestamp = Field(TimestampType(), nullable=False)
    strict = True


def plain_gate(df: DataFrame, rules: list[str], key: list[str]) -> dict[str, int]:
    """The usual hand-written gate: a count, one filter().count() per rule, a group-by."""
    counts = {"rows": df.count()}
    for index, predicate in enumerate(rules):
        counts[f"rule{index}"] = df.filter(~F.coalesce(F.expr(predicate), F.lit(False))).count()
    duplicates = df.groupBy(*key).count().filter("count > 1")
    counts["duplicates"] = duplicates.agg(F.sum("count")).collect()[0][0] or 0
    return counts


def floor(df: DataFrame, key: list[str]) -> None:
    """The least any gate must do: read every column once, group once by the key."""
    df.agg(*[F.count_if(F.col(c).isNull()) for c in df.columns]).collect()
    df.groupBy(*key).count().filter("count > 1").agg(F.sum("count")).collect()


SHAPES = {
    "regional_daily_cases": (generate_cases, "contracts/regional_daily_cases.yaml", CasesContract),
    "orders": (generate_orders, "contracts/orders.yaml", OrdersContract),
    "wide_50": (generate_wide, OUT / "wide_50.yaml", None),  # contract and class made on demand
}


def ensure_data(spark: SparkSession, shape: str, rows: int) -> str:
    path = OUT / f"{shape}_{rows}"
    if shape == "wide_50":
        wide_contract_path()
    if not (path / "_delta_log" / f"{0:020d}.json").exists():  # no first commit: (re)write
        SHAPES[shape][0](spark, rows).write.format("delta").mode("overwrite").save(str(path))
    return str(path)


MEASURES = ("wall", "cpu", "task cpu")
"""What ``Clock.time`` returns, in its order."""


class Clock:
    """Wall time, CPU time (Spark JVM + this Python process) and task CPU time of one action.

    CPU seconds are the figure to compare on a shared machine: wall time also counts the
    time other processes held the cores. Task CPU is what Spark reports as its tasks' CPU
    (``executorCpuTime`` of the stages the action ran): the work of the query plans alone,
    without the JVM's JIT compiler threads, its garbage collector and the driver's planning,
    which the process CPU also counts.
    """

    def __init__(self, spark: SparkSession) -> None:
        self.jvm_stat = Path(f"/proc/{spark._jvm.java.lang.ProcessHandle.current().pid()}/stat")
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.context = spark.sparkContext._jsc.sc()
        jvm, gateway = spark._jvm, spark.sparkContext._gateway
        # stageList(statuses, details, withSummaries, quantiles, task statuses): all, bare
        self.stage_query = (jvm.java.util.ArrayList(), False, False, gateway.new_array(jvm.double, 0),
                            jvm.java.util.ArrayList())

    def cpu(self) -> float:
        fields = self.jvm_stat.read_text().rsplit(")", 1)[1].split()
        jvm = (int(fields[11]) + int(fields[12])) / self.ticks  # utime + stime
        return jvm + sum(os.times()[:2])

    def stages(self) -> dict[tuple[int, int], float]:
        """Task CPU seconds of every stage the status store holds (the newest 1,000)."""
        self.context.listenerBus().waitUntilEmpty()  # the store is filled from the listener bus
        stages = self.context.statusStore().stageList(*self.stage_query)
        seen = (stages.apply(i) for i in range(stages.size()))
        return {(s.stageId(), s.attemptId()): s.executorCpuTime() / 1e9 for s in seen}

    def time(self, action) -> tuple[float, float, float]:
        before = self.stages()
        wall, cpu = time.perf_counter(), self.cpu()
        action()
        wall, cpu = time.perf_counter() - wall, self.cpu() - cpu
        tasks = sum(seconds for stage, seconds in self.stages().items() if stage not in before)
        return wall, cpu, tasks


def bench(spark: SparkSession, shape: str, rows: int, runs: int) -> dict[str, object]:
    _, contract_path, contract_cls = SHAPES[shape]
    contract_cls = contract_cls or wide_contract_class()
    data = ensure_data(spark, shape, rows)  # also writes the generated wide contract
    plan = compile_plan(ROOT / contract_path)
    candidate = read_candidate(spark, data, format="delta")
    df = candidate.df
    predicates = [r["predicate"] for r in plan.document["rules"] if r["scope"] == "row"]
    quiet = logging.getLogger("benchmark.pyspark_contracts")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    variants = {
        "floor": lambda: floor(df, list(plan.key)),
        "engine": lambda: run_validation(spark, plan, candidate),
        "pyspark_contracts": lambda: contract_cls().validate(df, mode="soft", logger=quiet),
        "plain": lambda: plain_gate(df, predicates, list(plan.key)),
    }
    report = run_validation(spark, plan, candidate)  # warm-up, and the invalid share
    clock = Clock(spark)
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, action in variants.items():
            times[name].append(clock.time(action))
    return {
        "shape": shape,
        "rows": rows,
        "invalid": report["rows"]["invalid"],
        "row_rules": len(predicates),
        **{
            measure: {name: statistics.median(t[index] for t in values) for name, values in times.items()}
            for index, measure in enumerate(MEASURES)
        },
    }


def markdown(results: list[dict[str, object]], load: str) -> str:
    """This run's table, headed by when and where it ran (the section's prose says how)."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=False).stdout.strip() or "unknown"
    lines = [
        RUN_BEGIN,
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}. {load}",
        "",
        "| shape | rows | invalid rows | row rules | measure | (a) floor | (b) engine | (c) pyspark-contracts | (d) plain | (b)/(a) | (c)/(b) | (d)/(b) |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for measure in ("cpu", "task cpu", "wall"):
            m = r[measure]
            lines.append(
                f"| {r['shape']} | {r['rows']:,} | {r['invalid']:,} | {r['row_rules']} | {measure} s | "
                f"{m['floor']:.2f} | {m['engine']:.2f} | {m['pyspark_contracts']:.2f} | {m['plain']:.2f} | "
                f"{m['engine'] / m['floor']:.2f} | {m['pyspark_contracts'] / m['engine']:.2f} | "
                f"{m['plain'] / m['engine']:.2f} |"
            )
    lines.append(RUN_END)
    return "\n".join(lines) + "\n"


def write_table(text: str) -> None:
    """Replace the current run's table in the "Validation engine" section of RESULTS.md (between
    its markers, else at the section's end): RESULTS.md holds current figures; older runs live in
    benchmarks/history/."""
    existing = RESULTS.read_text(encoding="utf-8")
    if RUN_BEGIN in existing and RUN_END in existing:
        head, rest = existing.split(RUN_BEGIN, 1)
        tail = rest.split(RUN_END, 1)[1]
        RESULTS.write_text(head + text.rstrip("\n") + tail, encoding="utf-8")
        return
    lines = existing.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == SECTION), None)
    if start is None:
        RESULTS.write_text(existing.rstrip("\n") + "\n\n" + SECTION + "\n\n" + text, encoding="utf-8")
        return
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    head, tail = "".join(lines[:end]).rstrip("\n"), "".join(lines[end:])
    RESULTS.write_text(head + "\n\n" + text + ("\n" + tail if tail else ""), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--wide-rows", type=int, nargs="+", default=[10_000_000],
                        help="the sizes of --rows at which the 50-column shape runs")
    parser.add_argument("--no-write", action="store_true", help="print only, leave RESULTS.md as it is")
    args = parser.parse_args(argv)
    spark = get_session("contract-gate-benchmark", SESSION_CONF)
    results = []
    for rows in args.rows:
        for shape in args.shapes:
            if shape == "wide_50" and rows not in args.wide_rows:
                continue
            results.append(bench(spark, shape, rows, args.runs))
            print(results[-1], flush=True)
    load = "Load average at the end: {:.1f} / {:.1f} / {:.1f} (1/5/15 min).".format(*os.getloadavg())
    text = markdown(results, load)
    print(text)
    if not args.no_write:
        write_table(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
