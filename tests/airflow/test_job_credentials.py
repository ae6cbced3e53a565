"""A bucket's S3 credentials reach a gate job's Spark in an owner-only properties file, never on
its command line (which ``/proc/<pid>/cmdline`` and ``ps`` show to every user of the machine):
a real local job reads a batch from the moto S3 server with them, the file is 0600 in a 0700
folder while the job runs, and it is gone after the job, also after a kill."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from _airflow_gate import REPO, regional_rows
from _s3_server import SECRET
from waiting import wait_until

from contract_gate.object_storage import spark_job_storage
from contract_gate.runners import GateJob, GateJobError, get_runner
from contract_gate.runners.job_credentials import properties_text, spark_defaults

BUCKET = "cg-credentials"
CONNECTION = "cg_credentials_s3"


def test_properties_escape_every_special_character_and_follow_the_spark_defaults(tmp_path, monkeypatch):
    text = properties_text({"spark.a": "x=y:z #!\\", "spark.b": " lead\nline"}, "spark.master local[1]")
    assert text == "spark.master local[1]\nspark.a=x\\=y\\:z\\ \\#\\!\\\\\nspark.b=\\ lead\\nline\n"
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text("spark.eventLog.enabled true\n")
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    assert spark_defaults(tmp_path) == "spark.eventLog.enabled true\n"
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "elsewhere"))
    assert spark_defaults(tmp_path) == ""


@pytest.fixture(scope="module")
def bucket(s3_server):
    saved = os.environ.get(f"AIRFLOW_CONN_{CONNECTION.upper()}")
    os.environ[f"AIRFLOW_CONN_{CONNECTION.upper()}"] = s3_server.connection()
    s3_server.client().create_bucket(Bucket=BUCKET)
    try:
        yield s3_server
    finally:
        if saved is None:
            os.environ.pop(f"AIRFLOW_CONN_{CONNECTION.upper()}", None)
        else:
            os.environ[f"AIRFLOW_CONN_{CONNECTION.upper()}"] = saved


def s3_validate_job(server, folder: Path, region: str) -> tuple[GateJob, dict, dict]:
    """A validate job of a JSON batch in the bucket; the job's public settings and credentials."""
    from contract_gate.contract.compiler import compile_plan
    from contract_gate_plan.document import render_plan

    key = f"batches/{region}/batch.json"
    server.client().put_object(Bucket=BUCKET, Key=key, Body="".join(
        json.dumps(row) + "\n" for row in regional_rows(region=region)).encode())
    plan = folder / "plan.json"
    plan.write_text(render_plan(compile_plan(REPO / "contracts" / "regional_daily_cases.yaml").document))
    landing = {"kind": "path", "path": f"s3a://{BUCKET}/batches/{region}", "format": "json", "connection": CONNECTION}
    storage = spark_job_storage({"landing": landing}, "local")
    job = GateJob("validate", {"--plan": plan, "--candidate": landing["path"], "--format": "json",
                               "--report": folder / "report.json"}, folder, writes_result=False)
    return job, storage.conf, storage.credentials


def group_command_lines(group: int) -> list[str]:
    """The command lines of every live process of process group ``group``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) == group:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except (OSError, ProcessLookupError):
            continue  # ended meanwhile
    return found


def started(runner) -> int:
    """The job's process group, once its Python driver runs (spark-submit's JVM has read its settings)."""
    def driver_up():
        process = runner._process.process if runner._process is not None else None
        if process is None:
            return None
        if process.poll() is not None:
            raise AssertionError(f"the job ended before it was looked at ({process.returncode})")
        lines = group_command_lines(process.pid)
        return process.pid if any("gate_job.py validate" in line and "java" not in line for line in lines) else None

    return wait_until(driver_up, timeout=300, interval=0.1, message="the gate job's Python driver")


def in_thread(call) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = call()
        except Exception as exc:  # the test asserts on it
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.slow
def test_a_local_job_reads_s3_with_credentials_that_never_reach_its_command_line(bucket, tmp_path):
    job, conf, credentials = s3_validate_job(bucket, tmp_path, "C")
    assert credentials[f"spark.hadoop.fs.s3a.bucket.{BUCKET}.secret.key"] == SECRET
    runner = get_runner("local", spark_conf=conf, credentials=credentials, cores=1)
    thread, outcome = in_thread(lambda: runner.start(job))
    try:
        group = started(runner)
        lines = group_command_lines(group)
        assert any("SparkSubmit" in line and "--properties-file" in line for line in lines), lines
        assert not [line for line in lines if SECRET in line]
        properties = runner._credentials.path
        assert stat.S_IMODE(properties.stat().st_mode) == 0o600
        assert stat.S_IMODE(properties.parent.stat().st_mode) == 0o700
        assert SECRET in properties.read_text()
    finally:
        thread.join()
    assert "error" not in outcome, outcome.get("error")
    # the batch was read from the bucket: the endpoint and keys of the file reached S3A
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["outcome"] == "pass" and report["candidate"]["row_count"] == 3
    assert not properties.parent.exists()
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


@pytest.mark.slow
def test_a_killed_local_job_leaves_no_credentials_behind(bucket, tmp_path):
    job, conf, credentials = s3_validate_job(bucket, tmp_path, "D")
    runner = get_runner("local", spark_conf=conf, credentials=credentials, cores=1)
    thread, outcome = in_thread(lambda: runner.start(job))
    try:
        started(runner)
        properties = runner._credentials.path
        assert properties.is_file()
        runner.on_kill()
    finally:
        thread.join()
    assert isinstance(outcome.get("error"), GateJobError) and "was killed" in str(outcome["error"])
    assert not properties.parent.exists()
