"""Landing to decision through the real processes: ``contract-gate airflow up`` on PostgreSQL
(api-server, scheduler, dag-processor, triggerer; LocalExecutor), ``@landing`` gates with a
marker, batches landed as a producer lands them, in ``local`` mode or over the deployment's own
warm Spark Connect server (``--spark-connect``).

    .venv/bin/python benchmarks/deployment/run.py --mode local --landings 1 --rounds 4
    .venv/bin/python benchmarks/deployment/run.py --mode spark_connect --landings 1 --rounds 4
    .venv/bin/python benchmarks/deployment/run.py --mode local --landings 10 --rounds 2
    .venv/bin/python benchmarks/deployment/run.py --mode spark_connect --landings 10 --rounds 2

Each round lands one batch on each of ``--landings`` contracts at once (the marker written last)
and waits until every batch has its final decision. Per batch, the phases (seconds), from the
metadata database and the decision log:

* watcher: marker written -> the Asset-triggered DAG run is created (the triggerer's poll);
* queue: run created -> its first task starts (the scheduler and the executor);
* each task's run time, and the gaps between tasks (Airflow's own);
* decision: marker written -> the decision record's ``decided_at``.

The first round warms the deployment (the DAGs parsed, the Connect server's JVM JIT-compiled)
and is not counted when there is more than one. Prints a JSON document and a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "deploy"), str(ROOT / "tests")]

from _deployment import Deployed  # noqa: E402
from _postgres import free_port, start_postgres  # noqa: E402
from contract_gate.decisions import Decision  # noqa: E402

POLL_SECONDS = 2.0


def contract_ids(count: int) -> list[str]:
    return [f"bench_landing_{n:02d}" for n in range(count)]


def land_all(deployed: Deployed, contracts: list[str], day: str) -> tuple[float, dict[str, str]]:
    """Land one batch per contract (markers last, all at once); (the time the last marker was written, submissions)."""
    for n, contract_id in enumerate(contracts):
        deployed.land(contract_id, day, region=f"B{n}", marker=None)
    submissions = {contract_id: deployed.submission_now(contract_id) for contract_id in contracts}
    for contract_id in contracts:
        (deployed.lakehouse / "landing" / contract_id / "_SUCCESS").write_text("")
    return time.time(), submissions


def wait_decided(deployed: Deployed, submissions: dict[str, str], within: float) -> dict[str, Decision]:
    """Every batch's final decision. Polls every ``POLL_SECONDS``, each contract's decision log read
    through one store: the figures come from the records' ``decided_at``, not from this loop, which
    must not take the CPU of the deployment it measures (polled 5 times a second with the plans
    compiled each time, it took a sixth of two cores)."""
    from contract_gate.decisions import store_for

    with deployed.gate_home():
        stores = {contract_id: store_for(deployed.plan(contract_id)) for contract_id in submissions}
    deadline = time.monotonic() + within
    finals: dict[str, Decision] = {}
    while len(finals) < len(submissions):
        time.sleep(POLL_SECONDS)  # polling the decision log: a condition, not a fixed wait
        with deployed.gate_home():
            for contract_id, submission_id in submissions.items():
                if contract_id not in finals:
                    records = stores[contract_id].records(submission_id=submission_id, contract_id=contract_id)
                    final = next((record for record in records if record.final), None)
                    if final is not None:
                        finals[contract_id] = final
        if time.monotonic() > deadline:
            raise TimeoutError(f"undecided after {within:.0f} s: {sorted(set(submissions) - set(finals))}")
    return finals


def phases(db, contract_id: str, landed: float, decided_at: datetime) -> dict[str, float]:
    """The phases of the contract's newest DAG run, in seconds."""
    with db.cursor() as cursor:
        cursor.execute("SELECT id, run_id, queued_at, start_date FROM dag_run WHERE dag_id = %s ORDER BY id DESC "
                       "LIMIT 1", (contract_id,))
        _, run_id, queued_at, _ = cursor.fetchone()
        cursor.execute("SELECT task_id, start_date, end_date FROM task_instance WHERE dag_id = %s AND run_id = %s "
                       "AND start_date IS NOT NULL AND state <> 'skipped'", (contract_id, run_id))
        tasks = {task_id: (start, end) for task_id, start, end in cursor.fetchall()}
    first_start = min(start for start, _ in tasks.values())
    result = {"watcher": queued_at.timestamp() - landed, "queue": (first_start - queued_at).total_seconds()}
    ordered = sorted(tasks.items(), key=lambda item: item[1][0])
    for task_id, (start, end) in ordered:
        result[task_id] = (end - start).total_seconds() if end else float("nan")
    result["gaps"] = sum(max(0.0, (ordered[i + 1][1][0] - ordered[i][1][1]).total_seconds())
                         for i in range(len(ordered) - 1) if ordered[i][1][1] is not None)
    result["landing_to_decision"] = decided_at.timestamp() - landed
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("local", "spark_connect"), default="spark_connect")
    parser.add_argument("--landings", type=int, default=1, help="batches landed at once (one per contract)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of landings; the first warms up")
    parser.add_argument("--decided-within", type=float, default=1800,
                        help="seconds a round may take before the run stops with an error (1800)")
    parser.add_argument("--keep", action="store_true", help="keep the deployment's folder")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="contract-gate-bench-deploy-"))
    postgres_folder = Path(tempfile.mkdtemp(prefix="contract-gate-bench-postgres-"))  # the server's user owns it
    postgres = start_postgres(postgres_folder)
    deployed = Deployed(folder / "home")
    contracts = contract_ids(args.landings)
    for contract_id in contracts:
        deployed.write_contract(contract_id, {"onLanding": {"marker": "_SUCCESS"}})
    rounds = []
    try:
        started = time.monotonic()
        deployed.up("--db-url", postgres.url, "--port", str(free_port()),
                    *(["--spark-connect"] if args.mode == "spark_connect" else []))
        up_seconds = time.monotonic() - started
        for round_number in range(args.rounds):
            day = (date.today() - timedelta(days=round_number)).isoformat()
            landed, submissions = land_all(deployed, contracts, day)
            finals = wait_decided(deployed, submissions, args.decided_within)
            all_decided = max(f.decided_at.timestamp() for f in finals.values()) - landed
            with postgres.connect() as db:
                per_batch = {c: phases(db, c, landed, f.decided_at.astimezone(timezone.utc)) for c, f in finals.items()}
            outcomes = sorted({f.outcome for f in finals.values()})
            rounds.append({"round": round_number, "all_decided": all_decided, "outcomes": outcomes,
                           "batches": per_batch})
            print(f"round {round_number}: all {len(contracts)} decided in {all_decided:.1f} s ({outcomes})",
                  file=sys.stderr)
    finally:
        deployed.down()
        postgres.stop()
        shutil.rmtree(postgres_folder, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    counted = rounds[1:] if len(rounds) > 1 else rounds
    batches = [b for r in counted for b in r["batches"].values()]
    keys = [k for k in dict.fromkeys(k for b in batches for k in b) if k != "gaps"] + ["gaps"]
    summary = {key: {"p50": statistics.median(b[key] for b in batches if key in b),
                     "max": max(b[key] for b in batches if key in b)} for key in keys}
    document = {"mode": args.mode, "landings": args.landings, "rounds": args.rounds, "up_seconds": up_seconds,
                "load_average": os.getloadavg(), "cores": os.cpu_count(),
                "all_decided_p50": statistics.median(r["all_decided"] for r in counted),
                "all_decided_max": max(r["all_decided"] for r in counted), "phases": summary, "raw": rounds}
    print(json.dumps(document, indent=2, default=str))
    print(f"\n| phase ({args.mode}, {args.landings} at once) | p50 s | max s |\n|---|---:|---:|")
    for key, value in summary.items():
        print(f"| {key} | {value['p50']:.1f} | {value['max']:.1f} |")
    print(f"| all {args.landings} decided | {document['all_decided_p50']:.1f} | {document['all_decided_max']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
