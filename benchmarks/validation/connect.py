"""Validation over Spark Connect against the same validation in-process, side by side.

    .venv/bin/python benchmarks/validation/connect.py [--rows 10000000] [--runs 3] [--shape regional_daily_cases]

The batch is the validation benchmark's (``benchmarks/validation/run.py``: its generator and its
Delta table under benchmarks/out/, made once and read at a pinned version). Two worker processes
each hold one warm Spark and run ``contract_gate_spark.validation.engine.run_validation`` on the compiled
contract when told to, in turns (after one warm-up each), so both are timed in the same minutes:

  in-process  a local Spark session in the worker's own process (run.py's settings: local[2],
              driver memory 8g)
  connect     a Spark Connect session (the worker is a thin client, no JVM) to a local Connect
              server started by this benchmark with the same settings
              (``contract_gate.local_spark.connect_server``)

Two processes because one Python process cannot be a classic PySpark driver and a Connect
client at once (PySpark's functions dispatch on a process-wide switch).

What travels to the client: the Connect worker counts every response the server sends it (all
gRPC response messages: their serialized bytes) and the rows of the Arrow batches among them, so
the figure shows that the report is built from aggregate rows, not from the batch's rows.

CPU = seconds used by the Spark JVM (the worker's own, or the server's) and the worker's Python.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPARK_SETTINGS = {"spark.ui.enabled": "false", "spark.driver.memory": "8g"}  # as run.py's session


def jvm_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class ResponseMeter:
    """Counts what the Connect client receives: every response message's serialized size, and
    the rows of Arrow batches (the only way rows reach a client). PySpark's client checks every
    response it receives with ``_verify_response_integrity``; the meter wraps that method."""

    def __init__(self) -> None:
        from pyspark.sql.connect.client.core import SparkConnectClient

        self.bytes = self.messages = self.arrow_rows = 0
        verify = SparkConnectClient._verify_response_integrity

        def counted(client, response):
            self.messages += 1
            self.bytes += response.ByteSize()
            if response.DESCRIPTOR.name == "ExecutePlanResponse" and response.HasField("arrow_batch"):
                self.arrow_rows += response.arrow_batch.row_count
            return verify(client, response)

        SparkConnectClient._verify_response_integrity = counted

    def reading(self) -> dict:
        return {"bytes": self.bytes, "messages": self.messages, "arrow_rows": self.arrow_rows}


def worker(kind: str, shape: str, rows: int, url: str | None, server_pid: int | None) -> None:
    """Hold one session; on each ``run`` line of stdin validate once and print one JSON line."""
    sys.path.insert(0, str(HERE))
    from run import OUT, ROOT, SHAPES, ensure_data  # the validation benchmark's data and contracts

    from contract_gate.contract.compiler import compile_plan
    from contract_gate_spark.runtime.session import connect, get_session
    from contract_gate_spark.validation.candidate import read_candidate
    from contract_gate_spark.validation.engine import run_validation

    meter = None
    if kind == "connect":
        meter = ResponseMeter()
        spark = connect(url)
        pid = server_pid
    else:
        spark = get_session("contract-gate-benchmark", SPARK_SETTINGS)
        pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    # the in-process worker starts first and writes the batch if it is missing
    path = ensure_data(spark, shape, rows) if kind == "in-process" else str(OUT / f"{shape}_{rows}")
    plan = compile_plan(ROOT / SHAPES[shape][1])
    print(json.dumps({"ready": kind}), flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        before = meter.reading() if meter else None
        wall, cpu = time.perf_counter(), jvm_cpu(pid) + sum(os.times()[:2])
        candidate = read_candidate(spark, path, format="delta")
        report = run_validation(spark, plan, candidate)
        done = {"wall": time.perf_counter() - wall, "cpu": jvm_cpu(pid) + sum(os.times()[:2]) - cpu,
                "outcome": report["outcome"], "rows": report["candidate"]["row_count"],
                "invalid": report["rows"]["invalid"], "rules": len(report["rules"])}
        if meter:
            after = meter.reading()
            done["received"] = {key: after[key] - before[key] for key in after}
        print(json.dumps(done), flush=True)


class Worker:
    def __init__(self, kind: str, args, url: str | None = None, server_pid: int | None = None) -> None:
        argv = [sys.executable, __file__, "--worker", kind, "--shape", args.shape, "--rows", str(args.rows[0])]
        if url:
            argv += ["--url", url, "--server-pid", str(server_pid)]
        self.kind = kind
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ready = self.read()

    def read(self) -> dict:
        for line in self.process.stdout:  # Spark may print other lines first
            if line.startswith("{"):
                return json.loads(line)
        raise RuntimeError(f"the {self.kind} worker exited with {self.process.wait()}")

    def run(self) -> dict:
        self.process.stdin.write("run\n")
        self.process.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs=1, default=[10_000_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shape", default="regional_daily_cases", choices=("regional_daily_cases", "orders"))
    parser.add_argument("--worker", choices=("in-process", "connect"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.shape, args.rows[0], args.url, args.server_pid)
        return 0

    from contract_gate.local_spark.connect_server import LocalConnectServer

    workers: list[Worker] = []
    with tempfile.TemporaryDirectory(prefix="contract-gate-connect-bench-") as folder, \
            LocalConnectServer(Path(folder), conf=SPARK_SETTINGS) as server:
        try:
            workers.append(Worker("in-process", args))  # first: it writes the batch if it is missing
            workers.append(Worker("connect", args, server.url, server.process.pid))
            times: dict[str, list[dict]] = {w.kind: [] for w in workers}
            for w in workers:
                print(json.dumps({"warm-up": w.kind, **w.run()}), flush=True)
            for _ in range(args.runs):
                for w in workers:
                    times[w.kind].append(w.run())
                    print(json.dumps({w.kind: times[w.kind][-1]}), flush=True)
        finally:
            for w in workers:
                w.close()
    median = {kind: {m: round(statistics.median(r[m] for r in runs), 2) for m in ("wall", "cpu")}
              for kind, runs in times.items()}
    received = [r["received"] for r in times["connect"]]
    summary = {"shape": args.shape, "rows": args.rows[0], "runs": args.runs, "median": median,
               "connect_over_in_process": {m: round(median["connect"][m] / median["in-process"][m], 2)
                                           for m in ("wall", "cpu")},
               "same_report": len({json.dumps({k: r[k] for k in ("outcome", "rows", "invalid", "rules")})
                                   for runs in times.values() for r in runs}) == 1,
               "received_by_the_client_per_validation": {
                   key: max(r[key] for r in received) for key in ("bytes", "messages", "arrow_rows")},
               "load_average": [round(x, 1) for x in os.getloadavg()]}
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
