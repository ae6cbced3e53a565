"""Many contracts gated at once through one Spark Connect server (the gate benchmark's fleet part).

``fleet_benchmark`` splits renamed copies of the example contracts over ``workers`` child
processes; each child is an Airflow world of its own (its own SQLite database and DAG folder, as
separate Airflow workers would be) in ``spark_connect`` mode (``CONTRACT_GATE_EXECUTION_MODE``),
all sharing one gate home: one lakehouse and one decision log. Each child gates its contracts one
after the other through their generated DAGs (``dag.test()``), so ``workers`` DAG runs are in
flight at once. The children start together once every one has imported Airflow and parsed its
DAGs; the total is from that start to the last decision.

Every other contract gets a bad batch. A run counts as an error unless every task ended
``success`` or ``skipped``, a good batch was published and a bad one rejected (quarantined or
split), and the decision log holds exactly one decision for its submission.

    python benchmarks/gate/fleet.py <spec.json>      # one child; run.py starts them
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 600  # four Airflow imports and DAG parses on two shared cores


def fleet_benchmark(root: Path, server, contracts: dict[str, Path], workers: int, airflow_db: Path) -> dict:
    """Gate every contract of ``contracts`` (id -> the example file it copies; its YAML is in
    ``root / "contracts"``) once, ``workers`` at a time, through the Connect ``server``."""
    sys.path.insert(0, str(REPO / "tests"))
    from waiting import wait_until

    home, go = root / "home", root / "go"
    children, outputs = [], []
    names = sorted(contracts)
    for worker in range(workers):
        folder = root / f"worker{worker}"
        (folder / "contracts").mkdir(parents=True)
        (folder / "airflow").mkdir()
        copy_database(airflow_db, folder / "airflow" / "airflow.db")
        mine = [{"id": name, "example": contracts[name].stem, "bad": names.index(name) % 2 == 1, "salt": index}
                for index, name in enumerate(names) if index % workers == worker]
        for item in mine:
            shutil.copy(root / "contracts" / f"{item['id']}.yaml", folder / "contracts")
        spec = {"folder": str(folder), "home": str(home), "go": str(go), "runs": mine}
        (folder / "spec.json").write_text(json.dumps(spec))
        env = {**os.environ, "AIRFLOW_HOME": str(folder / "airflow"), "AIRFLOW__CORE__DAGS_FOLDER": str(folder / "dags"),
               "CONTRACT_GATE_HOME": str(home), "CONTRACT_GATE_EXECUTION_MODE": "spark_connect",
               "AIRFLOW_CONN_SPARK_CONNECT_DEFAULT": server.connection()}
        out = (folder / "stdout").open("w")
        err = (folder / "stderr").open("w")
        children.append(subprocess.Popen([sys.executable, __file__, str(folder / "spec.json")], env=env,
                                         stdout=out, stderr=err, cwd=folder))
        outputs.append((out, err))

    def all_ready() -> bool:
        for child in children:
            if child.poll() is not None:
                raise RuntimeError(f"a fleet worker exited early; see {root}/worker*/stderr")
        return all((root / f"worker{w}" / "ready").exists() for w in range(workers))

    wait_until(all_ready, timeout=START_TIMEOUT, interval=0.2, message="the fleet's workers ready")
    started = time.time()
    go.write_text(str(started))
    wait_until(lambda: all(child.poll() is not None for child in children), timeout=3600, interval=0.5,
               message="the fleet's DAG runs")
    for out, err in outputs:
        out.close()
        err.close()
    runs, crashed = [], []
    for worker, child in enumerate(children):
        folder = root / f"worker{worker}"
        lines = (folder / "stdout").read_text().strip().splitlines()
        if child.returncode != 0 or not lines:
            crashed.append(f"worker{worker}: exit {child.returncode}: {last_error(folder / 'stderr')}")
            continue
        runs += json.loads(lines[-1])
    errors = crashed + check_runs(runs, home)
    ended = max((run["ended"] for run in runs), default=started)
    per_run = sorted(run["ended"] - run["started"] for run in runs)
    return {"contracts": len(contracts), "dag_runs_at_once": workers, "runs": len(runs),
            "total_s": round(ended - started, 1),
            "per_run_median_s": round(per_run[len(per_run) // 2], 1) if per_run else None,
            "per_run_max_s": round(per_run[-1], 1) if per_run else None,
            "outcomes": {o: sum(run["outcome"] == o for run in runs) for o in sorted({r["outcome"] for r in runs})},
            "errors": errors}


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of the parent's migrated SQLite database (its write-ahead log
    included), so a worker needs no migration of its own."""
    with closing(sqlite3.connect(source)) as origin, closing(sqlite3.connect(target)) as copy:
        origin.backup(copy)


def last_error(stderr: Path) -> str:
    """The exception line of the last traceback in ``stderr`` (else its last line)."""
    lines = stderr.read_text(errors="replace").splitlines()
    errors = [line for line in lines if line and not line[0].isspace() and ("Error" in line.split(":")[0]
                                                                              or "Exception" in line.split(":")[0])]
    return (errors or lines or [""])[-1][:500]


def check_runs(runs: list[dict], home: Path) -> list[str]:
    """What went wrong in ``runs``: a failed task, an unexpected outcome, not one decision."""
    from deltalake import DeltaTable

    log = home / "lakehouse" / "contract_gate_decisions"
    decisions = DeltaTable(str(log)).to_pyarrow_table(columns=["submission_id", "outcome"]).to_pylist() \
        if (log / "_delta_log").is_dir() else []
    errors = []
    for run in runs:
        failed = {task: state for task, state in run["states"].items() if state not in ("success", "skipped")}
        expected = ("quarantined", "split") if run["bad"] else ("published",)
        recorded = [d["outcome"] for d in decisions if d["submission_id"] == run["submission_id"]]
        if failed or run["outcome"] not in expected or recorded != [run["outcome"]]:
            errors.append(f"{run['id']}: tasks {failed or 'ok'}, outcome {run['outcome']} "
                          f"(expected {' or '.join(expected)}), decisions recorded {recorded}")
    return errors


def child(spec_path: Path) -> list[dict]:
    """One worker: parse its contracts' DAGs, wait for the start, gate each once."""
    spec = json.loads(spec_path.read_text())
    folder = Path(spec["folder"])
    os.environ["CONTRACT_GATE_HOME"] = spec["home"]  # the plans' landings resolve there
    os.environ.update(AIRFLOW__CORE__LOAD_EXAMPLES="False", AIRFLOW__LOGGING__LOGGING_LEVEL="WARNING")
    sys.path[:0] = [str(REPO / "scripts"), str(REPO / "tests")]
    from demo import SAMPLES, write_batch  # the quick start's sample batches
    from waiting import wait_until

    from airflow.dag_processing.dagbag import DagBag

    from contract_gate.cli.run_cmd import decision_of
    from contract_gate.contract.compiler import compile_plan
    from contract_gate.dag_factory import STUB_FOLDER, sync_dag_files

    (folder / "dags").mkdir()
    shutil.copy(REPO / "dags" / "contract_gates.py", folder / "dags" / "contract_gates.py")
    sync_dag_files(folder / "dags" / "contract_gates.py", folder / "contracts")
    bag = DagBag(str(folder / "dags" / STUB_FOLDER))
    if bag.import_errors:
        raise RuntimeError("\n".join(bag.import_errors.values()))
    landings = {run["id"]: compile_plan(folder / "contracts" / f"{run['id']}.yaml").require_tables().landing
                for run in spec["runs"]}
    (folder / "ready").write_text("")
    wait_until(lambda: Path(spec["go"]).exists(), timeout=START_TIMEOUT, interval=0.05, message="the fleet's start")
    done = []
    for run in spec["runs"]:
        landing = landings[run["id"]]
        started = time.time()
        write_batch(Path(landing.path), landing.format, SAMPLES[run["example"]](run["bad"], run["salt"]))
        dag_run = bag.dags[run["id"]].test()
        decision = decision_of(dag_run)
        done.append({**run, "started": started, "ended": time.time(), "outcome": decision.get("outcome"),
                     "submission_id": decision.get("submission_id"),
                     "states": {ti.task_id: str(ti.state) for ti in dag_run.get_task_instances()}})
    return done


if __name__ == "__main__":
    print(json.dumps(child(Path(sys.argv[1]))))
