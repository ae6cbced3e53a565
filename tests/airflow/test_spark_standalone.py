"""``spark_submit`` on a real Spark standalone cluster (master + worker from the pip-installed
pyspark, on 127.0.0.1): client deploy mode, and cluster deploy mode through the master's REST
submission server with the task deferring on ``SparkDriverStatusTrigger`` and resuming.

The cluster's ``python3`` is this virtualenv's (its bin folder first on the daemons' PATH), as a
real cluster's Python has pyspark. Each gate test lands its own contract (its own landing,
target and quarantine) so the tests run alone and in any order.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _airflow_gate import REPO, regional_rows
from standalone_cluster import StandaloneCluster, spark_home
from waiting import wait_until

from contract_gate.local_spark.submit import SHORT_JOB_JVM_OPTIONS
from contract_gate.runners import Deferral, GateJob, GateJobError, get_runner
from contract_gate.triggers.spark_driver import SparkDriverStatusTrigger

VENV_BIN = os.path.dirname(sys.executable)
# Every application here is a short job of a few rows: its driver and executor JVMs get the local
# runner's short-job options (no C2 compiler, serial GC), whose threads would otherwise compete
# for the two cores with the jobs themselves, as a user's spark_conf would set them.
SHORT_JOBS = {"spark.driver.extraJavaOptions": SHORT_JOB_JVM_OPTIONS,
              "spark.executor.extraJavaOptions": SHORT_JOB_JVM_OPTIONS}
# One executor core, so a cluster-mode driver (one core) and its executor fit the 2-core worker.
APP_CONF = {"spark.cores.max": "1", "spark.executor.memory": "1g", "spark.sql.shuffle.partitions": "2",
            "spark.ui.enabled": "false", **SHORT_JOBS}
# What the connection gives every job of the generated DAGs: a few-row batch needs no 200 shuffle
# partitions, nor a Delta snapshot cached in 50 (117 s -> 96 s for a gate run's two applications).
SMALL_BATCH_CONF = {"spark.sql.shuffle.partitions": 2, "spark.databricks.delta.snapshotPartitions": 2, **SHORT_JOBS}


async def first_event(trigger) -> dict:
    """Run a trigger to its first event in this process, as the triggerer would."""
    async for event in trigger.run():
        return event.payload
    raise AssertionError(f"{trigger!r} ended without an event")


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    path = f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"
    saved = os.environ["PATH"]
    os.environ["PATH"] = path  # the daemons' python3, and the hook's spark-submit, are this venv's
    try:
        with StandaloneCluster(tmp_path_factory.mktemp("spark-standalone")) as started:
            yield started
    finally:
        os.environ["PATH"] = saved


def connection(cluster: StandaloneCluster, deploy_mode: str) -> str:
    """The apache-spark provider's connection to the cluster, as a user would define it: a cluster-mode
    driver is waited on in the triggerer (``deferrable``; else ``[operators] default_deferrable``)."""
    return json.dumps({"conn_type": "spark", "host": "spark://127.0.0.1", "port": cluster.master_port,
                       "extra": {"deploy-mode": deploy_mode, "rest-port": cluster.rest_port,
                                 "contract_gate": {"polling_period_seconds": 1, "spark_conf": SMALL_BATCH_CONF,
                                                   "deferrable": True}}})


@pytest.fixture
def connections(cluster, monkeypatch):
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_STANDALONE_CLIENT", connection(cluster, "client"))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_STANDALONE_CLUSTER", connection(cluster, "cluster"))
    return cluster


def plan_file(folder: Path) -> Path:
    from contract_gate.contract.compiler import compile_plan
    from contract_gate_plan.document import render_plan

    path = folder / "plan.json"
    path.write_text(render_plan(compile_plan(REPO / "contracts" / "regional_daily_cases.yaml").document))
    return path


def validate_job(folder: Path, rows: list[dict]) -> GateJob:
    batch = folder / "batch.json"
    batch.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return GateJob("validate", {"--plan": plan_file(folder), "--candidate": str(batch), "--format": "json",
                                "--report": folder / "report.json"}, folder, writes_result=False)


def driver_states(cluster: StandaloneCluster) -> dict[str, str]:
    state = cluster.state()
    return {d["id"]: d["state"] for d in state.get("activedrivers", []) + state.get("completeddrivers", [])}


@pytest.mark.slow
def test_spark_submit_refuses_cluster_deploy_mode_for_python_on_a_standalone_master(connections, tmp_path):
    """Why cluster mode goes through the REST server: Spark 4's spark-submit still refuses it."""
    script = tmp_path / "app.py"
    script.write_text("print('never runs')\n")
    submit = subprocess.run([str(spark_home() / "bin" / "spark-submit"), "--master", connections.master_url,
                             "--deploy-mode", "cluster", str(script)],
                            capture_output=True, text=True, timeout=300, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert submit.returncode != 0
    assert "Cluster deploy mode is currently not supported for python applications on standalone clusters" in submit.stderr


@pytest.mark.slow
def test_cluster_mode_defers_and_the_serialized_trigger_reports_the_driver(connections, tmp_path):
    runner = get_runner("spark_submit", conn_id="spark_standalone_cluster", spark_conf=APP_CONF)
    job = validate_job(tmp_path, regional_rows(region="K"))
    deferral = runner.start(job)
    assert isinstance(deferral, Deferral) and isinstance(deferral.trigger, SparkDriverStatusTrigger)
    # The triggerer rebuilds the trigger from serialize(), in another process: do the same.
    classpath, kwargs = deferral.trigger.serialize()
    assert classpath == "contract_gate.triggers.spark_driver.SparkDriverStatusTrigger"
    trigger = SparkDriverStatusTrigger(**json.loads(json.dumps(kwargs)))
    assert trigger.rest_url == connections.rest_url
    event = asyncio.run(first_event(trigger))
    assert event["driver_state"] == "FINISHED" and event["driver_id"] == kwargs["driver_id"]
    assert driver_states(connections)[event["driver_id"]] == "FINISHED"
    # a fresh runner (the task resumes in a new process) reads the result through the work folder
    fresh = get_runner("spark_submit", conn_id="spark_standalone_cluster", spark_conf=APP_CONF)
    assert fresh.finish(job, event) == {}
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["outcome"] == "pass" and report["candidate"]["row_count"] == 3
    # the driver ran in the worker's work directory, not here
    assert (connections.work_dir / event["driver_id"] / "stderr").is_file()


@pytest.mark.slow
def test_a_failed_driver_fails_the_job_naming_the_driver(connections, tmp_path):
    runner = get_runner("spark_submit", conn_id="spark_standalone_cluster", spark_conf=APP_CONF, deferrable=False)
    job = GateJob("validate", {"--plan": tmp_path / "missing-plan.json", "--candidate": str(tmp_path / "nothing"),
                               "--report": tmp_path / "report.json"}, tmp_path, writes_result=False)
    with pytest.raises(GateJobError) as failure:
        runner.start(job)
    driver_id = runner._driver[1]
    assert f"Spark driver {driver_id} of gate job validate ended FAILED" in str(failure.value)
    assert "missing-plan.json" in (connections.work_dir / driver_id / "stderr").read_text()
    assert not (tmp_path / "report.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("killer", ["runner", "trigger"])
def test_on_kill_kills_the_driver(connections, tmp_path, killer):
    from contract_gate.runners.job_credentials import driver_settings_file

    # a bucket's settings the driver never uses: their file must go with the killed driver
    runner = get_runner("spark_submit", conn_id="spark_standalone_cluster", spark_conf=APP_CONF,
                        credentials={"spark.hadoop.fs.s3a.bucket.cg-unused.secret.key": "never-used"})
    deferral = runner.start(validate_job(tmp_path, regional_rows(region="L")))
    settings = driver_settings_file(tmp_path, "validate")
    assert settings.is_file() and deferral.trigger.serialize()[1]["settings_file"] == str(settings)
    driver_id = deferral.trigger.driver_id
    wait_until(lambda: driver_states(connections).get(driver_id) == "RUNNING", timeout=120, interval=0.2,
               message=f"driver {driver_id} running")
    if killer == "runner":
        runner.on_kill()  # the task is killed while it waits in the worker
    else:
        asyncio.run(deferral.trigger.on_kill())  # the deferred task is killed by a user
    assert not settings.exists()
    event = asyncio.run(first_event(deferral.trigger))
    assert event["driver_state"] == "KILLED"
    assert driver_states(connections)[driver_id] == "KILLED"
    with pytest.raises(GateJobError, match=f"{driver_id} of gate job validate ended KILLED"):
        runner.finish(GateJob("validate", {}, tmp_path, writes_result=False), event)
    assert not (tmp_path / "report.json").exists()


# Drivers that never get an executor: the worker's two cores less a driver's one cannot hold one of
# two cores, so the driver waits at its first query, as a driver does for a busy cluster.
WAITING_CONF = {**APP_CONF, "spark.executor.cores": "2", "spark.cores.max": "2", "spark.driver.memory": "512m"}


@pytest.mark.slow
def test_drivers_that_outlived_their_task_are_killed_before_the_decision_and_before_a_retry(
        connections, tmp_path, monkeypatch):
    """A worker lost without a word kills nothing, and its cluster-mode driver goes on. Each driver
    is written down in the submission's work folder as it is launched: a task's next try kills its
    earlier try's driver before it launches its own, and the record task's own step
    (``write_decision``, with the runner of the DAG's mode) kills every driver of the submission
    still running and waits for its end before it writes the decision; another submission's driver
    runs on. The drivers wait for an executor here, so what ends them is the gate."""
    from contract_gate import decisions
    from contract_gate.contract.compiler import compile_plan
    from contract_gate.operators.record import GateRecordDecisionOperator, verdict, write_decision
    from contract_gate.runners import run_name
    from contract_gate.runners.spark_submit import driver_record
    from contract_gate.work_folders import submission_folder

    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__WORK_DIR", str(tmp_path / "work"))
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path / "home"))
    plan = compile_plan(REPO / "contracts" / "regional_daily_cases.yaml")

    def lost_worker(submission: str) -> str:
        """A validate task's driver, launched by a worker that then died (no ``on_kill``)."""
        folder = submission_folder(plan, submission)
        folder.mkdir(parents=True, exist_ok=True)
        runner = get_runner("spark_submit", conn_id="spark_standalone_cluster", spark_conf=WAITING_CONF)
        job = validate_job(folder, regional_rows(region="M"))
        job = GateJob(job.steps, job.arguments, folder, writes_result=False,
                      name=run_name(plan.contract_id, job.steps, submission))
        return runner.start(job).trigger.driver_id

    def running(driver_id: str) -> bool:
        return driver_states(connections).get(driver_id) == "RUNNING"

    first, other = lost_worker("s1"), lost_worker("s2")
    wait_until(lambda: running(first) and running(other), timeout=120, interval=0.5, message="both drivers running")
    retry = lost_worker("s1")  # the task's next try, on another worker
    assert driver_states(connections)[first] == "KILLED"
    recorded = json.loads(driver_record(submission_folder(plan, "s1"), "validate").read_text())
    assert recorded["driver_id"] == retry != first and recorded["rest_endpoint"] == connections.rest_url
    wait_until(lambda: running(retry), timeout=120, interval=0.5, message="the retry's driver running")

    runner = GateRecordDecisionOperator(task_id="record_decision", contract="regional_daily_cases.yaml", task_ids={},
                                        execution_mode="spark_submit", conn_id="spark_standalone_cluster").runner(plan)
    context = {"contract_id": plan.contract_id, "object": plan.object, "plan_fingerprint": plan.fingerprint,
               "dag_id": "gate", "run_id": "r1", "try_number": 1}
    stored = write_decision(plan, verdict({"submission_id": "s1"}, None, {}, {"stage_validate": "failed"}), {},
                            context, runner)
    assert driver_states(connections)[retry] == "KILLED"  # ended before the decision was written
    assert driver_states(connections)[other] == "RUNNING"  # another submission's driver runs on
    assert stored["outcome"] == "failed" and not stored.get("rows_published")
    assert "ended 1 job(s) of the submission that outlived their task" in stored["reason"]
    assert decisions.final_decision(plan, "s1") is None  # not final: the batch can be gated again
    again = write_decision(plan, verdict({"submission_id": "s1"}, None, {}, {"stage_validate": "failed"}), {},
                           {**context, "try_number": 2}, runner)
    assert "outlived" not in again["reason"]  # nothing of the submission runs any more
    runner.end_orphaned_jobs(plan.contract_id, "s2", submission_folder(plan, "s2"))
    assert driver_states(connections)[other] == "KILLED"


def test_the_trigger_takes_only_a_driver_id_into_its_url():
    with pytest.raises(ValueError, match="not a standalone driver id"):
        SparkDriverStatusTrigger("http://127.0.0.1:6066", "../../v1/submissions/kill/driver-1-1")


# --- the generated gate DAG, through dag.test(), in each deploy mode ---------------------------

def standalone_contract(gate, deploy_mode: str):
    """The regional contract as a contract of its own, gated by spark_submit in ``deploy_mode``."""
    from contract_gate.dag_factory import sync_dag_files

    name = f"regional_sa_{deploy_mode}"
    text = (gate.contracts / "regional_daily_cases.yaml").read_text()
    text = text.replace("id: regional_daily_cases", f"id: {name}")
    text = text.replace("path: landing/regional_daily_cases", f"path: landing/{name}")
    text = text.replace("        mode: local",
                        f"        mode: spark_submit\n        connectionId: spark_standalone_{deploy_mode}")
    text = text.replace("  - name: regional_daily_cases\n", f"  - name: {name}\n")
    text = text.replace("element: regional_daily_cases.report_date", f"element: {name}.report_date")
    path = gate.contracts / f"{name}.yaml"
    path.write_text(text)
    sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
    gate.reset_bag()
    return name, path


@pytest.fixture
def contract_in_mode(gate, request):
    from contract_gate.dag_factory import sync_dag_files

    name, path = standalone_contract(gate, request.param)
    yield request.param, name
    path.unlink()
    sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
    gate.reset_bag()


@pytest.fixture
def trigger_events(monkeypatch):
    """Every event a SparkDriverStatusTrigger fired (dag.test runs triggers in this process)."""
    events: list[dict] = []
    run = SparkDriverStatusTrigger.run

    async def recording(self):
        async for event in run(self):
            events.append(event.payload)
            yield event

    monkeypatch.setattr(SparkDriverStatusTrigger, "run", recording)
    return events


@pytest.mark.slow
@pytest.mark.parametrize("contract_in_mode", ["cluster", "client"], indirect=True)
def test_a_gate_dags_jobs_run_as_applications_of_the_standalone_cluster(gate, connections, contract_in_mode,
                                                                       trigger_events):
    """One batch per deploy mode: a good one published in cluster mode, a bad one quarantined in
    client mode. Each gate job is an application of half a minute or more on this 2-core machine;
    both batches in both modes ran the same runner twice over for minutes more of CI."""
    deploy_mode, name = contract_in_mode
    target, quarantine = f"lakehouse/{name}", f"lakehouse/{name}_quarantine"
    apps_before = len(connections.state()["completedapps"])

    if deploy_mode == "cluster":
        gate.land(name, regional_rows(region="G"), "csv")
        good = gate.run(name)
        assert good.decision["outcome"] == "published"
        assert good.states["stage_validate"] == good.states["publish"] == "success"
        version = gate.version(target)
        assert sorted((r["region_code"], r["case_count"]) for r in gate.rows(target)) == [
            ("G0", 10), ("G1", 11), ("G2", 12)]
        commit = good.xcoms["publish"]["publish"]
        assert commit["status"] == "published" and commit["target_version_after"] == version
    else:
        gate.land(name, regional_rows(region="B", bad=True), "csv")
        bad = gate.run(name)
        assert bad.decision["outcome"] == "quarantined"
        assert bad.states["publish"] == "skipped" and bad.states["quarantine"] == "success"
        assert gate.version(target) is None and gate.rows(target) == []  # nothing was published
        mine = [r for r in gate.rows(quarantine) if r["_submission_id"] == bad.decision["submission_id"]]
        assert sorted(r["region_code"] for r in mine) == ["B0", "B1", "B2"]

    # Each gate job ran as an application of the cluster: stage+validate, then publish or quarantine.
    apps = connections.state()["completedapps"][apps_before:]
    assert len(apps) == 2 and all(app["state"] == "FINISHED" for app in apps)
    if deploy_mode == "cluster":
        # each job's task deferred, the trigger saw its driver finish, the task resumed
        assert [e["driver_state"] for e in trigger_events] == ["FINISHED"] * 2
        states = driver_states(connections)
        assert all(states[e["driver_id"]] == "FINISHED" for e in trigger_events)
    else:
        assert trigger_events == []


def test_cluster_mode_on_several_standalone_masters_is_refused_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_HA", json.dumps(
        {"conn_type": "spark", "host": "spark://m1:7077,m2:7077", "extra": {"deploy-mode": "cluster"}}))
    runner = get_runner("spark_submit", conn_id="spark_ha")
    with pytest.raises(GateJobError, match="needs one master") as refusal:
        runner.start(validate_job(tmp_path, regional_rows(region="H")))
    assert "spark://m1:7077,m2:7077" in str(refusal.value)
    assert not (tmp_path / "gate_job.py").exists()  # nothing was submitted


def test_the_connections_spark_conf_reaches_every_job_under_the_tasks_own(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_TUNED", json.dumps(
        {"conn_type": "spark", "host": "spark://m1:7077",
         "extra": {"contract_gate": {"spark_conf": {"spark.sql.shuffle.partitions": 8, "spark.cores.max": "4",
                                                    "spark.sql.adaptive.enabled": True}}}}))
    packages, conf = get_runner("spark_submit", conn_id="spark_tuned",
                                spark_conf={"spark.cores.max": "2"}).job_conf()
    assert conf["spark.sql.shuffle.partitions"] == "8" and conf["spark.sql.adaptive.enabled"] == "true"
    assert conf["spark.cores.max"] == "2"  # the task's own setting wins
    assert conf["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension" and packages

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_TUNED", json.dumps(
        {"conn_type": "spark", "host": "spark://m1:7077",
         "extra": {"contract_gate": {"spark_conf": {"spark.jars": ["a.jar"]}}}}))
    with pytest.raises(ValueError, match="'spark_tuned': extra contract_gate.spark_conf"):
        get_runner("spark_submit", conn_id="spark_tuned")


@pytest.mark.slow
def test_a_query_past_its_budget_is_stopped_on_the_standalone_cluster(gate, connections):
    """Cluster deploy mode: the driver on the cluster stops the contract query at
    ``limits.querySeconds``, the decision is ``failed`` naming the rule, nothing is published,
    and the master lists no running application or driver afterwards."""
    from budget_contracts import RULE_ID, many_rows, slow_contract

    from contract_gate.dag_factory import sync_dag_files

    name = "slow_standalone"
    path = gate.contracts / f"{name}.yaml"
    path.write_text(slow_contract(name, "spark_submit", query_seconds=5, connection_id="spark_standalone_cluster"))
    sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
    gate.reset_bag()
    try:
        gate.land(name, many_rows(), "csv")
        run = gate.run(name)
    finally:
        path.unlink()
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()
    assert run.states["stage_validate"] == "failed" and run.states["publish"] != "success"
    assert run.xcoms["stage_validate:stopped"]["running"] == f"rule {RULE_ID!r}"
    submission = run.xcoms["submission"]["submission_id"]
    (decision,) = [row for row in gate.rows("lakehouse/contract_gate_decisions") if row["submission_id"] == submission]
    assert decision["outcome"] == "failed"
    assert decision["reason"] == f"time budget exceeded: rule {RULE_ID!r} was still running after 5 s (limits.querySeconds)"
    assert gate.version(f"lakehouse/{name}") is None  # nothing was published
    wait_until(lambda: connections.state().get("activeapps") == [] and connections.state().get("activedrivers") == [],
               timeout=10, interval=0.5, message="no application or driver running on the cluster")


# --- a plan with S3 tables: the connector's jars shipped, the credentials off every command line --

S3_BUCKET = "cg-standalone"
S3_CONNECTION = "cg_standalone_s3"


def command_lines_under(folder: Path) -> list[str]:
    """The command lines of the live processes working in ``folder`` (a worker's drivers and executors)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and Path(os.readlink(entry / "cwd")).is_relative_to(folder):
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue  # ended meanwhile, or not ours to read
    return found


@pytest.mark.slow
def test_cluster_mode_reads_s3_with_the_shipped_connector_and_credentials_off_the_command_line(
        connections, s3_server, tmp_path, monkeypatch):
    from _s3_server import SECRET

    from contract_gate.object_storage import spark_job_storage
    from contract_gate.runners.job_credentials import driver_settings_file

    monkeypatch.setenv(f"AIRFLOW_CONN_{S3_CONNECTION.upper()}", s3_server.connection())
    client = s3_server.client()
    client.create_bucket(Bucket=S3_BUCKET)
    client.put_object(Bucket=S3_BUCKET, Key="batches/S/batch.json", Body="".join(
        json.dumps(row) + "\n" for row in regional_rows(region="S")).encode())
    landing = {"kind": "path", "path": f"s3a://{S3_BUCKET}/batches/S", "format": "json", "connection": S3_CONNECTION}
    storage = spark_job_storage({"landing": landing}, "spark_submit")
    runner = get_runner("spark_submit", conn_id="spark_standalone_cluster", spark_conf={**APP_CONF, **storage.conf},
                        credentials=storage.credentials)
    job = GateJob("validate", {"--plan": plan_file(tmp_path), "--candidate": landing["path"], "--format": "json",
                               "--report": tmp_path / "report.json"}, tmp_path, writes_result=False)
    deferral = runner.start(job)
    settings = driver_settings_file(tmp_path, "validate")
    assert settings.stat().st_mode & 0o777 == 0o600 and SECRET in settings.read_text()

    driver_id = deferral.trigger.driver_id
    driver_folder = connections.work_dir / driver_id
    wait_until(lambda: any("PythonRunner" in line for line in command_lines_under(driver_folder)), timeout=300,
               interval=0.2, message=f"driver {driver_id} running")
    lines = command_lines_under(connections.work_dir)
    assert lines and not [line for line in lines if SECRET in line]
    event = asyncio.run(first_event(deferral.trigger))
    assert event["driver_state"] == "FINISHED", (driver_folder / "stderr").read_text()[-3000:]
    assert get_runner("spark_submit", conn_id="spark_standalone_cluster").finish(job, event) == {}
    assert not settings.exists()
    # the batch was read from the bucket by the cluster, with the jars shipped through the shared folder
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["outcome"] == "pass" and report["candidate"]["row_count"] == 3
    shipped = {jar.name for jar in (tmp_path.parent.parent / "_jars").iterdir()}
    assert {Path(jar).name for jar in storage.conf["spark.jars"].split(",")} <= shipped
    assert SECRET not in (driver_folder / "stderr").read_text()


@pytest.mark.slow
def test_client_mode_reads_s3_with_the_credentials_in_a_properties_file(connections, s3_server, tmp_path, monkeypatch):
    """Through ``SparkSubmitHook``: the bucket's settings in a ``--properties-file``, never on the
    command line of spark-submit, the driver or the executors; the file gone after the job."""
    import threading

    from _s3_server import SECRET

    from contract_gate.object_storage import spark_job_storage

    monkeypatch.setenv(f"AIRFLOW_CONN_{S3_CONNECTION.upper()}", s3_server.connection())
    client = s3_server.client()
    client.create_bucket(Bucket=S3_BUCKET)
    client.put_object(Bucket=S3_BUCKET, Key="batches/C/batch.json", Body="".join(
        json.dumps(row) + "\n" for row in regional_rows(region="C")).encode())
    landing = {"kind": "path", "path": f"s3a://{S3_BUCKET}/batches/C", "format": "json", "connection": S3_CONNECTION}
    storage = spark_job_storage({"landing": landing}, "spark_submit")
    runner = get_runner("spark_submit", conn_id="spark_standalone_client", spark_conf={**APP_CONF, **storage.conf},
                        credentials=storage.credentials)
    job = GateJob("validate", {"--plan": plan_file(tmp_path), "--candidate": landing["path"], "--format": "json",
                               "--report": tmp_path / "report.json"}, tmp_path, writes_result=False)
    outcome: dict = {}
    thread = threading.Thread(target=lambda: outcome.update(result=runner.start(job)))
    thread.start()
    try:
        def executor_running():
            mine = [line for line in command_lines_under(Path("/")) if str(tmp_path) in line]
            return mine if any("CoarseGrainedExecutorBackend" in line
                               for line in command_lines_under(connections.work_dir)) and mine else None

        lines = wait_until(executor_running, timeout=300, interval=0.2, message="the job's executor running")
        lines += command_lines_under(connections.work_dir)
        assert any("--properties-file" in line for line in lines), lines
        assert not [line for line in lines if SECRET in line]
        properties = runner._credentials.path
        assert properties.stat().st_mode & 0o777 == 0o600 and SECRET in properties.read_text()
    finally:
        thread.join()
    assert outcome.get("result") == {}
    assert not properties.parent.exists()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["outcome"] == "pass" and report["candidate"]["row_count"] == 3
