"""Execution modes: the local subprocess (streaming, failure, kill), spark_submit through
SparkSubmitHook (databricks: tests/airflow/test_databricks_mode.py)."""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
import threading
import time
from pathlib import Path

import pytest
from _airflow_gate import REPO, regional_rows
from waiting import wait_until

from contract_gate.runners import GateJob, GateJobError, get_runner
from contract_gate.runners.process import StreamedProcess


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def logger() -> tuple[logging.Logger, Lines]:
    log = logging.getLogger(f"test.runner.{time.monotonic_ns()}")
    log.setLevel(logging.INFO)
    handler = Lines()
    log.addHandler(handler)
    return log, handler


def test_child_output_is_streamed_and_a_failure_carries_its_error(tmp_path):
    log, seen = logger()
    script = "print('step one', flush=True)\nraise ValueError('the spark side broke')\n"
    process = StreamedProcess([sys.executable, "-c", script], env=dict(os.environ), cwd=str(tmp_path), log=log,
                              label="job")
    with pytest.raises(GateJobError) as failure:
        process.run()
    assert "step one" in seen.lines
    assert "Traceback (most recent call last)" in str(failure.value)
    assert "ValueError: the spark side broke" in str(failure.value)


def test_on_kill_stops_the_job_and_everything_it_started(tmp_path):
    log, seen = logger()
    script = ("import subprocess, time\n"
              "child = subprocess.Popen(['sleep', '300'])\n"
              "print('child', child.pid, flush=True)\n"
              "time.sleep(300)\n")
    process = StreamedProcess([sys.executable, "-c", script], env=dict(os.environ), cwd=str(tmp_path), log=log,
                              label="job")
    errors: list[BaseException] = []
    thread = threading.Thread(target=lambda: _capture(process.run, errors))
    thread.start()
    announced = wait_until(lambda: next((line for line in seen.lines if line.startswith("child ")), None),
                           timeout=30, message="the job announcing its child")
    child = int(announced.split()[1])
    process.kill()
    thread.join(30)
    assert isinstance(errors[0], GateJobError) and "killed" in str(errors[0])
    wait_until(lambda: not _alive(child), timeout=10, message=f"the job's child {child} ending")


def _capture(call, errors: list) -> None:
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - handed to the test thread
        errors.append(exc)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def plan_file(folder):
    from contract_gate.contract.compiler import compile_plan
    from contract_gate_plan.document import render_plan

    path = folder / "plan.json"
    path.write_text(render_plan(compile_plan(REPO / "contracts" / "regional_daily_cases.yaml").document))
    return path


def test_a_local_job_is_a_classic_driver_after_a_spark_connect_job_in_this_process(monkeypatch):
    """PySpark leaves its Connect switch in this process's environment after a spark_connect job;
    the local runner's child must not inherit it."""
    from contract_gate.runners.local import LocalRunner
    from contract_gate_spark.runtime.job_start import CONNECT_MODE_ENV

    monkeypatch.setenv(CONNECT_MODE_ENV, "1")
    assert CONNECT_MODE_ENV not in LocalRunner().environment()


def test_local_mode_surfaces_the_spark_side_error(tmp_path):
    log, seen = logger()
    job = GateJob("validate", {"--plan": tmp_path / "missing-plan.json", "--candidate": str(tmp_path / "nothing"),
                               "--report": tmp_path / "report.json"}, tmp_path, writes_result=False)
    with pytest.raises(GateJobError) as failure:
        get_runner("local", log=log, cwd=str(tmp_path)).start(job)
    assert "missing-plan.json" in str(failure.value) and "Traceback" in str(failure.value)
    assert any("missing-plan.json" in line for line in seen.lines)  # streamed into the task log too


@pytest.mark.slow
def test_spark_submit_mode_runs_a_gate_job_through_spark_submit_hook(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_LOCAL", json.dumps({"conn_type": "spark", "host": "local[2]"}))
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    batch = tmp_path / "batch.json"
    batch.write_text("".join(json.dumps(row) + "\n" for row in regional_rows()))
    job = GateJob("validate", {"--plan": plan_file(tmp_path), "--candidate": str(batch), "--format": "json",
                               "--report": tmp_path / "report.json"}, tmp_path, writes_result=False)
    runner = get_runner("spark_submit", conn_id="spark_local",
                        spark_conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    monkeypatch.delenv("SPARK_LOCAL_DIRS", raising=False)
    seen: dict[Path, set[str]] = {}  # the work folder's scratch folders, and what was in them while the job ran
    modes: set[int] = set()
    done = threading.Event()

    def look() -> None:
        while not done.wait(0.05):
            for folder in tmp_path.glob("spark-*"):
                try:
                    seen.setdefault(folder, set()).update(p.name for p in folder.iterdir())
                    modes.add(stat.S_IMODE(folder.stat().st_mode))
                except FileNotFoundError:  # removed as the job ended
                    pass

    watcher = threading.Thread(target=look)
    watcher.start()
    try:
        assert runner.start(job) == {}
    finally:
        done.set()
        watcher.join()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["outcome"] == "pass" and report["candidate"]["row_count"] == 3
    # the driver ran here (client mode): its Spark scratch (block manager, PySpark's temporary
    # files: rows of the batch) was one folder of the work folder, not /tmp, gone once the job ended
    ((scratch, left),) = seen.items()
    assert any(name.startswith("blockmgr-") for name in left) and any(name.startswith("spark-") for name in left), left
    assert modes == {0o700} and not scratch.exists()

def test_a_driver_on_the_cluster_or_with_chosen_local_dirs_gets_no_scratch_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_LOCAL", json.dumps({"conn_type": "spark", "host": "local[2]"}))
    monkeypatch.delenv("SPARK_LOCAL_DIRS", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "conf"))
    client = get_runner("spark_submit", conn_id="spark_local")
    assert client.needs_driver_scratch({})
    with GateJob("validate", {}, tmp_path).scratch() as scratch:
        assert scratch.parent == tmp_path
    assert not client.needs_driver_scratch({"spark.local.dir": "/disks/spill"})
    assert not get_runner("spark_submit", conn_id="spark_local", deploy_mode="cluster").needs_driver_scratch({})
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text("spark.local.dir   /disks/spill\n")
    assert not client.needs_driver_scratch({})
    (tmp_path / "conf" / "spark-defaults.conf").unlink()
    monkeypatch.setenv("SPARK_LOCAL_DIRS", "/disks/spill")
    assert not client.needs_driver_scratch({})


VIOLATION = """
import sys
from contract_gate_spark.runtime.session import get_session
spark, path = get_session(), sys.argv[1]
spark.sql(f"CREATE TABLE delta.`{path}` (org string, n bigint) USING DELTA")
spark.sql(f"ALTER TABLE delta.`{path}` ADD CONSTRAINT positive CHECK (n >= 0)")
try:
    spark.createDataFrame([("ZQX-ORG", -987654)], "org string, n bigint").write.format("delta").mode("append").save(path)
except Exception:
    print("rejected by the constraint")
"""


@pytest.mark.slow
def test_the_local_job_log_withholds_the_values_of_a_constraint_violation(tmp_path):
    """Delta's CHECK violation names the row's values in every log line and stack trace of it;
    the local runner's log layout cuts them out, so a task log never holds them."""
    import subprocess

    from contract_gate.runners.local import LocalRunner

    script = tmp_path / "violate.py"
    script.write_text(VIOLATION, encoding="utf-8")
    runner = LocalRunner(cwd=str(tmp_path))
    done = subprocess.run(runner.submit_argv(script, [str(tmp_path / "t")], tmp_path, "violation"),
                          env=runner.environment(), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "rejected by the constraint" in done.stdout, done.stderr[-2000:]
    assert "violated by row with values: (withheld)" in done.stderr
    assert "-987654" not in done.stdout + done.stderr


JOB_START = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from contract_gate_spark.runtime import job_start
job_start.prepare()
import pyspark
from contract_gate_spark.runtime.session import get_session
get_session().range(3).count()
print("pyspark from", pyspark.__file__)
print("pandas imported:", "pandas" in sys.modules, "pyarrow imported:", "pyarrow" in sys.modules)
"""


def test_a_local_job_imports_the_installed_pyspark_and_no_pandas(tmp_path):
    """spark-submit puts pyspark's zip first on the job's path (no cached bytecode: pyspark was
    compiled again on every job start) and pyspark's NumPy converters import pandas and pyarrow
    on the first call into the JVM; ``contract_gate_spark.runtime.job_start`` avoids both."""
    import subprocess

    import pyspark

    from contract_gate.runners.local import LocalRunner

    script = tmp_path / "start.py"
    script.write_text(JOB_START, encoding="utf-8")
    runner = LocalRunner(cwd=str(tmp_path))
    done = subprocess.run(runner.submit_argv(script, [str(REPO)], tmp_path, "job start"),
                          env=runner.environment(), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"pyspark from {pyspark.__file__}" in done.stdout  # the package, not .../python/lib/pyspark.zip
    assert "pandas imported: False pyarrow imported: False" in done.stdout


CAST_FAILURE = """
import sys
sys.path.insert(0, sys.argv[2])
from _spark_plans import D, cases_df, cases_plan, rule, with_rules
from contract_gate_spark.validation.engine import ValidationFailed, run_validation
from contract_gate_spark.runtime.session import get_session
spark = get_session()
plan = with_rules(cases_plan(), rule("c", "custom_sql", ["reporting_org"], "CAST(reporting_org AS INT) > 0"))
try:
    run_validation(spark, plan, cases_df(spark, [("NL", D, "ZQX-ORG-4410", 1, None)]))
except ValidationFailed as exc:
    print("refused:", exc)
"""


@pytest.mark.slow
def test_the_local_job_log_withholds_a_value_spark_quotes_in_a_task_error(tmp_path):
    """A contract's CAST of a classified column fails under ANSI mode, and Spark quotes the value
    in its error; neither the job's log nor its output holds it, only the error condition."""
    import subprocess

    from contract_gate.runners.local import LocalRunner

    script = tmp_path / "cast.py"
    script.write_text(CAST_FAILURE, encoding="utf-8")
    runner = LocalRunner(cwd=str(tmp_path))
    helpers = str(REPO / "tests" / "spark")
    done = subprocess.run(runner.submit_argv(script, [str(tmp_path / "t"), helpers], tmp_path, "cast"),
                          env=runner.environment(), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "refused: validation failed in Spark: CAST_INVALID_INPUT" in done.stdout, \
        done.stderr[-2000:]
    assert "the error is withheld" in done.stderr
    assert "ZQX-ORG-4410" not in done.stdout + done.stderr
