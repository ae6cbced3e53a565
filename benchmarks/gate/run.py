"""Gate DAG benchmarks: parse time of many generated contract DAGs, and trigger-to-decision
latency of one batch on the local default with the number of Spark JVM starts.

    .venv/bin/python benchmarks/gate/run.py [--contracts 100] [--rows 10000] [--runs 3] [--skip-latency]

Each part runs in a private Airflow home (SQLite) and gate home under a temporary folder.
Parsing is measured in a fresh interpreter: one ``DagBag`` over the folder of generated DAG
files (wall and CPU time of filling it; Airflow's own import is reported apart, it is paid once
per DAG processor). Latency is one ``dag.test()`` of the
regional_daily_cases gate per fresh batch (CSV, ``rows`` rows), from the call to the decision:
a first run that also creates the target table (DDL and constraints), then ``runs`` steady-state
runs (their median is the headline). JVM starts are counted as the spark-submit processes the runner starts.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PARSE = """
import json, sys, time
started = time.perf_counter()
from airflow.dag_processing.dagbag import DagBag
imported, cpu = time.perf_counter(), time.process_time()
bag = DagBag(sys.argv[1])
done, cpu_done = time.perf_counter(), time.process_time()
stats = sorted(s.duration.total_seconds() for s in bag.dagbag_stats)
print(json.dumps({"dags": len(bag.dags), "errors": len(bag.import_errors), "files": len(stats),
                  "airflow_import_s": round(imported - started, 2), "dagbag_fill_s": round(done - imported, 2),
                  "dagbag_fill_cpu_s": round(cpu_done - cpu, 2),
                  "per_file_median_ms": round(1000 * stats[len(stats) // 2], 1),
                  "per_file_max_ms": round(1000 * stats[-1], 1),
                  "pyspark_imported": any(m.split('.')[0] == 'pyspark' for m in sys.modules)}))
"""


def make_contracts(folder: Path, count: int) -> None:
    """``count`` contracts: the examples, renamed (id and dataset) so every one is its own DAG."""
    examples = sorted((REPO / "contracts").glob("*.yaml"))
    folder.mkdir(parents=True)
    for index in range(count):
        source = examples[index % len(examples)]
        text = source.read_text()
        stem = source.stem
        renamed = f"{stem}_{index:03d}"
        text = re.sub(rf"\bid: {stem}\b", f"id: {renamed}", text)
        text = re.sub(rf"\b{stem}\b(?=\.|\n| *$)", renamed, text, flags=re.M)
        (folder / f"{renamed}.yaml").write_text(text)


def parse_benchmark(root: Path, count: int) -> dict:
    from contract_gate.dag_factory import sync_dag_files

    contracts, dags = root / "contracts", root / "dags"
    make_contracts(contracts, count)
    dags.mkdir()
    shutil.copy(REPO / "dags" / "contract_gates.py", dags / "contract_gates.py")
    sync_dag_files(dags / "contract_gates.py", contracts)
    env = {**os.environ, "AIRFLOW_HOME": str(root / "airflow"), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "CONTRACT_GATE_HOME": str(root / "home")}
    done = subprocess.run([sys.executable, "-c", PARSE, str(dags)], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def latency_benchmark(root: Path, rows: int, runs: int = 3) -> list[dict]:
    """``1 + runs`` gate runs of fresh ``rows``-row batches (the first creates the target);
    Airflow is imported here, after its env is set."""
    home = root / "home"
    os.environ.update(AIRFLOW_HOME=str(root / "airflow"), AIRFLOW__CORE__LOAD_EXAMPLES="False",
                      AIRFLOW__CORE__DAGS_FOLDER=str(root / "dags"), CONTRACT_GATE_HOME=str(home),
                      AIRFLOW__LOGGING__LOGGING_LEVEL="WARNING")
    from airflow.dag_processing.dagbag import DagBag
    from airflow.utils import db

    from contract_gate.cli.run_cmd import decision_of
    from contract_gate.dag_factory import STUB_FOLDER, sync_dag_files
    from contract_gate.runners import process

    db.upgradedb()
    (root / "dags").mkdir(parents=True, exist_ok=True)
    contracts = root / "latency_contracts"
    contracts.mkdir()
    shutil.copy(REPO / "contracts" / "regional_daily_cases.yaml", contracts)
    sync_dag_files(root / "dags" / "contract_gates.py", contracts)
    starts = []
    original = process.StreamedProcess.run

    def counted(self):
        starts.append(self.label)
        return original(self)

    process.StreamedProcess.run = counted
    dag = DagBag(str(root / "dags" / STUB_FOLDER)).dags["regional_daily_cases"]
    results = []
    for batch in range(1 + runs):  # the first run also creates the target table; the others are steady state
        land(home / "lakehouse" / "landing" / "regional_daily_cases", rows, first_day=date(2020, 1, 1) + timedelta(
            days=batch * (rows // 100 + 1)))
        starts.clear()
        started = time.perf_counter()
        run = dag.test()
        seconds = time.perf_counter() - started
        decision = decision_of(run)
        tasks = {ti.task_id: round((ti.end_date - ti.start_date).total_seconds(), 1)
                 for ti in run.get_task_instances() if ti.start_date and ti.end_date}
        results.append({"run": "first (creates the target)" if batch == 0 else "steady state", "rows": rows,
                     "seconds": round(seconds, 1), "jvm_starts": len(starts), "jobs": list(starts),
                     "task_seconds": tasks, "outcome": decision.get("outcome"),
                     "rows_published": decision.get("rows_published")})
    return results


def land(folder: Path, rows: int, first_day: date) -> None:
    """``rows`` valid case rows: 100 regions a day from ``first_day`` (keys never repeat)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with (folder / "part-0.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["region_code", "report_date", "reporting_org", "case_count", "status"])
        for i in range(rows):
            writer.writerow([f"R{i % 100:03d}", first_day + timedelta(days=i // 100), "org", i % 500, "final"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contracts", type=int, default=100)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3, help="steady-state gate runs after the first")
    parser.add_argument("--skip-latency", action="store_true")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="contract-gate-bench-"))
    try:
        results = {"cpus": os.cpu_count(), "parse": parse_benchmark(root / "parse", args.contracts)}
        print(json.dumps(results, indent=2), flush=True)
        if not args.skip_latency:
            from contract_gate.runners.class_archive import java_options

            latency = latency_benchmark(root / "latency", args.rows, args.runs)
            steady = sorted(run["seconds"] for run in latency[1:])
            results["latency"] = {"class_archive": java_options() or None, "runs": latency,
                                  "steady_state_median_s": steady[len(steady) // 2] if steady else None}
            print(json.dumps(results["latency"], indent=2))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
