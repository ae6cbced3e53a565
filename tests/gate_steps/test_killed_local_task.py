"""A gate job whose driver runs on the worker dies with its task, and nothing it does lands after
the decision: a ``local`` job, and a ``spark_submit`` job in client deploy mode (its driver is a
process of the worker too; the cluster here is ``local[1]``, so its executors die with it).

The task is a process of its own (``_local_task.py``: the mode's runner's spark-submit job, as
a gate task runs it) killed with SIGKILL, as an OOM kill or ``kill -9`` does, with no
``on_kill``: while its publish writes the MERGE's data files, and while its validation runs.
Then the decision is written as the record task writes it (``job_fence.no_job_running`` around
the write). Every process below the task (spark-submit, the JVM, the Python driver and workers)
is gone within 15 s of the kill, and the target's Delta version when the decision was written is
its version once they are all gone: no commit after the decision. Spark's scratch files (rows of
the batch), which a killed JVM cannot remove, are in an owner-only folder of the job's in the
owner-only work folder, not in the machine's ``/tmp``; in the ``local`` mode the JVM's own
temporary files too.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from _gate_plans import case, cases_df, plan_for, version_of
from waiting import wait_until

from _local_task import CONNECTION
from contract_gate import decisions
from contract_gate.work_folders.job_fence import no_job_running
from contract_gate_plan.model import load_plan
from contract_gate_plan.restricted import make_private_folder
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.validation.engine import run_validation
from contract_gate_spark.validation.report import write_report

TASK = Path(__file__).with_name("_local_task.py")
OUTLIVES_SECONDS = 15
MODES = ("local", "spark_submit")


@pytest.fixture(params=MODES)
def mode(request, monkeypatch) -> str:
    """The execution mode of the killed task; ``spark_submit``'s connection is a ``local[1]`` master in
    client deploy mode, and its spark-submit and driver Python are this virtualenv's."""
    monkeypatch.setenv(f"AIRFLOW_CONN_{CONNECTION.upper()}", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("SPARK_LOCAL_DIRS", raising=False)
    return request.param


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _world(spark, tmp_path: Path, rows: int) -> dict:
    """A target with one published batch, and a validated candidate of ``rows`` rows to gate next."""
    plan = plan_for("regional_daily_cases", tmp_path)
    first = {"kind": "path", "path": str(tmp_path / "candidates" / "first"), "format": "delta"}
    cases_df(spark, [case("NL-NH", 1)]).write.format("delta").save(first["path"])
    publish(spark, plan, "first", first, 0)
    candidate = {"kind": "path", "path": str(tmp_path / "candidates" / "killed"), "format": "delta"}
    cases_df(spark, [case(f"K{i}", 1 + i % 28, i) for i in range(rows)]).write.format("delta").save(candidate["path"])
    work = tmp_path / "work" / "killed"
    make_private_folder(work)  # as SparkGateOperator.workdir makes it
    staged = read_candidate(spark, candidate["path"], format="delta", version=0)
    report = run_validation(spark, plan, staged, submission_id="killed")
    write_report(report, work / "report.json")
    (work / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    return {"plan": plan, "candidate": candidate, "work": work}


def _kill_task(mode: str, steps: str, world: dict, moment) -> tuple[float, list[int]]:
    """Start the task, SIGKILL it (only it) once ``moment(processes below it)`` holds; the kill's
    time and every process seen below the task."""
    work = world["work"]
    arguments = {"--plan": str(work / "plan.json"), "--submission-id": "killed", "--version": 0,
                 "--report": str(work / "report.json")}
    if steps == "validate":
        arguments.update({"--candidate": world["candidate"]["path"], "--format": "delta"})
    else:
        arguments["--candidate"] = json.dumps(world["candidate"])
    with (work / "task.log").open("w") as log:
        task = subprocess.Popen([sys.executable, str(TASK), mode, steps, str(work), json.dumps(arguments)],
                                stdout=log, stderr=log, cwd=work)
    below: set[int] = set()

    def ready() -> bool:
        if task.poll() is not None:
            raise AssertionError(f"the task ended before its kill: {(work / 'task.log').read_text()[-3000:]}")
        children = psutil.Process(task.pid).children(recursive=True)
        below.update(child.pid for child in children)
        return moment(children)

    wait_until(ready, timeout=600, interval=0.05, message=f"the {steps} job at its kill moment")
    os.kill(task.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    task.wait()
    return killed_at, sorted(below)


def _data_files(path: str) -> int:
    return len(list(Path(path).glob("*.parquet")))


@pytest.mark.slow
@pytest.mark.reliability
def test_a_publish_killed_with_its_task_ends_and_commits_nothing_after_the_decision(spark, tmp_path, mode):
    world = _world(spark, tmp_path, rows=2000)
    target = world["plan"]["tables"]["target"]
    before, files = version_of(spark, target), _data_files(target["path"])
    block_managers: list[Path] = []

    def writing(_) -> bool:
        block_managers[:] = world["work"].glob("spark-*/blockmgr-*")  # Spark's shuffle and spill files
        return _data_files(target["path"]) > files

    killed_at, below = _kill_task(mode, "publish", world, writing)
    assert below, "the task started no job process"

    with no_job_running(world["work"]):  # as the record task writes the decision
        decided_at = version_of(spark, target)
        decision = decisions.record_decision(load_plan(world["plan"]), {
            "submission_id": "killed", "contract_id": world["plan"]["contract"]["id"],
            "contract_version": world["plan"]["contract"]["version"], "plan_fingerprint": world["plan"]["fingerprint"],
            "outcome": "failed", "reason": "task(s) publish failed before a verdict", "run_id": "killed-run"})
    assert decision["outcome"] == "failed" and not decision["final"]
    wait_until(lambda: not any(map(_alive, below)), timeout=OUTLIVES_SECONDS, interval=0.1,
               message="every process of the killed task's job gone")
    assert time.monotonic() - killed_at <= OUTLIVES_SECONDS
    assert version_of(spark, target) == decided_at  # nothing committed after the decision
    # the killed JVM ran no shutdown hook: its scratch stays, in the job's owner-only folder
    assert block_managers and all(folder.is_dir() for folder in block_managers)
    (scratch,) = {folder.parent for folder in block_managers}
    assert stat.S_IMODE(scratch.stat().st_mode) == 0o700 and scratch.parent == world["work"]
    if mode == "local":  # and the JVM's own temporary files with it: the native libraries it unpacked (lz4
        # for its shuffle, snappy for the Parquet files it wrote), which would be left in /tmp
        unpacked = sorted(path.name for path in scratch.iterdir())
        assert all(any(name.startswith(library) for name in unpacked) for library in ("liblz4-java-", "snappy-")), \
            unpacked
    history = spark.sql(f"DESCRIBE HISTORY delta.`{target['path']}`").collect()
    tagged = [row["version"] for row in history if row["userMetadata"] == "killed"]
    # the kill came while the MERGE wrote: it never committed, or it did before the decision (the
    # next run's recovery then finds it); never after
    assert tagged == [] and decided_at == before or tagged and max(tagged) <= decided_at


@pytest.mark.slow
@pytest.mark.reliability
def test_a_validation_killed_with_its_task_leaves_no_spark_process(spark, tmp_path, mode):
    world = _world(spark, tmp_path, rows=50)

    def driver_started(processes: list[psutil.Process]) -> bool:  # the job's Python driver, below its JVM
        def driver(process: psutil.Process) -> bool:
            try:
                return process.name().startswith("python") and "gate_job.py" in " ".join(process.cmdline())
            except psutil.Error:  # it ended while we looked
                return False

        return any(map(driver, processes))

    killed_at, below = _kill_task(mode, "validate", world, driver_started)
    assert below
    wait_until(lambda: not any(map(_alive, below)), timeout=OUTLIVES_SECONDS, interval=0.1,
               message="every process of the killed task's job gone")
    assert time.monotonic() - killed_at <= OUTLIVES_SECONDS
    with no_job_running(world["work"], timeout=1):  # and the decision need not wait for it
        pass
