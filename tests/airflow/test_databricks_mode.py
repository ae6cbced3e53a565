"""The ``databricks`` mode against a local emulation of a workspace that reads every request with
the installed ``databricks-sdk``'s own models (``jobs_api_emulator``): the Spark side deploys
itself as a wheel in a Unity Catalog volume, and runs on serverless (a Spark Connect client of a
real local Connect server), a job cluster or an existing cluster (local-mode spark-submit). No
Databricks workspace is involved.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
import zipfile
from datetime import datetime, timedelta, timezone
from io import BytesIO
from unittest import mock

import pytest
from databricks.sdk.errors import DatabricksError
from _airflow_gate import REPO, gate_home, regional_rows
from jobs_api_emulator import JobsApiEmulator
from waiting import wait_until

import contract_gate
from contract_gate import decisions
from contract_gate.contract.compiler import compile_plan
from contract_gate.operators.record import GateRecordDecisionOperator, verdict, write_decision
from contract_gate.runners import GateJob, GateJobError, get_runner, run_name
from contract_gate.work_folders import submission_folder
from contract_gate.runners.spark_side_wheel import build_wheel

VOLUME = "/Volumes/main/contract_gate/work"
CONNECTION = "AIRFLOW_CONN_DATABRICKS_EMULATOR"
JOB_CLUSTER = {"spark_version": "17.3.x-scala2.13", "node_type_id": "i3.xlarge", "num_workers": 1}


@pytest.fixture
def workspace(tmp_path):
    with JobsApiEmulator(tmp_path / "workspace", tmp_path) as api:
        api.volumes.add(VOLUME)
        api.clusters.add("all-purpose-1")
        yield api


def wheel_uploads(api: JobsApiEmulator) -> list[str]:
    return [path for path in api.uploads if "/wheels/" in path]


def test_the_spark_side_wheel_is_the_same_bytes_for_the_same_files_and_holds_both_packages():
    first, second = build_wheel("1.2.3"), build_wheel("1.2.3")
    assert first == second
    assert first.filename.startswith("contract_gate_spark-1.2.3+") and first.filename.endswith("-py3-none-any.whl")
    assert build_wheel("1.2.4").filename != first.filename
    with zipfile.ZipFile(BytesIO(first.data)) as wheel:
        names = set(wheel.namelist())
        info = first.filename.removesuffix("-py3-none-any.whl")
        entry_points = wheel.read(f"{info}.dist-info/entry_points.txt").decode()
        metadata = wheel.read(f"{info}.dist-info/METADATA").decode()
    assert {"contract_gate_spark/commands/gate_job.py", "contract_gate_plan/model.py"} <= names
    assert not any("__pycache__" in name for name in names)
    assert "contract-gate-job = contract_gate_spark.commands.gate_job:run" in entry_points
    assert "Requires-Dist: sqlglot==" in metadata and "pyspark" not in metadata  # the runtime's own


def test_the_wheel_is_uploaded_once_per_version_and_each_compute_installs_it(workspace, tmp_path, monkeypatch):
    """Runs are submitted (deferring, as the connection says), never started: the compute takes its
    time to come up."""
    workspace.cluster_start_seconds = 600
    submitted = []
    for settings in ({"existing_cluster_id": "all-purpose-1"}, {"new_cluster": JOB_CLUSTER}, {}):
        monkeypatch.setenv(CONNECTION, workspace.connection(volume=VOLUME, deferrable=True, **settings))
        runner = get_runner("databricks", conn_id="databricks_emulator", spark_conf={"spark.sql.shuffle.partitions": "4"})
        job = GateJob("validate", {"--submission-id": "s1"}, tmp_path / "orders" / "s1", writes_result=False,
                      name="contract-gate orders validate s1")
        job.workdir.mkdir(parents=True, exist_ok=True)
        runner.start(job)
        runner.on_kill()
        submitted.append(workspace.submitted[-1])
    assert len(wheel_uploads(workspace)) == 1  # three runs of one version: one upload
    (wheel,) = wheel_uploads(workspace)
    existing, job_cluster, serverless = (body["tasks"][0] for body in submitted)
    assert existing["libraries"] == job_cluster["libraries"] == [{"whl": wheel}]
    assert existing["existing_cluster_id"] == "all-purpose-1"
    assert job_cluster["new_cluster"]["spark_conf"] == {"spark.sql.shuffle.partitions": "4"}
    assert job_cluster["new_cluster"]["custom_tags"] == {"contract_gate_contract": "orders", "contract_gate_steps": "validate",
                                                         "contract_gate_submission": "s1"}
    assert "libraries" not in serverless and serverless["environment_key"] == "contract_gate"
    assert submitted[2]["environments"] == [{"environment_key": "contract_gate",
                                             "spec": {"environment_version": "4", "dependencies": [wheel]}}]
    for body in submitted:
        assert body["run_name"] == "contract-gate orders validate s1"
        assert body["tasks"][0]["python_wheel_task"]["entry_point"] == "contract-gate-job"

    monkeypatch.setattr(contract_gate, "__version__", "99.0.0")  # the provider was upgraded
    runner = get_runner("databricks", conn_id="databricks_emulator")
    runner.start(job)
    runner.on_kill()
    assert len(wheel_uploads(workspace)) == 2 and "contract_gate_spark-99.0.0+" in wheel_uploads(workspace)[1]


def test_a_killed_task_cancels_its_run_and_so_does_a_killed_deferred_one(workspace, tmp_path, monkeypatch):
    from contract_gate.triggers.databricks_run import DatabricksRunTrigger

    workspace.cluster_start_seconds = 600
    monkeypatch.setenv(CONNECTION, workspace.connection(volume=VOLUME, existing_cluster_id="all-purpose-1",
                                                        polling_period_seconds=1, deferrable=False))
    runner = get_runner("databricks", conn_id="databricks_emulator")
    job = GateJob("validate", {"--submission-id": "s1"}, tmp_path, writes_result=False)
    errors: list[BaseException] = []

    def start() -> None:
        try:
            runner.start(job)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    thread = threading.Thread(target=start)
    thread.start()
    wait_until(lambda: runner._run_id is not None, timeout=60)
    runner.on_kill()
    thread.join(timeout=60)
    assert workspace.cancelled == [runner._run_id]
    assert len(errors) == 1 and isinstance(errors[0], GateJobError) and "CANCELED" in str(errors[0])

    deferred = get_runner("databricks", conn_id="databricks_emulator", deferrable=True)
    trigger = deferred.start(job).trigger
    assert isinstance(trigger, DatabricksRunTrigger)
    asyncio.run(trigger.on_kill())  # what the triggerer does when the deferred task is killed
    assert workspace.cancelled[-1] == trigger.run_id
    assert workspace.run_info(trigger.run_id).state.result_state.value == "CANCELED"


def test_settings_of_the_dbfs_mode_are_refused_with_what_replaces_them(workspace, monkeypatch):
    monkeypatch.setenv(CONNECTION, workspace.connection(volume=VOLUME, python_file="/dbfs/x/gate_job.py"))
    with pytest.raises(ValueError, match=r"python_file \(replaced by the runner deploys the Spark side itself"):
        get_runner("databricks", conn_id="databricks_emulator")
    monkeypatch.setenv(CONNECTION, workspace.connection(work_dir="dbfs:/contract_gate/runs"))
    with pytest.raises(ValueError, match=r"work_dir \(replaced by volume"):
        get_runner("databricks", conn_id="databricks_emulator")
    for volume in (None, "dbfs:/contract_gate", "/Volumes/main/only_schema", "/Volumes/main/s/v/../../x"):
        monkeypatch.setenv(CONNECTION, workspace.connection(volume=volume))
        with pytest.raises(ValueError, match="needs volume"):
            get_runner("databricks", conn_id="databricks_emulator")


def test_a_request_the_sdk_does_not_know_fails_the_test(tmp_path):
    """The emulator refuses a field that is not the SDK's, and leaving it then fails."""
    import requests

    with pytest.raises(AssertionError, match="has no field"):
        with JobsApiEmulator(tmp_path / "workspace", tmp_path) as api:
            answer = requests.post(f"http://127.0.0.1:{api.port}/api/2.2/jobs/runs/submit",
                                   json={"run_name": "x", "tasks": [], "python_file": "/dbfs/gate_job.py"}, timeout=30)
            assert answer.status_code == 400
    with pytest.raises(AssertionError, match="is not a SubmitTask"):
        with JobsApiEmulator(tmp_path / "workspace2", tmp_path) as api:
            requests.post(f"http://127.0.0.1:{api.port}/api/2.2/jobs/runs/submit",
                          json={"tasks": [{"task_key": "t", "spark_python_task": {"python_file": "x"}, "dbfs": 1}]},
                          timeout=30)


def big_plan_file(folder):
    """The regional contract's plan with a long description shared by its columns (one YAML anchor):
    a contract of a few hundred kB, a plan of over 1 MB (the plan repeats it per column)."""
    import yaml

    from contract_gate_plan.document import render_plan

    document = yaml.safe_load((REPO / "contracts" / "regional_daily_cases.yaml").read_text())
    for column in document["schema"][0]["properties"]:
        column["description"] = "LONG"
    text = yaml.safe_dump(document, sort_keys=False)
    long = "Counts per region, as the health offices report them. " * 6000
    text = text.replace("description: LONG", f"description: &long '{long}'", 1).replace("description: LONG", "description: *long")
    contract = folder / "regional_daily_cases.yaml"
    contract.write_text(text)
    path = folder / "plan.json"
    path.write_text(render_plan(compile_plan(contract).document))
    return path


@pytest.mark.slow
def test_a_plan_over_one_megabyte_travels_through_the_files_api(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv(CONNECTION, workspace.connection(volume=VOLUME, existing_cluster_id="all-purpose-1",
                                                        polling_period_seconds=1, deferrable=False))
    work = tmp_path / "regional_daily_cases" / "s-big"
    work.mkdir(parents=True)
    plan = big_plan_file(work)
    assert plan.stat().st_size > 1 << 20
    batch = tmp_path / "batch.json"
    batch.write_text("".join(json.dumps(row) + "\n" for row in regional_rows()))
    job = GateJob("validate", {"--plan": plan, "--candidate": str(batch), "--format": "json",
                               "--report": work / "report.json"}, work, writes_result=False)
    get_runner("databricks", conn_id="databricks_emulator").start(job)
    remote = f"{VOLUME}/runs/regional_daily_cases/s-big"
    assert f"{remote}/plan.json" in workspace.uploads
    report = json.loads((work / "report.json").read_text())  # written on the cluster, downloaded
    assert report["outcome"] == "pass" and report["candidate"]["row_count"] == 3
    assert json.loads(plan.read_text())["fingerprint"] == report["plan_fingerprint"]  # the whole plan was read
    # downloaded, then the run's folder is deleted from the volume: the local work folder keeps it
    assert workspace.deletions[-1] == remote and not workspace.local(remote).exists()


def test_a_run_that_succeeded_still_succeeds_when_its_volume_folder_cannot_be_deleted(workspace, tmp_path,
                                                                                      monkeypatch):
    """The end of a successful run (``finish``, as after its trigger fired): its files are downloaded,
    and a refused delete of its volume folder is a warning, not a failed task after a commit."""
    from contract_gate.hooks.databricks import DatabricksWorkspaceHook

    monkeypatch.setenv(CONNECTION, workspace.connection(volume=VOLUME))
    work = tmp_path / "regional_daily_cases" / "s-ok"
    work.mkdir(parents=True)
    plan = big_plan_file(work)
    job = GateJob("publish", {"--plan": plan, "--report": work / "report.json"}, work)
    remote = f"{VOLUME}/runs/regional_daily_cases/s-ok"
    hook = DatabricksWorkspaceHook("databricks_emulator")
    hook.upload(f"{remote}/report.json", b'{"outcome": "pass"}')
    hook.upload(f"{remote}/publish.result.json", b'{"published": true}')
    workspace.refuse_deletes = True

    log = mock.Mock(spec=logging.Logger)  # the task's logger, as the operator hands it over
    runner = get_runner("databricks", conn_id="databricks_emulator", log=log)
    result = runner.finish(job, {"run_id": 7, "result_state": "SUCCESS"})

    assert result == {"published": True}
    assert json.loads((work / "report.json").read_text()) == {"outcome": "pass"}
    assert workspace.local(f"{remote}/report.json").is_file()  # left in the volume, and said so
    (warning,) = log.warning.call_args_list
    assert (warning.args[0] % warning.args[1:]).startswith(
        f"the files of Databricks run 7 stay in {remote}: no WRITE VOLUME privilege on {remote}/")


def test_a_volume_folder_is_deleted_with_everything_in_it(workspace, monkeypatch):
    from contract_gate.hooks.databricks import DatabricksWorkspaceHook

    monkeypatch.setenv(CONNECTION, workspace.connection(volume=VOLUME))
    hook = DatabricksWorkspaceHook("databricks_emulator")
    folder = f"{VOLUME}/runs/orders/s1"
    for name in ("plan.json", "report.json", "nested/deeper/stop.json"):
        hook.upload(f"{folder}/{name}", b"{}")
    hook.upload(f"{VOLUME}/runs/orders/s2/plan.json", b"{}")

    hook.remove_folder(folder)

    assert not workspace.local(folder).exists()
    assert workspace.local(f"{VOLUME}/runs/orders/s2/plan.json").is_file()  # its neighbour stays
    assert hook.remove_folder(f"{VOLUME}/runs/orders/never-there") is None  # nothing there: nothing to do
    assert workspace.rejected == []



def date_back(api: JobsApiEmulator, folder: str, days: float) -> None:
    """Every file in the emulated volume folder last written ``days`` ago."""
    then = time.time() - days * 86400
    for path in api.local(folder).rglob("*"):
        os.utime(path, (then, then))


def test_retention_removes_the_volume_folders_runs_left_once_unchanged_for_the_days(workspace, tmp_path,
                                                                                   monkeypatch):
    """A failed run's volume folder, kept to look into, goes with the gate's work folders: the
    retention operator's own step (decision table upkeep included), against the emulated volume."""
    from contract_gate.hooks.databricks import DatabricksWorkspaceHook
    from contract_gate.operators.retention import GateRetentionOperator

    monkeypatch.setenv(CONNECTION, workspace.connection(volume=VOLUME))
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__WORK_DIR", str(tmp_path / "work"))
    monkeypatch.delenv("AIRFLOW__CONTRACT_GATE__WORK_DIR_DAYS", raising=False)  # the default, 90
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path / "home"))
    plan = compile_plan(REPO / "contracts" / "orders.yaml")
    hook = DatabricksWorkspaceHook("databricks_emulator")
    runs = f"{VOLUME}/runs/{plan.names.gate}"
    for folder in (f"{runs}/failed-long-ago", f"{runs}/failed-last-week", f"{runs}/rerun-today",
                   f"{VOLUME}/runs/another_gate/failed-long-ago"):
        for name in ("plan.json", "report.json", "stop/stop.json"):
            hook.upload(f"{folder}/{name}", b"{}")
    date_back(workspace, f"{runs}/failed-long-ago", 120)
    date_back(workspace, f"{runs}/failed-last-week", 7)
    date_back(workspace, f"{runs}/rerun-today", 120)
    hook.upload(f"{runs}/rerun-today/plan.json", b"{}")  # a re-run of the submission, today
    date_back(workspace, f"{VOLUME}/runs/another_gate/failed-long-ago", 120)
    assert hook.last_change(f"{runs}/rerun-today") > datetime.now(timezone.utc) - timedelta(minutes=5)

    retention = GateRetentionOperator(task_id="apply_retention", contract="orders.yaml", execution_mode="databricks",
                                      conn_id="databricks_emulator")
    pushed = retention.handle_result({}, plan, {"candidates_dropped": [], "quarantine_rows_deleted": 0})

    assert pushed["remote_folders_removed"] == ["failed-long-ago"]
    assert pushed["work_folders_removed"] == []
    assert not workspace.local(f"{runs}/failed-long-ago").exists()
    assert workspace.local(f"{runs}/failed-last-week/stop/stop.json").is_file()
    assert workspace.local(f"{runs}/rerun-today/report.json").is_file()  # its newest file decides
    assert workspace.local(f"{VOLUME}/runs/another_gate/failed-long-ago/plan.json").is_file()  # not this gate's
    runner = get_runner("databricks", conn_id="databricks_emulator")
    later = datetime.now(timezone.utc) + timedelta(days=1)
    assert runner.prune_remote_folders(plan.names.gate, later) == ["failed-last-week", "rerun-today"]
    assert list(workspace.local(runs).iterdir()) == []
    assert runner.prune_remote_folders("never_ran", later) == []  # no folder of that gate: nothing to do

    # a refused delete fails the retention task and names the folder, so an operator restores WRITE VOLUME
    hook.upload(f"{runs}/failed-again/plan.json", b"{}")
    workspace.refuse_deletes = True
    with pytest.raises(DatabricksError, match=f"no WRITE VOLUME privilege on {runs}/failed-again/plan.json"):
        runner.prune_remote_folders(plan.names.gate, later)
    assert workspace.local(f"{runs}/failed-again/plan.json").is_file()
    assert workspace.rejected == []

def test_runs_that_outlived_their_task_are_ended_before_the_decision_and_before_a_retry(workspace, tmp_path,
                                                                                      monkeypatch):
    """A worker lost without a word cancels nothing, and its Databricks run goes on. A task's next
    try cancels its earlier try's run before it submits its own; the record task's own step
    (``write_decision``, with the runner of the DAG's mode) cancels every run of the submission
    still going and waits for its end before it writes the decision, and leaves other
    submissions' and other contracts' runs alone. The runs wait for their compute here (PENDING),
    so what ends them is the gate; a run ended mid-commit is the walk's (tests/model_based)."""
    monkeypatch.setenv(CONNECTION, workspace.connection(volume=VOLUME, existing_cluster_id="all-purpose-1",
                                                        deferrable=True))
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__WORK_DIR", str(tmp_path / "work"))
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path / "home"))
    workspace.cluster_start_seconds = 600
    plan = compile_plan(REPO / "contracts" / "orders.yaml")

    def lost_worker(steps: str, submission: str = "s1", contract_id: str = plan.contract_id) -> int:
        """A task's run submitted by a worker that then died (no ``on_kill``): its run id."""
        folder = submission_folder(plan, submission)
        folder.mkdir(parents=True, exist_ok=True)
        runner = get_runner("databricks", conn_id="databricks_emulator")
        runner.start(GateJob(steps, {"--submission-id": submission}, folder,
                             name=run_name(contract_id, steps, submission)))
        assert runner._run_id is not None
        return runner._run_id

    def life_cycle(run_id: int) -> str:
        return workspace.run_info(run_id).state.life_cycle_state.value

    first_try = lost_worker("stage+validate+batch_keys")
    second_try = lost_worker("stage+validate+batch_keys")  # the task's retry, itself lost
    assert workspace.cancelled == [first_try] and life_cycle(first_try) == "TERMINATED"
    publish = lost_worker("publish")
    others = [lost_worker("publish", "s2"), lost_worker("publish", "s1", "another_contract")]
    assert [life_cycle(run) for run in (second_try, publish, *others)] == ["PENDING"] * 4

    record = verdict({"submission_id": "s1"}, None, {}, {"stage_validate": "failed"})
    runner = GateRecordDecisionOperator(task_id="record_decision", contract="orders.yaml", task_ids={},
                                        execution_mode="databricks", conn_id="databricks_emulator").runner(plan)
    context = {"contract_id": plan.contract_id, "object": plan.object, "plan_fingerprint": plan.fingerprint,
               "dag_id": "orders", "run_id": "manual__1", "try_number": 1}
    stored = write_decision(plan, record, {}, context, runner)

    assert sorted(workspace.cancelled) == sorted([first_try, second_try, publish])
    assert [life_cycle(run) for run in (second_try, publish)] == ["TERMINATED"] * 2
    assert [life_cycle(run) for run in others] == ["PENDING"] * 2  # another submission's, another contract's
    assert stored["outcome"] == "failed" and not stored.get("rows_published")
    assert "ended 2 job(s) of the submission that outlived their task" in stored["reason"]
    assert decisions.final_decision(plan, "s1") is None  # not final: the batch can be gated again
    again = write_decision(plan, verdict({"submission_id": "s1"}, None, {}, {"stage_validate": "failed"}), {},
                           {**context, "try_number": 2}, runner)
    assert "outlived" not in again["reason"]  # nothing of the submission goes on any more
    assert workspace.rejected == []
    # a mode whose runner cannot be made started no job either: the run is recorded all the same
    unmade = GateRecordDecisionOperator(task_id="record_decision", contract="orders.yaml", task_ids={},
                                        execution_mode="databricks", conn_id="no_such_connection").runner(plan)
    assert unmade.mode == "local" and unmade.end_orphaned_jobs(plan.contract_id, "s1", tmp_path) == []


# -- whole gates in each compute --------------------------------------------------------------
def databricks_contract(gate, name: str) -> str:
    """The regional contract as another contract, ``name``, whose gate runs in the databricks mode."""
    from contract_gate.dag_factory import sync_dag_files

    text = (gate.contracts / "regional_daily_cases.yaml").read_text()
    text = text.replace("id: regional_daily_cases", f"id: {name}")
    text = text.replace("path: landing/regional_daily_cases", f"path: landing/{name}")
    text = text.replace("        mode: local", "        mode: databricks\n        connectionId: databricks_emulator")
    text = text.replace("  - name: regional_daily_cases\n", f"  - name: {name}\n")
    text = text.replace("element: regional_daily_cases.report_date", f"element: {name}.report_date")
    (gate.contracts / f"{name}.yaml").write_text(text)
    sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
    gate.reset_bag()
    return name


@pytest.fixture
def gates(gate):
    made = []
    yield lambda name: made.append(databricks_contract(gate, name)) or name
    from contract_gate.dag_factory import sync_dag_files

    for name in made:
        (gate.contracts / f"{name}.yaml").unlink()
    sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
    gate.reset_bag()


def publish_then_quarantine(gate, name: str, api: JobsApiEmulator, compute: str) -> None:
    """A valid batch is published; a bad one is quarantined and leaves the target as it was."""
    gate.land(name, regional_rows(region="D"), "csv")
    run = gate.run(name)
    assert run.decision["outcome"] == "published", run.decision
    assert run.states["stage_validate"] == run.states["publish"] == "success"
    target = f"lakehouse/{name}"
    with gate_home():
        version, rows = gate.version(target), gate.rows(target)
    assert len(rows) == 3

    gate.land(name, regional_rows(region="E", bad=True), "csv")
    run = gate.run(name)
    assert run.decision["outcome"] in ("quarantined", "rejected"), run.decision
    with gate_home():
        assert gate.version(target) == version
        assert sorted(map(str, gate.rows(target))) == sorted(map(str, rows))
        assert len(gate.rows(f"lakehouse/{name}_quarantine")) == 3

    assert len(api.submitted) == 4  # stage+validate then publish / quarantine: one run each
    assert {run["compute"] for run in api.runs.values()} == {compute}
    assert len(wheel_uploads(api)) == 1 and len(api.installed) == 4
    first = api.submitted[0]
    assert first["run_name"].startswith(f"contract-gate {name} stage+validate")
    parameters = first["tasks"][0]["python_wheel_task"]["parameters"]
    assert parameters[0] == "stage+validate+batch_keys"
    assert any(p.startswith(f"{VOLUME}/runs/{name}/") and p.endswith("plan.json") for p in parameters)
    assert list(api.local(f"{VOLUME}/runs/{name}").iterdir()) == []  # each run's folder deleted once downloaded
    assert not any("dbfs" in json.dumps(body).lower() for body in api.submitted)


@pytest.mark.slow
@pytest.mark.parametrize("compute", ["existing cluster", "job cluster"])
def test_a_gate_on_a_cluster_publishes_a_valid_batch_and_quarantines_a_bad_one(gate, gates, tmp_path, monkeypatch,
                                                                               compute):
    name = gates(f"regional_dbx_{compute.split()[0]}")
    settings = {"existing_cluster_id": "all-purpose-1"} if compute == "existing cluster" else {"new_cluster": JOB_CLUSTER}
    with JobsApiEmulator(tmp_path / "workspace", gate.home) as api:
        api.volumes.add(VOLUME)
        api.clusters.add("all-purpose-1")
        # deferring on the run's trigger (dag.test() runs it in line); serverless below polls in the worker
        monkeypatch.setenv(CONNECTION, api.connection(volume=VOLUME, polling_period_seconds=1, deferrable=True,
                                                      **settings))
        publish_then_quarantine(gate, name, api, compute)


@pytest.mark.slow
def test_a_serverless_gate_publishes_a_valid_batch_and_quarantines_a_bad_one(gate, gates, tmp_path, monkeypatch,
                                                                             spark_connect_server):
    """Serverless runs the Spark side as a Spark Connect client, the path of the spark_connect mode."""
    name = gates("regional_dbx_serverless")
    with JobsApiEmulator(tmp_path / "workspace", gate.home, connect_url=spark_connect_server.url) as api:
        api.volumes.add(VOLUME)
        monkeypatch.setenv(CONNECTION, api.connection(volume=VOLUME, polling_period_seconds=1))
        publish_then_quarantine(gate, name, api, "serverless")
    assert all("environments" in body and "libraries" not in body["tasks"][0] for body in api.submitted)


def test_the_connection_kinds_the_databricks_provider_reads_become_the_sdks_authentication():
    from airflow.models.connection import Connection

    from contract_gate.hooks.databricks import config_settings

    def settings(**fields):
        return config_settings(Connection(conn_id="c", conn_type="databricks", **fields))

    host = "https://adb-1.azuredatabricks.net"
    assert settings(host=host, password="dapi-1") == {"host": host, "token": "dapi-1", "auth_type": "pat"}
    assert settings(host="dbc-1.cloud.databricks.com", extra=json.dumps({"token": "dapi-2"}))["host"] == (
        "https://dbc-1.cloud.databricks.com")
    assert settings(host=host, login="app-id", password="secret", extra=json.dumps({"service_principal_oauth": True})) == {
        "host": host, "client_id": "app-id", "client_secret": "secret", "auth_type": "oauth-m2m"}
    assert settings(host=host, login="app-id", password="secret", extra=json.dumps({"azure_tenant_id": "t-1"})) == {
        "host": host, "azure_client_id": "app-id", "azure_client_secret": "secret", "azure_tenant_id": "t-1",
        "auth_type": "azure-client-secret"}
    assert settings(host=host, extra=json.dumps({"use_azure_managed_identity": True}))["auth_type"] == "azure-msi"
    with pytest.raises(ValueError, match="personal access token"):
        settings(host=host, login="user", password="basic-auth-is-gone")


def test_statement_results_come_back_typed_by_their_schema():
    """The Statement Execution API sends every JSON_ARRAY value as text; the decision log and
    DESCRIBE HISTORY read them as the column types say."""
    import datetime as dt
    from decimal import Decimal

    from databricks.sdk.service.sql import ColumnInfoTypeName as Type

    from contract_gate.hooks.databricks import typed

    assert typed("42", Type.LONG) == 42 and typed("true", Type.BOOLEAN) is True and typed(None, Type.LONG) is None
    assert typed("2024-03-01T09:00:00.123Z", Type.TIMESTAMP) == dt.datetime(2024, 3, 1, 9, 0, 0, 123000, tzinfo=dt.timezone.utc)
    assert typed("2024-03-01", Type.DATE) == dt.date(2024, 3, 1) and typed("1.50", Type.DECIMAL) == Decimal("1.50")
    assert typed('{"numOutputRows":"3"}', Type.MAP) == {"numOutputRows": "3"} and typed('["r1"]', Type.ARRAY) == ["r1"]
    assert typed("s-1", Type.STRING) == "s-1"
