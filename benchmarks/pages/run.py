"""Benchmark: the gate's pages on a real ``airflow api-server`` with 1,000 decisions (target: < 1 s).

    .venv/bin/python benchmarks/pages/run.py [--decisions 1000] [--repeat 20]

The world is built once and cached under ``benchmarks/out/pages/`` (git-ignored): the three
example contracts, their gate DAGs serialized into a SQLite Airflow database, and a decision
table holding ``--decisions`` records of ``orders``, each written by the gate's own store in a
commit of its own (as the record task writes them: one small file per decision, the table's
worst layout before the retention DAG compacts it), plus a report file for one submission.

Then it starts the api-server with the plugin on 127.0.0.1 and fetches, as a signed-in user
(bearer token), the contracts page with ``?last=N`` (the counts, the chart and the list over all
N decisions of orders) and the report page of one submission (its records, its report and the
re-runs of it), ``--repeat`` times each after one warm-up request. The same pages are then timed
in-process (no HTTP, no auth) on the same table, and once more after the retention DAG's upkeep
compacted the contract's partition.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "benchmarks" / "out" / "pages"
TARGET_S = 1.0
REPORTED = "orders-0500"  # the submission whose report page is timed
PASSWORD = "bench-admin-pw"


def airflow_env(out: Path) -> dict[str, str]:
    return {"AIRFLOW_HOME": str(out / "airflow"), "AIRFLOW__CORE__DAGS_FOLDER": str(out / "dags"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False", "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
            "AIRFLOW__API_AUTH__JWT_SECRET": "pages-benchmark-secret-0123456789abcdef",
            "CONTRACT_GATE_HOME": str(out / "home"), "CONTRACT_GATE_CONTRACTS_DIR": str(out / "contracts")}


def build_world(out: Path, count: int) -> None:
    """Contracts, DAGs in the Airflow database, ``count`` decisions of orders, one report file."""
    shutil.rmtree(out, ignore_errors=True)
    (out / "home").mkdir(parents=True)
    shutil.copytree(REPO / "contracts", out / "contracts")
    (out / "dags").mkdir()
    shutil.copy(REPO / "dags" / "contract_gates.py", out / "dags" / "contract_gates.py")
    env = {**os.environ, **airflow_env(out)}
    os.environ.update(airflow_env(out))
    from contract_gate.dag_factory import sync_dag_files

    sync_dag_files(out / "dags" / "contract_gates.py", out / "contracts")
    airflow = str(Path(sys.executable).with_name("airflow"))
    for command in (["db", "migrate"], ["dags", "reserialize"]):
        subprocess.run([airflow, *command], env=env, check=True, stdout=subprocess.DEVNULL)
    from contract_gate.contract.compiler import compile_plan
    from contract_gate.decisions import record_decision

    plan = compile_plan(out / "contracts" / "orders.yaml")
    start = datetime.now(timezone.utc) - timedelta(hours=count)
    for number in range(count):
        outcome = ("published", "split", "quarantined", "split")[number % 4]
        failures = {} if outcome == "published" else {"currency_allowed": 1 + number % 3,
                                                       **({"order_total_not_negative": 2} if number % 8 == 2 else {})}
        record_decision(plan, {
            "submission_id": f"orders-{number:04d}", "contract_id": "orders", "contract_version": "1.0.0",
            "plan_fingerprint": plan.fingerprint, "outcome": outcome, "rule_failures": failures,
            "failed_rules": list(failures), "rows_landed": 8, "rows_published": 0 if outcome == "quarantined" else 6,
            "rows_quarantined": 0 if outcome == "published" else 2, "target_version_before": number,
            "target_version_after": number + 1, "dag_id": "orders", "run_id": f"manual__{number}", "try_number": 1,
            "rerun_of": f"orders-{number - 1:04d}" if number % 10 == 1 else None,
            "decided_at": (start + timedelta(hours=number)).isoformat()})
        if number % 100 == 99:
            print(f"  {number + 1} decisions", file=sys.stderr, flush=True)
    write_report(out / "home" / "lakehouse" / "_runs" / "orders" / REPORTED, plan)


def write_report(folder: Path, plan: dict) -> None:
    """A report of the report format (``contract_gate_spark.validation.report``) for ``REPORTED``."""
    folder.mkdir(parents=True)
    failed = {"currency_allowed": 1}
    rules = [{"id": r["id"], "kind": r["kind"], "scope": r["scope"], "columns": r.get("columns", []),
              "severity": r["severity"], "threshold": r.get("threshold"), "status": "evaluated",
              "failed_rows": failed.get(r["id"], 0), "evaluated_rows": 8, "measured": None,
              "passed": r["id"] not in failed, "reason": None} for r in plan.document["rules"]]
    report = {"report_version": 1, "contract": {"id": "orders", "version": "1.0.0"}, "plan_fingerprint": plan.fingerprint,
              "submission_id": REPORTED, "environment": "dev", "depth": "all",
              "candidate": {"table": "candidates/orders__" + REPORTED, "version": 0, "format": "delta", "row_count": 8},
              "schema": {"ok": True, "policy": "strict", "missing": [], "unexpected": [], "type_mismatches": []},
              "rules": rules, "outcome": "fail", "rows": {"valid": 7, "invalid": 1}, "timings": {}}
    (folder / "report.json").write_text(json.dumps(report))


def serve(out: Path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ)  # airflow_env(out), with the gate home measure() chose
    (out / "airflow" / "simple_auth_manager_passwords.json.generated").write_text(json.dumps({"admin": PASSWORD}))
    log = (out / "api-server.log").open("w")
    process = subprocess.Popen([str(Path(sys.executable).with_name("airflow")), "api-server", "-H", "127.0.0.1",
                                "-p", str(port), "-w", "1"], env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/v2/version", timeout=2):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the api-server did not start; see {out / 'api-server.log'}") from None
            time.sleep(0.5)
    return process, base


def token(base: str) -> str:
    request = urllib.request.Request(f"{base}/auth/token", data=json.dumps({"username": "admin", "password": PASSWORD}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request) as response:
        return json.load(response)["access_token"]


def fetch(url: str, bearer: str) -> tuple[float, int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {bearer}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request) as response:
        body = response.read().decode()
    return time.perf_counter() - started, response.status, body


def timed(call, repeat: int) -> list[float]:
    call()  # warm-up: imports, compiled contracts, the table's log
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return seconds


def line(name: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    verdict = "ok" if statistics.median(seconds) < TARGET_S else "OVER TARGET"
    return (f"  {name:58s} median {statistics.median(seconds) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms  "
            f"max {max(seconds) * 1000:7.1f} ms  {verdict}")


def measure(out: Path, home: Path, label: str, decisions: int, repeat: int) -> None:
    """Both pages over HTTP from an api-server whose gate home is ``home``, then in-process."""
    os.environ["CONTRACT_GATE_HOME"] = str(home)
    process, base = serve(out)
    try:
        bearer = token(base)
        contracts_url = f"{base}/contract-gate/?last={decisions}"
        report_url = f"{base}/contract-gate/contracts/orders/submissions/{REPORTED}"
        _, status, body = fetch(contracts_url, bearer)
        card = body.split('data-contract="orders"')[1].split("</section>")[0]
        assert status == 200 and card.count('data-submission="orders-') == 10 and card.count('class="count"') == 4
        assert sum(int(n) for n in card.split('class="count">')[1:] for n in [n.split("<")[0]]) == decisions
        _, status, body = fetch(report_url, bearer)
        assert status == 200 and REPORTED in body and 'data-rule="currency_allowed"' in body
        print(line(f"contracts page ?last={decisions}, HTTP ({label})", timed(lambda: fetch(contracts_url, bearer), repeat)))
        print(line(f"report page, HTTP ({label})", timed(lambda: fetch(report_url, bearer), repeat)))
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    from contract_gate.pages import build, data

    entries = data.load_contracts(out / "contracts")
    orders = data.find_contract(entries, "orders")
    print(line(f"contracts page, in-process ({label})", timed(lambda: build.contracts_page(entries, last=decisions), repeat)))
    print(line(f"report page, in-process ({label})", timed(lambda: build.report_page(orders, REPORTED), repeat)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    out = OUT / f"d{args.decisions}"
    if not (out / "ready").exists():
        print(f"building the world under {out} (once)", file=sys.stderr)
        build_world(out, args.decisions)
        (out / "ready").write_text("")
    os.environ.update(airflow_env(out))
    print(f"the gate's pages, {args.decisions} decisions of one contract (target: median < {TARGET_S:.0f} s), "
          f"{args.repeat} requests each after one warm-up:")
    measure(out, out / "home", "a file per decision", args.decisions, args.repeat)
    # the retention DAG's daily upkeep, on a copy (the cached world keeps its file per decision)
    from contract_gate.decisions import upkeep_decisions
    from contract_gate.pages import data

    compacted = out.with_name(out.name + "-compacted") / "home"
    shutil.rmtree(compacted, ignore_errors=True)
    shutil.copytree(out / "home", compacted)
    os.environ["CONTRACT_GATE_HOME"] = str(compacted)
    upkeep = upkeep_decisions(data.find_contract(data.load_contracts(out / "contracts"), "orders").plan)
    print(f"  upkeep (retention DAG): {upkeep['files_removed']} files compacted into {upkeep['files_added']}")
    measure(out, compacted, "after upkeep", args.decisions, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
