"""Run as a child process of the walk (``gate_walk.GateWorld.step_stop_connect``): one gate run of a
submission in the ``spark_connect`` mode, as a worker runs the generated DAG's two Spark tasks,
each a job of the ``SparkConnectRunner``: ``stage+validate+batch_keys``, then the branch's step
(publish, quarantine or split, as ``decide`` says). The walk stops it at a random moment.

A SIGTERM does what Airflow's task runner does with it: it calls the running task's ``on_kill``
(the runner interrupts the job's queries on the server) and the task ends failed; the next task
of a stopped run never starts. A SIGKILL is a worker lost without a word.

    python _connect_run.py <sc://url> <plan.json> <submission_id> <landing JSON> <folder>

A process of its own: a process is either a Spark Connect client or a classic Spark driver, and
the walk's process is a classic one.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from contract_gate.operators.branch import decide
from contract_gate.operators.validate import summarize
from contract_gate.runners.base import GateJob
from contract_gate.runners.spark_connect import SparkConnectRunner
from contract_gate_plan.model import load_plan

STOPPED_EXIT = 3


def main(url: str, plan_file: Path, submission_id: str, landing: str, folder: Path) -> int:
    runner = SparkConnectRunner(url=url)
    stopped = []

    def on_term(signum, frame) -> None:  # Airflow's handler: on_kill, and the task goes on to its end
        stopped.append(signum)
        runner.on_kill()

    signal.signal(signal.SIGTERM, on_term)
    common = {"--plan": plan_file, "--submission-id": submission_id, "--report": folder / "report.json"}
    staged = runner.start(GateJob("stage+validate+batch_keys", {**common, "--landing": landing}, folder))
    if stopped:
        return STOPPED_EXIT
    plan = load_plan(plan_file)
    summary = summarize(json.loads((folder / "report.json").read_text(encoding="utf-8")), folder / "report.json", staged)
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    branch, _ = decide(plan, summary)
    runner.start(GateJob(branch, {**common, "--candidate": json.dumps(staged["candidate"]),
                                  "--version": staged["version"]}, folder))
    return STOPPED_EXIT if stopped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4], Path(sys.argv[5])))
