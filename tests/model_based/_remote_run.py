"""Run as a child process of the walk (``gate_walk.GateWorld.step_stop_databricks``,
``step_stop_standalone``, ``step_stop_submit_client``): one gate run of a submission in a mode
whose jobs run outside this process, as a worker runs the generated DAG's two Spark tasks, each a job of the mode's runner waited on from this process (never deferred):
``stage+validate+batch_keys``, then the branch's step (publish, quarantine or split, as ``decide``
says). The walk stops it at a random moment.

- ``databricks``: runs on the walk's emulated workspace (``jobs_api_emulator``: an existing
  cluster, a local-mode spark-submit of the Spark side's wheel), polled.
- ``spark_submit``: drivers on the walk's standalone cluster (``standalone_cluster``), launched in
  cluster deploy mode through the master's REST server, their status polled; or in client deploy
  mode, on this machine, through the virtualenv's ``spark-submit`` (first on the ``PATH``, as on a
  worker whose environment is the virtualenv).

A SIGTERM does what Airflow's task runner does with it: it calls the running task's ``on_kill``
(the runner cancels its run, kills its driver) and the task ends failed; the next task of a
stopped run never starts. A SIGKILL is a worker lost without a word: its run or driver goes on.

    python _remote_run.py <mode> <conn_id> <plan.json> <submission_id> <landing JSON> <folder>

The connection is the walk's ``AIRFLOW_CONN_<CONN_ID>``, inherited.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from contract_gate.operators.branch import decide
from contract_gate.operators.validate import summarize
from contract_gate.runners import GateJob, get_runner, run_name
from contract_gate_plan.model import load_plan

STOPPED_EXIT = 3


def main(mode: str, conn_id: str, plan_file: Path, submission_id: str, landing: str, folder: Path) -> int:
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    plan = load_plan(plan_file)
    runner = get_runner(mode, conn_id=conn_id, deferrable=False, polling_period_seconds=1)
    stopped = []

    def on_term(signum, frame) -> None:  # Airflow's handler: on_kill, and the task goes on to its end
        stopped.append(signum)
        runner.on_kill()

    signal.signal(signal.SIGTERM, on_term)

    def job(steps: str, arguments: dict) -> GateJob:
        common = {"--plan": plan_file, "--submission-id": submission_id, "--report": folder / "report.json"}
        return GateJob(steps, {**common, **arguments}, folder, name=run_name(plan.contract_id, steps, submission_id))

    staged = runner.start(job("stage+validate+batch_keys", {"--landing": landing}))
    assert isinstance(staged, dict)  # polled here, never deferred
    if stopped:
        return STOPPED_EXIT
    summary = summarize(json.loads((folder / "report.json").read_text(encoding="utf-8")), folder / "report.json", staged)
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    branch, _ = decide(plan, summary)
    runner.start(job(branch, {"--candidate": json.dumps(staged["candidate"]), "--version": staged["version"]}))
    return STOPPED_EXIT if stopped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4], sys.argv[5], Path(sys.argv[6])))
