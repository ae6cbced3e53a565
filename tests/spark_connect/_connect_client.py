"""Run as a child process: gate jobs through the ``spark_connect`` runner against a Connect server.

A process is either a Spark Connect client or a classic Spark driver (pyspark switches its API
process-wide), and the suite's ``spark`` fixture makes the test process a classic one: so the
client work runs here, in a child, and prints what it did as JSON on its last line.

    python _connect_client.py steps <sc://url> <folder>
    python _connect_client.py concurrent <sc://url> <folder>
    python _connect_client.py prepare|publish <sc://url> <folder>
    python _connect_client.py cleanup <sc://url> <folder>
    python _connect_client.py slow <sc://url> <folder>
"""

from __future__ import annotations

import copy
import csv
import json
import sys
import threading
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS), str(TESTS / "gate_steps")]  # _gate_plans, _gate_once, waiting

from _gate_plans import case, plan_for, write_csv  # noqa: E402
from budget_contracts import many_rows, slow_contract  # noqa: E402

from contract_gate.runners.base import GateJob  # noqa: E402
from contract_gate_spark.steps.commits import LAST_COMMIT  # noqa: E402
from contract_gate.runners.spark_connect import SparkConnectRunner  # noqa: E402


def _job(url: str, folder: Path, steps: str, plan_file: Path, submission: str, spark_conf: dict | None = None,
         **arguments) -> dict:
    work = folder / "work" / submission
    work.mkdir(parents=True, exist_ok=True)
    options = {"--plan": plan_file, "--submission-id": submission,
               **{f"--{k.replace('_', '-')}": v for k, v in arguments.items()}}
    return SparkConnectRunner(url=url, spark_conf=spark_conf).start(GateJob(steps, options, work))


def _plan_file(folder: Path, contract: str) -> tuple[dict, Path]:
    plan = plan_for(contract, folder)
    path = folder / f"{contract}.plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return plan, path


def _gate(url: str, folder: Path, plan_file: Path, submission: str, outcome_step: str) -> dict:
    """stage+validate(+batch_keys), then ``outcome_step`` on the validated version: what the
    generated DAG's two jobs do."""
    report = folder / "work" / submission / "report.json"
    staged = _job(url, folder, "stage+validate+batch_keys", plan_file, submission, report=report)
    judged = json.loads(report.read_text())
    if outcome_step is None:
        return {"staged": staged, "report": judged}
    steps = outcome_step(judged) if callable(outcome_step) else outcome_step
    result = _job(url, folder, steps, plan_file, submission, candidate=json.dumps(staged["candidate"]),
                  version=staged["version"], report=report)
    return {"staged": staged, "outcome": judged["outcome"], "step": steps, "result": result}


def steps(url: str, folder: Path) -> dict:
    cases, cases_file = _plan_file(folder, "regional_daily_cases")
    landing = Path(cases["tables"]["landing"]["path"])
    write_csv(landing, [case("R1", 1, 7), case("R2", 1, 8)])
    good = _gate(url, folder, cases_file, "cases-good", "publish")
    # the retry's session says it committed version 5 before (as after a commit of its own): the
    # publish's tagged clone copies that conf, and must still tell that this write was skipped
    again = _job(url, folder, "publish", cases_file, "cases-good", candidate=json.dumps(good["staged"]["candidate"]),
                 version=good["staged"]["version"], report=folder / "work" / "cases-good" / "report.json",
                 spark_conf={LAST_COMMIT: "5"})
    write_csv(landing, [case("R3", 2, -5), case("R4", 2, 9)])
    bad = _gate(url, folder, cases_file, "cases-bad", lambda report: "publish" if report["outcome"] != "fail" else "quarantine")
    bad_again = _job(url, folder, "quarantine", cases_file, "cases-bad", candidate=json.dumps(bad["staged"]["candidate"]),
                     version=bad["staged"]["version"], report=folder / "work" / "cases-bad" / "report.json",
                     spark_conf={LAST_COMMIT: "5"})

    orders, orders_file = _plan_file(folder, "orders")
    rows = [{"order_id": f"O{i}", "customer_id": "C-1", "order_total": 20.0 + i, "currency": "EUR",
             "order_timestamp": "2025-03-01T10:00:00Z"} for i in range(3)]
    rows.append({"order_id": "X1", "customer_id": "C-1", "order_total": -1.0, "currency": "XXX",
                 "order_timestamp": "2025-03-01T11:00:00Z"})
    landing = Path(orders["tables"]["landing"]["path"])
    landing.mkdir(parents=True)
    (landing / "part-0.json").write_text("".join(json.dumps(row) + "\n" for row in rows))
    split = _gate(url, folder, orders_file, "orders-mixed", "split")
    return {"good": good, "again": again, "bad": bad, "bad_again": bad_again, "split": split,
            "tables": {"cases": cases["tables"], "orders": orders["tables"]}}


def concurrent(url: str, folder: Path) -> dict:
    """Two gates publishing into one target through one server at the same moment, each in its
    own thread, job and Connect session (as two tasks in one worker process would)."""
    cases, cases_file = _plan_file(folder, "regional_daily_cases")
    landing = Path(cases["tables"]["landing"]["path"])
    staged = {}
    for submission, region in (("twin-a", "A"), ("twin-b", "B")):
        write_csv(landing, [case(f"{region}{i}", 1, 10 + i) for i in range(3 if region == "A" else 2)])
        staged[submission] = _gate(url, folder, cases_file, submission, None)
    ready = threading.Barrier(2)
    results: dict = {}

    def publish(submission: str) -> None:
        ready.wait()  # both jobs start publishing together
        try:
            results[submission] = _job(url, folder, "publish", cases_file, submission,
                                       candidate=json.dumps(staged[submission]["staged"]["candidate"]),
                                       version=staged[submission]["staged"]["version"],
                                       report=folder / "work" / submission / "report.json")
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the test
            results[submission] = {"error": repr(exc)}

    threads = [threading.Thread(target=publish, args=(s,)) for s in staged]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"results": results, "tables": cases["tables"]}


def prepare(url: str, folder: Path) -> dict:
    """Stage and validate one good batch (the exactly-once trials then publish it)."""
    cases, cases_file = _plan_file(folder, "regional_daily_cases")
    write_csv(Path(cases["tables"]["landing"]["path"]), [case(f"K{i}", 1, 10 + i) for i in range(20)])
    return {**_gate(url, folder, cases_file, "once", None), "tables": cases["tables"]}


def publish_and_record(url: str, folder: Path) -> dict:
    """What the gate's publish and record tasks do for the prepared submission, over a Connect
    session: the process the exactly-once trials kill -9 (``tests/gate_steps/_gate_once.py``)."""
    from _gate_once import publish_and_record as publish_then_record

    from contract_gate_plan.document import read_document
    from contract_gate_spark.runtime.session import connect, release_children, using

    staged = json.loads((folder / "work" / "once" / "stage_validate_batch_keys.result.json").read_text())
    spark = connect(url)
    try:
        with using(spark):
            return publish_then_record(spark, read_document(folder / "regional_daily_cases.plan.json"), "once",
                                       staged["candidate"], staged["version"], f"run-{folder.name}")
    finally:
        release_children(spark)
        spark.stop()


def cleanup(url: str, folder: Path) -> dict:
    """Retention over a Connect session: two of this contract's candidates (one quarantined), one
    of another contract and one without ownership in the same candidate folder; then the cleanup
    step now, and as if 91 days had passed."""
    from datetime import datetime, timedelta, timezone

    from contract_gate_plan.ownership import claim_statement
    from contract_gate_spark.runtime.session import connect, release_children
    from contract_gate_spark.steps.quarantine import quarantine
    from contract_gate_spark.steps.retention import cleanup as apply_retention
    from contract_gate_spark.steps.stage import stage_candidate

    cases = plan_for("regional_daily_cases", folder)
    landing = Path(cases["tables"]["landing"]["path"])
    spark = connect(url)
    try:
        staged = {}
        for submission, count in (("old-1", -1), ("old-2", 5)):
            write_csv(landing, [case("NL-NH", 1, count)])
            staged[submission] = stage_candidate(spark, cases, submission)
        quarantine(spark, cases, "old-1", staged["old-1"]["candidate"], 0, report=None, rows="invalid")
        candidates = Path(staged["old-1"]["candidate"]["path"]).parent
        foreign, unowned = candidates / "regional_daily_cases__foreign", candidates / "regional_daily_cases__unowned"
        for path in (foreign, unowned):
            spark.range(1).write.format("delta").save(str(path))
        spark.sql(claim_statement(f"delta.`{str(foreign).replace('`', '``')}`", "someone_else", "candidate"))
        now = apply_retention(spark, cases)
        later = apply_retention(spark, cases, now=datetime.now(timezone.utc) + timedelta(days=91))
        quarantined = spark.read.format("delta").load(cases["tables"]["quarantine"]["path"]).count()
    finally:
        release_children(spark)
        spark.stop()
    return {"now": now, "later": later, "quarantined_after": quarantined,
            "left": sorted(path.name for path in candidates.iterdir())}


def slow(url: str, folder: Path) -> dict:
    """Stage and validate, as submission ``slow-killed``, a batch on which the contract's query
    would run for hours (``tests/budget_contracts.py``): the process the SIGKILL test kills."""
    from contract_gate.contract.compiler import compile_plan
    from contract_gate.contract.loader import load_contract_text
    from contract_gate_plan.document import read_document

    document = copy.deepcopy(compile_plan(load_contract_text(
        slow_contract("slow_killed", "spark_connect", query_seconds=600), str(folder / "slow.yaml"))).document)
    document.pop("fingerprint")
    for address in document["tables"].values():
        if address["kind"] == "path":
            address["path"] = f"{folder}/{address['path']}"
    plan = read_document(document)
    plan_file = folder / "slow.plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    landing = Path(plan["tables"]["landing"]["path"])
    landing.mkdir(parents=True)
    rows = many_rows()
    with (landing / "part-0.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return _job(url, folder, "stage+validate", plan_file, "slow-killed",
                report=folder / "work" / "slow-killed" / "report.json")


if __name__ == "__main__":
    command, url, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    commands = {"steps": steps, "concurrent": concurrent, "prepare": prepare, "publish": publish_and_record,
                "cleanup": cleanup, "slow": slow}
    print(json.dumps(commands[command](url, folder), default=str))
