"""Benchmark: the decision log at 100,000 decisions over 200 contracts.

    .venv/bin/python benchmarks/decisions/run.py [--decisions 100000] [--contracts 200]
        [--old-decisions 1000] [--writers 16] [--per-writer 10]

1. Grow: a decision table of the current layout (partitioned by ``contract_id``, created by the
   store itself) gets ``--decisions`` records in bulk commits (``--per-file`` decisions of every
   contract per commit, so each commit adds one small file per contract, as hours of gating
   would), under ``benchmarks/out/decisions/`` (git-ignored, rebuilt every run).
2. Upkeep as the retention DAGs run it: ``upkeep_decisions(plan)`` once per contract.
3. Measure what production does, each through the store's public API in a fresh store object:
   recording one decision (median of ``--records``), ``records(contract_id)``, the decisions of
   all contracts as ``contract-gate status`` reads them (one pass per table), the size of
   ``_delta_log``, and ``--writers`` spawned OS processes recording ``--per-writer`` decisions
   each at the same moment (failed records are counted, never retried by the benchmark).
4. The same figures for the earlier layout (one unpartitioned table, the code of the commit
   before the partitioned layout) at ``--old-decisions``, grown one file per decision as that
   code wrote it, in a subprocess that imports that code (``git archive``). Its status of all
   contracts is projected from 10 contracts. ``--old-decisions 0`` skips it.

Prints a JSON document (figures in ms and bytes) and a summary table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "benchmarks" / "out" / "decisions"
OLD_COMMIT = "2d18d7a^"  # the parent of the partitioned layout's commit: the earlier layout and code
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
TARGETS = {"record_ms": 100, "status_all_ms": 2000, "failed_records": 0, "delta_log_bytes": 50 * 2**20}


def address(path: Path) -> dict:
    return {"kind": "path", "path": str(path), "format": "delta"}


def plan(path: Path, contract_id: str) -> dict:
    return {"contract": {"id": contract_id, "version": "1.0.0"}, "freshness": None, "gate": None,
            "tables": {"decisions": address(path)}}


def contract_ids(count: int) -> list[str]:
    return [f"contract_{n:03d}" for n in range(count)]


def decision(contract_id: str, number: int, worker: str = "bench"):
    """A realistic record: a published batch with one failing warning rule and run ids."""
    from contract_gate.decisions.record import Decision

    submission = hashlib.sha256(f"{contract_id}/{worker}/{number}".encode()).hexdigest()[:16]
    return Decision(
        submission_id=submission, contract_id=contract_id, contract_version="1.4.0", outcome="published",
        plan_fingerprint="sha256:" + hashlib.sha256(contract_id.encode()).hexdigest(),
        validation_outcome="warn", candidate=f"lakehouse/_candidates/{contract_id}__{submission}",
        candidate_version=0, rule_failures={"amount_positive": 3}, failed_rules=["amount_positive"],
        rows_landed=10_000, rows_published=10_000, rows_quarantined=0, target_version_before=number,
        target_version_after=number + 1, latest_business_date="2025-01-01", correction=False,
        dag_id=f"contract_gate__{contract_id}", run_id=f"scheduled__{worker}_{number}", try_number=1,
        report_path=f"/opt/airflow/contract-gate/{contract_id}/{submission}/report.json",
        decided_at=T0 + timedelta(minutes=number),
    )


def arrow_rows(decisions: list):
    import pyarrow as pa

    from contract_gate.decisions.delta_path import SCHEMA

    rows = []
    for item in decisions:
        row = item.as_row()
        row["rule_failures"] = list(row["rule_failures"].items())
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def grow_new(path: Path, total: int, contracts: list[str], per_file: int) -> dict:
    """Bulk commits of ``per_file`` decisions per contract into a table the store created."""
    from deltalake import write_deltalake

    from contract_gate.decisions.delta_path import WRITER_HOOKS, DeltaPathDecisionStore

    store = DeltaPathDecisionStore(address(path))
    store.record(decision(contracts[0], 0, "seed"))  # the store creates the table, with its layout
    started, written, commit = time.perf_counter(), 1, 0
    while written < total:
        batch = [decision(c, commit * per_file + n) for c in contracts for n in range(per_file)][: total - written]
        write_deltalake(str(path), arrow_rows(batch), mode="append", post_commithook_properties=WRITER_HOOKS)
        written, commit = written + len(batch), commit + 1
    return {"decisions": written, "bulk_commits": commit, "seconds": round(time.perf_counter() - started, 1)}


def grow_old(path: Path, total: int, contracts: list[str]) -> dict:
    """One file per decision in one unpartitioned table, as the earlier store left it (its MERGE
    wrote one file per record); written as blind appends, which cost less than its MERGEs."""
    from deltalake import DeltaTable, write_deltalake

    from contract_gate.decisions.delta_path import DeltaPathDecisionStore

    DeltaPathDecisionStore(address(path)).record(decision(contracts[0], 0, "seed"))
    started = time.perf_counter()
    for number in range(1, total):
        write_deltalake(str(path), arrow_rows([decision(contracts[number % len(contracts)], number)]), mode="append")
    return {"decisions": total, "files": len(DeltaTable(str(path)).file_uris()),
            "seconds": round(time.perf_counter() - started, 1)}


def upkeep_all(path: Path, contracts: list[str]) -> dict:
    from contract_gate.decisions import upkeep_decisions

    started, removed, timings = time.perf_counter(), 0, []
    for contract_id in contracts:
        one = time.perf_counter()
        removed += upkeep_decisions(plan(path, contract_id))["files_removed"]
        timings.append(time.perf_counter() - one)
    return {"seconds": round(time.perf_counter() - started, 1), "files_removed": removed,
            "per_contract_ms": summary(timings)}


def summary(seconds: list[float]) -> dict:
    ordered = sorted(seconds)
    return {"median": round(statistics.median(ordered) * 1000, 1),
            "p90": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 1),
            "max": round(ordered[-1] * 1000, 1), "n": len(ordered)}


def log_size(path: Path) -> dict:
    """Bytes and files of ``_delta_log``, and what its newest checkpoint holds (live files and
    tombstones, the two row kinds whose count sets a checkpoint's size)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    log = path / "_delta_log"
    names = os.listdir(log)
    checkpoints = sorted(name for name in names if ".checkpoint." in name)
    newest = None
    if checkpoints:
        rows = pq.read_table(log / checkpoints[-1], columns=["add", "remove"])
        newest = {"bytes": (log / checkpoints[-1]).stat().st_size,
                  "live_files": pc.sum(pc.is_valid(rows["add"])).as_py(),
                  "tombstones": pc.sum(pc.is_valid(rows["remove"])).as_py()}
    return {"bytes": sum((log / name).stat().st_size for name in names),
            "json_files": sum(name.endswith(".json") for name in names),
            "checkpoints": len(checkpoints), "newest_checkpoint": newest}


def time_records(path: Path, contracts: list[str], count: int) -> dict:
    from contract_gate.decisions.delta_path import DeltaPathDecisionStore

    timings, cpu, json_bytes = [], [], []
    for number in range(count):
        item = decision(contracts[(number * 37) % len(contracts)], number, "single")
        started, started_cpu = time.perf_counter(), time.process_time()
        stored = DeltaPathDecisionStore(address(path)).record(item)  # a fresh store, as a new task has
        timings.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)  # this process's CPU, delta-rs threads included
        assert stored.submission_id == item.submission_id
        newest = max((path / "_delta_log").glob("*.json"))
        json_bytes.append(newest.stat().st_size)
    return {**summary(timings), "cpu_median": round(statistics.median(cpu) * 1000, 1),
            "commit_json_bytes": int(statistics.median(json_bytes))}


def time_contract_reads(path: Path, contracts: list[str], count: int) -> dict:
    from contract_gate.decisions.delta_path import DeltaPathDecisionStore

    timings, rows = [], []
    for contract_id in contracts[:count]:
        started = time.perf_counter()
        rows.append(len(DeltaPathDecisionStore(address(path)).records(contract_id=contract_id)))
        timings.append(time.perf_counter() - started)
    return {**summary(timings), "rows_per_contract": int(statistics.median(rows))}


def time_status_new(path: Path, contracts: list[str], repeat: int) -> dict:
    from contract_gate.freshness.decision_log import STATUS_COLUMNS, read_decisions

    timings, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        found = read_decisions(str(path), contracts, STATUS_COLUMNS, limit=5)  # status shows 5 a contract
        timings.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    assert all(len(found[c]) == 5 for c in contracts)
    return {**summary(timings), "cpu_median": round(statistics.median(cpu) * 1000, 1),
            "contracts": len(contracts), "rows": sum(map(len, found.values()))}


def time_status_old(path: Path, contracts: list[str], sample: int) -> dict:
    """The earlier status read each contract's decisions separately, opening every file."""
    from contract_gate.freshness.decision_log import contract_decisions

    timings = []
    for contract_id in contracts[:sample]:
        started = time.perf_counter()
        contract_decisions(plan(path, contract_id))
        timings.append(time.perf_counter() - started)
    return {**summary(timings), "contracts_sampled": sample,
            "projected_all_ms": round(sum(timings) / sample * len(contracts) * 1000)}


def writer(path: str, worker: int, count: int, contracts: list[str], start, results) -> None:
    """One gate process: ``count`` records of its own submissions, each through a fresh store."""
    from contract_gate.decisions.delta_path import DeltaPathDecisionStore

    start.wait()
    done, failed, timings = 0, [], []
    for number in range(count):
        item = decision(contracts[(worker * count + number) % len(contracts)], number, f"writer{worker}")
        started = time.perf_counter()
        try:
            DeltaPathDecisionStore(address(Path(path))).record(item)
            done += 1
        except Exception as exc:  # noqa: BLE001 - counted: the figure the benchmark reports
            failed.append(f"{type(exc).__name__}: {str(exc)[:160]}")
        timings.append(time.perf_counter() - started)
    results.put((worker, done, failed, timings))


def concurrent_writers(path: Path, contracts: list[str], writers: int, per_writer: int) -> dict:
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(writers + 1), context.Queue()
    processes = [context.Process(target=writer, args=(str(path), w, per_writer, contracts, start, results))
                 for w in range(writers)]
    for process in processes:
        process.start()
    start.wait()
    began = time.perf_counter()
    collected = [results.get(timeout=1800) for _ in processes]
    wall = time.perf_counter() - began
    for process in processes:
        process.join(timeout=60)
    failures = [message for _, _, failed, _ in collected for message in failed]
    return {"writers": writers, "records": writers * per_writer, "recorded": sum(c[1] for c in collected),
            "failed_records": len(failures), "first_failure": failures[0] if failures else None,
            "wall_seconds": round(wall, 1), "record_ms": summary([t for c in collected for t in c[3]]),
            "exit_codes": sorted({process.exitcode for process in processes})}


def check_table(path: Path, expected: int) -> dict:
    """Every decision present once: the benchmark's own writes are verified, not assumed."""
    from deltalake import DeltaTable, QueryBuilder

    table = DeltaTable(str(path))
    sql = ("SELECT count(*) AS n, count(DISTINCT concat(contract_id, '/', submission_id)) AS distinct_n "
           "FROM decisions WHERE final")
    import pyarrow as pa

    [row] = pa.RecordBatchReader.from_stream(QueryBuilder().register("decisions", table).execute(sql)).read_all().to_pylist()
    return {"final_records": row["n"], "distinct_submissions": row["distinct_n"], "expected": expected,
            "ok": row["n"] == row["distinct_n"] == expected}


def measure(layout: str, args, path: Path) -> dict:
    contracts = contract_ids(args.contracts)
    shutil.rmtree(path, ignore_errors=True)
    report: dict = {"layout": layout}
    if layout == "new":
        report["grow"] = grow_new(path, args.decisions, contracts, args.per_file)
        report["delta_log_grown"] = log_size(path)
        report["upkeep"] = upkeep_all(path, contracts)
        report["delta_log_after_upkeep"] = log_size(path)
    else:
        report["grow"] = grow_old(path, args.decisions, contracts)
        report["delta_log_grown"] = log_size(path)
    print(f"[{layout}] grown and kept: {json.dumps(report)}", file=sys.stderr, flush=True)
    report["record"] = time_records(path, contracts, args.records)
    report["records_contract"] = time_contract_reads(path, contracts, args.reads)
    if layout == "new":
        report["status_all"] = time_status_new(path, contracts, 3)
    else:
        report["status_all"] = time_status_old(path, contracts, 10)
    print(f"[{layout}] single: {json.dumps(report['record'])} status: {json.dumps(report['status_all'])}",
          file=sys.stderr, flush=True)
    report["writers"] = concurrent_writers(path, contracts, args.writers, args.per_writer)
    report["delta_log_end"] = log_size(path)
    report["table"] = check_table(path, report["grow"]["decisions"] + args.records
                                  + report["writers"]["recorded"])
    return report


def run_old(args) -> dict:
    """The earlier layout, measured by the earlier code in a subprocess."""
    code = OUT / "old_code"
    shutil.rmtree(code, ignore_errors=True)
    code.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", OLD_COMMIT, "provider", "spark_jobs"], cwd=REPO,
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(code)], input=archive, check=True)
    env = {**os.environ, "PYTHONPATH": f"{code / 'provider'}{os.pathsep}{code}"}
    command = [sys.executable, __file__, "--layout", "old", "--decisions", str(args.old_decisions),
               "--contracts", str(args.contracts), "--records", str(args.old_records), "--reads", "5",
               "--writers", str(args.writers), "--per-writer", str(args.old_per_writer)]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    return json.loads(done.stdout)


def table_lines(new: dict, old: dict | None) -> list[str]:
    def row(name, pick, target=None):
        cells = [pick(new), pick(old) if old else "-"]
        return f"| {name} | {cells[0]} | {cells[1]} | {target or ''} |"

    mib = lambda r: f"{r['delta_log_end']['bytes'] / 2**20:.1f} MiB"  # noqa: E731
    return [
        f"| figure | current layout, {new['grow']['decisions']:,} decisions | earlier layout, "
        f"{old['grow']['decisions']:,} decisions | target |" if old else "| figure | current | earlier | target |",
        "|---|---|---|---|",
        row("record one decision (wall median / p90; CPU median)",
            lambda r: f"{r['record']['median']} / {r['record']['p90']} ms; {r['record'].get('cpu_median', '-')} ms",
            "<= 100 ms"),
        row("records(contract) (median)", lambda r: f"{r['records_contract']['median']} ms"),
        row("status of all contracts", lambda r: f"{r['status_all'].get('projected_all_ms', r['status_all']['median'])} ms", "<= 2 s"),
        row(f"failed records, {new['writers']['writers']} writers",
            lambda r: f"{r['writers']['failed_records']} of {r['writers']['records']}", "0"),
        row("_delta_log at the end", mib, "< 50 MiB"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layout", choices=("new", "old"), default="new", help=argparse.SUPPRESS)
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--contracts", type=int, default=200)
    parser.add_argument("--per-file", type=int, default=10, help="decisions per contract per bulk commit")
    parser.add_argument("--records", type=int, default=30, help="single records timed")
    parser.add_argument("--reads", type=int, default=20, help="records(contract) calls timed")
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--per-writer", type=int, default=10)
    parser.add_argument("--old-decisions", type=int, default=1000, help="0: skip the earlier layout")
    parser.add_argument("--old-records", type=int, default=5)
    parser.add_argument("--old-per-writer", type=int, default=5)
    args = parser.parse_args()
    if args.layout == "old":
        print(json.dumps(measure("old", args, OUT / "old_table")))
        return
    started = time.perf_counter()
    new = measure("new", args, OUT / "table")
    old = run_old(args) if args.old_decisions else None
    print(json.dumps({"current": new, "earlier": old, "targets": TARGETS,
                      "seconds": round(time.perf_counter() - started)}, indent=2))
    print("\n".join(table_lines(new, old)))


if __name__ == "__main__":
    main()
