"""Lint + plan of 200 generated contracts; prints per-contract milliseconds against the 5 ms target.

    .venv/bin/python benchmarks/contracts/run.py [--contracts 200] [--rounds 5] [--seed 7]

Contracts are generated deterministically (seeded) with 2 to 60 properties each, mixing every
rule form the compiler knows (ranges on numbers, dates and timestamps, lengths, patterns, enums,
notBlank, library metrics with thresholds, DQX checks, spark-sql expressions, type: sql, a
composite key, an SLA and gate settings). They are written to a temporary folder and timed the
way ``contract-gate lint`` and ``contract-gate plan`` run them: read the file, parse, check
against the ODCS schema, build the model, compile, render the plan JSON (``lint`` does all of
that except the rendering). Each contract's time is the best of ``--rounds`` runs (the usual way
to take scheduler noise out of a microbenchmark); the first run of each is shown too. Both the
process's CPU time and wall-clock time are shown: on a shared machine other processes inflate
wall-clock time, not CPU time. The target applies to CPU time at p95.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from contract_gate.contract.compiler import compile_plan
from contract_gate_plan.document import render_plan
from contract_gate.contract.loader import load_contract

TARGET_MS = 5.0

COLUMN_KINDS = [
    ("bigint", "integer", "logicalTypeOptions: {{minimum: 0, maximum: {n}}}"),
    ("int", "integer", "logicalTypeOptions: {{exclusiveMinimum: -1, multipleOf: 5}}"),
    ("decimal(12,3)", "number", "logicalTypeOptions: {{minimum: 0.5, exclusiveMaximum: {n}}}"),
    ("double", "number", "logicalTypeOptions: {{minimum: 0}}"),
    ("date", "date", "logicalTypeOptions: {{minimum: '2020-01-01'}}"),
    ("timestamp", "timestamp", "logicalTypeOptions: {{minimum: '2020-01-01T00:00:00Z'}}"),
    ("string", "string", "logicalTypeOptions: {{minLength: 1, maxLength: {n}, pattern: '^[A-Z0-9-]+$'}}"),
    ("string", "string", "enum: [{{value: a}}, {{value: b}}, {{value: \"c'd\"}}]"),
    ("string", "string", "customProperties: [{{property: notBlank, value: whitespace}}]"),
    ("boolean", "boolean", "required: true"),
]
QUALITY = [
    "- metric: nullValues\n  mustBeLessThan: 5\n  unit: percent\n  severity: warning",
    "- metric: missingValues\n  arguments: {{missingValues: [null, '', N/A]}}\n  mustBeLessThan: 10\n  unit: percent",
    "- metric: duplicateValues\n  mustBe: 0",
    "- type: custom\n  engine: dqx\n  implementation:\n    name: {name}_dqx\n    criticality: warn\n"
    "    check: {{function: is_not_null_and_not_empty, arguments: {{trim_strings: true}}}}",
    "- type: custom\n  engine: spark-sql\n  implementation: \"{name} IS NOT NULL OR {name} IS NULL\"",
    "- type: sql\n  query: SELECT count(*) FROM {{object}} WHERE {{property}} IS NULL\n  mustBeLessOrEqualTo: {n}",
]


def generate(index: int, rng: random.Random) -> str:
    size = rng.choice([2, 4, 8, 12, 20, 30, 45, 60])
    lines = ["apiVersion: v3.1.0", "kind: DataContract", f"id: generated_{index}", "version: 1.0.0",
             "status: active", "domain: bench", "servers:", "  - server: dev", "    type: local",
             "    environment: dev", "    path: lakehouse", "    format: delta", "schema:", f"  - name: dataset_{index}",
             "    physicalType: table", "    properties:",
             "      - name: id", "        physicalType: string", "        logicalType: string",
             "        primaryKey: true", "        primaryKeyPosition: 1", "        required: true",
             "      - name: day", "        physicalType: date", "        logicalType: date",
             "        primaryKey: true", "        primaryKeyPosition: 2"]
    for c in range(size):
        physical, logical, option = rng.choice(COLUMN_KINDS)
        name = f"c{c}"
        lines += [f"      - name: {name}", f"        physicalType: {physical}", f"        logicalType: {logical}",
                  "        " + option.format(n=rng.randint(10, 10_000))]
        if rng.random() < 0.3:
            # missingValues ('' / N/A) and the emptiness check only make sense on strings.
            choices = QUALITY if physical == "string" else [q for q in QUALITY if "'N/A'" not in q and "N/A" not in q
                                                             and "not_empty" not in q]
            entry = rng.choice(choices).format(name=name, n=rng.randint(1, 100))
            lines += ["        quality:"] + ["          " + line for line in entry.splitlines()]
    lines += ["    quality:", "      - id: not_empty", "        metric: rowCount", "        mustBeGreaterThan: 0",
              "slaProperties:", "  - property: freshness", "    value: 2", "    unit: d",
              f"    element: dataset_{index}.day",
              "customProperties:", "  - property: contractGate", "    value:",
              f"      landing: {{path: landing/dataset_{index}, format: parquet}}",
              "      violations: {policy: split_rows, maxInvalidShare: 0.2}", "      schedule: '@daily'"]
    return "\n".join(lines) + "\n"


def lint_and_plan(path: Path) -> None:
    render_plan(compile_plan(load_contract(path)))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contracts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for index in range(args.contracts):
            path = Path(folder) / f"generated_{index}.yaml"
            path.write_text(generate(index, rng), encoding="utf-8")
            paths.append(path)
        lint_and_plan(paths[0])  # one-time costs: imports, schema load, checker compile
        cpu, wall, first = [], [], []
        for path in paths:
            runs = [timed(path) for _ in range(args.rounds)]
            first.append(runs[0][1])
            cpu.append(min(c for c, _ in runs))
            wall.append(min(w for _, w in runs))
        sizes = [len(path.read_text().splitlines()) for path in paths]
    print(f"{args.contracts} contracts, {min(sizes)}-{max(sizes)} YAML lines, best of {args.rounds} runs each")
    for label, values in (("cpu", cpu), ("wall", wall), ("wall, first run", first)):
        print(f"per contract, {label} (ms): median {statistics.median(values):.2f}  "
              f"p95 {percentile(values, 0.95):.2f}  max {max(values):.2f}")
    for low, high in ((0, 100), (100, 200), (200, 300), (300, 400)):
        bucket = [c for c, lines in zip(cpu, sizes) if low <= lines < high]
        if bucket:
            print(f"  {low:3d}-{high - 1:3d} YAML lines: {len(bucket):3d} contracts, cpu median "
                  f"{statistics.median(bucket):.2f} ms, p95 {percentile(bucket, 0.95):.2f} ms")
    ok = percentile(cpu, 0.95) < TARGET_MS
    print(f"target: p95 CPU time under {TARGET_MS:.0f} ms per contract -> {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def timed(path: Path) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    lint_and_plan(path)
    return (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000

if __name__ == "__main__":
    sys.exit(main())
