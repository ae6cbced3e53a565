"""Gate DAG benchmarks: parse time of many generated contract DAGs, trigger-to-decision
latency of one batch in each execution mode, and many contracts gated at once over Spark Connect.

    .venv/bin/python benchmarks/gate/run.py [--contracts 100] [--rows 10000] [--runs 5]
        [--modes local spark_connect spark_submit] [--submit-runs N] [--fleet 20 --fleet-workers 4]
        [--connect-warm-up 20] [--skip-latency]

Each part runs in a private Airflow home (SQLite) and gate home under a temporary folder.
Parsing is measured in a fresh interpreter: one ``DagBag`` over the folder of generated DAG
files (wall and CPU time of filling it; Airflow's own import is reported apart, it is paid once
per DAG processor).

Latency is one ``dag.test()`` per fresh batch (CSV, ``rows`` rows) of the regional_daily_cases
gate, copied once per execution mode as a contract of its own (own landing, target and
quarantine), from the call to the recorded decision. Before anything is timed the benchmark
starts what the remote modes need, the way the tests do (and reports how long that took): a
Spark Connect server with Delta (``contract_gate.local_spark.connect_server``, the command
line ``tests/connect_server.py`` starts) and a
standalone master and worker (``tests/standalone_cluster.py``) that ``spark_submit``
reaches in client deploy mode (the driver in the task's process, the executors on the worker).
A Connect server that is "already up" has served queries before: ``--connect-warm-up`` gates
run through it first, on a contract of their own, untimed in the medians (their seconds are
reported; a local job's JVM is new each time, so local mode has no such warm-up to give).
Per mode a first run creates the target table (DDL and constraints), then ``runs``
steady-state runs; the modes take turns run by run (the order rotates), so each mode's median
comes from the same minutes. JVM starts are counted as the spark-submit processes the local
runner starts.

The fleet part (``benchmarks/gate/fleet.py``) gates ``--fleet`` contracts, renamed copies of
the examples, through the one Connect server with ``--fleet-workers`` DAG runs at once.
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


def renamed(source: Path, name: str) -> str:
    """The text of an example contract as a contract of its own: its id, dataset, landing and
    target (every address named after the example) renamed to ``name``."""
    stem = source.stem
    text = re.sub(rf"\bid: {stem}\b", f"id: {name}", source.read_text())
    return re.sub(rf"\b{stem}\b(?=\.|\n| *$)", name, text, flags=re.M)


def make_contracts(folder: Path, count: int) -> dict[str, Path]:
    """``count`` contracts: the examples, renamed (id and dataset) so every one is its own DAG.
    Returns each contract's id and the example it copies."""
    examples = sorted((REPO / "contracts").glob("*.yaml"))
    folder.mkdir(parents=True)
    made = {}
    for index in range(count):
        source = examples[index % len(examples)]
        name = f"{source.stem}_{index:03d}"
        (folder / f"{name}.yaml").write_text(renamed(source, name))
        made[name] = source
    return made


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


MODES = ("local", "spark_connect", "spark_submit")
SUBMIT_CONN_ID = "spark_benchmark_client"  # the standalone cluster, client deploy mode


class RemoteSpark:
    """What the remote modes reach, started before anything is timed and stopped at the end:
    a Spark Connect server with Delta (the product's local one, as the tests start theirs) and a
    standalone master + worker (the tests' helper); both listen on 127.0.0.1 on free ports. The
    connections go into the environment as ``AIRFLOW_CONN_*`` variables."""

    def __init__(self, folder: Path, modes: tuple[str, ...]) -> None:
        sys.path.insert(0, str(REPO / "tests"))  # the tests' cluster helper
        self.folder, self.modes = folder, modes
        self.server = self.cluster = None
        self.start_seconds: dict[str, float] = {}

    def __enter__(self) -> RemoteSpark:
        # the cluster's python3 (executors) and the hook's spark-submit are this virtualenv's
        os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        try:
            if "spark_connect" in self.modes:
                from contract_gate.local_spark.connect_server import LocalConnectServer

                started = time.perf_counter()
                self.server = LocalConnectServer(self.folder / "connect").start()
                self.start_seconds["spark_connect server"] = round(time.perf_counter() - started, 1)
                os.environ["AIRFLOW_CONN_SPARK_CONNECT_DEFAULT"] = self.server.connection()
            if "spark_submit" in self.modes:
                from standalone_cluster import StandaloneCluster

                started = time.perf_counter()
                self.cluster = StandaloneCluster(self.folder / "standalone")
                self.cluster.start()
                self.start_seconds["standalone master + worker"] = round(time.perf_counter() - started, 1)
                os.environ[f"AIRFLOW_CONN_{SUBMIT_CONN_ID.upper()}"] = json.dumps(
                    {"conn_type": "spark", "host": "spark://127.0.0.1", "port": self.cluster.master_port,
                     "extra": {"deploy-mode": "client"}})
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self.cluster is not None:
            self.cluster.stop()
        if self.server is not None:
            self.server.stop()


def mode_contract(folder: Path, mode: str, name: str | None = None) -> str:
    """The regional_daily_cases example as a contract of its own (``name``, default
    ``regional_<mode>``) gated in ``mode``; its id."""
    name = name or f"regional_{mode}"
    execution = f"mode: {mode}" + (f"\n        connectionId: {SUBMIT_CONN_ID}" if mode == "spark_submit" else "")
    text = renamed(REPO / "contracts" / "regional_daily_cases.yaml", name)
    if "\n        mode: local\n" not in text:
        raise RuntimeError("the regional_daily_cases example no longer says `execution: mode: local`")
    (folder / f"{name}.yaml").write_text(text.replace("\n        mode: local\n", f"\n        {execution}\n"))
    return name


def airflow_world(root: Path) -> Path:
    """A private Airflow home (SQLite, migrated) and gate home; set before Airflow is imported."""
    home = root / "home"
    os.environ.update(AIRFLOW_HOME=str(root / "airflow"), AIRFLOW__CORE__LOAD_EXAMPLES="False",
                      AIRFLOW__CORE__DAGS_FOLDER=str(root / "dags"), CONTRACT_GATE_HOME=str(home),
                      AIRFLOW__LOGGING__LOGGING_LEVEL="WARNING")
    for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "CONTRACT_GATE_EXECUTION_MODE"):
        os.environ.pop(name, None)
    from airflow.utils import db

    db.upgradedb()
    (root / "dags").mkdir(parents=True, exist_ok=True)
    return home


def latency_benchmark(root: Path, rows: int, runs: int, modes: tuple[str, ...], fleet: int = 0,
                      fleet_workers: int = 4, mode_runs: dict[str, int] | None = None,
                      connect_warm_up: int = 0) -> dict:
    """Per mode, ``1 + runs`` gate runs of fresh ``rows``-row batches (the first creates the
    target; ``mode_runs`` may give a mode fewer), the modes taking turns; then, with ``fleet``
    contracts, the fleet part on the same Connect server. Airflow is imported here, after its
    env is set."""
    home = airflow_world(root)
    from airflow.dag_processing.dagbag import DagBag

    from contract_gate.cli.run_cmd import decision_of
    from contract_gate.dag_factory import STUB_FOLDER, sync_dag_files
    from contract_gate.runners import process

    contracts = root / "latency_contracts"
    contracts.mkdir()
    names = {mode: mode_contract(contracts, mode) for mode in modes}
    warm_up_name = mode_contract(contracts, "spark_connect", "regional_warm_up")
    sync_dag_files(root / "dags" / "contract_gates.py", contracts)
    starts = []
    original = process.StreamedProcess.run

    def counted(self):
        starts.append(self.label)
        return original(self)

    process.StreamedProcess.run = counted
    bag = DagBag(str(root / "dags" / STUB_FOLDER))
    if bag.import_errors:
        raise RuntimeError("\n".join(bag.import_errors.values()))
    results: dict[str, list[dict]] = {mode: [] for mode in modes}
    with RemoteSpark(root / "spark", modes) as remote:
        warm_up = []
        for batch in range(connect_warm_up if remote.server is not None else 0):
            land(home / "lakehouse" / "landing" / warm_up_name, rows, first_day=date(2040, 1, 1) + timedelta(
                days=batch * (rows // 100 + 1)))
            started = time.perf_counter()
            bag.dags[warm_up_name].test()
            warm_up.append(round(time.perf_counter() - started, 1))
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)  # see below
        if warm_up:
            print(json.dumps({"spark_connect_warm_up_s": warm_up}), flush=True)
        for batch in range(1 + runs):  # the first run also creates the target table; the others are steady state
            turn = batch % len(modes)
            for mode in modes[turn:] + modes[:turn]:
                if batch > (mode_runs or {}).get(mode, runs):
                    continue
                land(home / "lakehouse" / "landing" / names[mode], rows, first_day=date(2020, 1, 1) + timedelta(
                    days=batch * (rows // 100 + 1)))
                starts.clear()
                started = time.perf_counter()
                run = bag.dags[names[mode]].test()
                seconds = time.perf_counter() - started
                # A Connect job sets PySpark's process-wide client switch; a local or spark_submit
                # job started later from this process would hand it to its driver. (A scheduler
                # runs each task in a process of its own; dag.test() runs them all in this one.)
                os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
                decision = decision_of(run)
                tasks = {ti.task_id: round((ti.end_date - ti.start_date).total_seconds(), 1)
                         for ti in run.get_task_instances() if ti.start_date and ti.end_date}
                results[mode].append({
                    "run": "first (creates the target)" if batch == 0 else "steady state", "rows": rows,
                    "seconds": round(seconds, 1), "local_jvm_starts": len(starts), "jobs": list(starts),
                    "task_seconds": tasks, "outcome": decision.get("outcome"),
                    "rows_published": decision.get("rows_published")})
                print(json.dumps({"mode": mode, **results[mode][-1]}), flush=True)
        fleet_result = None
        if fleet and remote.server is not None:
            from fleet import fleet_benchmark

            made = make_contracts(root / "fleet" / "contracts", fleet)
            fleet_result = fleet_benchmark(root / "fleet", remote.server, made, fleet_workers,
                                           root / "airflow" / "airflow.db")
            print(json.dumps({"fleet": fleet_result}), flush=True)
    medians = {}
    for mode, done in results.items():
        steady = sorted(run["seconds"] for run in done[1:])
        medians[mode] = steady[len(steady) // 2] if steady else None
    summary = {"servers_started_s": remote.start_seconds, "spark_connect_warm_up_s": warm_up,
               "steady_state_median_s": medians, "runs": results,
               "failed": {mode: [r["outcome"] for r in done if r["outcome"] != "published"]
                          for mode, done in results.items()}}
    if medians.get("local") and medians.get("spark_connect"):
        summary["local_over_spark_connect"] = round(medians["local"] / medians["spark_connect"], 2)
    if fleet_result is not None:
        summary["fleet"] = fleet_result
    return summary


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
    parser.add_argument("--runs", type=int, default=5, help="steady-state gate runs per mode after the first")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--submit-runs", type=int, help="steady-state runs of spark_submit (default --runs)")
    parser.add_argument("--fleet", type=int, default=20, help="contracts gated at once over Connect (0: none)")
    parser.add_argument("--fleet-workers", type=int, default=4, help="DAG runs at once in the fleet part")
    parser.add_argument("--connect-warm-up", type=int, default=20,
                        help="untimed gates through the Connect server before the timed runs")
    parser.add_argument("--skip-latency", action="store_true")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="contract-gate-bench-"))
    try:
        results = {"cpus": os.cpu_count(), "parse": parse_benchmark(root / "parse", args.contracts)}
        print(json.dumps(results, indent=2), flush=True)
        if not args.skip_latency:
            from contract_gate.local_spark.class_archive import java_options

            results["latency"] = {"class_archive": java_options() or None,
                                  **latency_benchmark(root / "latency", args.rows, args.runs, tuple(args.modes),
                                                      args.fleet, args.fleet_workers,
                                                      {"spark_submit": args.submit_runs if args.submit_runs is not None
                                                       else args.runs}, args.connect_warm_up)}
            results["load_average"] = [round(x, 1) for x in os.getloadavg()]
            print(json.dumps({k: v for k, v in results.items() if k != "parse"}, indent=2))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
