"""Time budgets and killed tasks over Spark Connect, checked through the server's own view (the
Spark UI's REST API of the Connect server), not the client's: a contract query that would run
for hours (``tests/budget_contracts.py``) is stopped by ``limits.querySeconds: 5`` within its
budget plus 10 s, by Airflow's ``execution_timeout`` killing the validate task, and by a SIGTERM
of the task (Airflow's stop); either way the decision is ``failed``, not final, nothing is
published or quarantined, and the server runs no job 10 s later. A client killed with SIGKILL
in the middle of the query (a worker lost to the OOM killer) leaves no job of its submission
running on the server 15 s later (the job's fence ends its sessions: the server would not).

The gates run in an Airflow process of their own (``_budget_dag_run.py``), against a server of
this module's own with its UI on (the suite's shared server keeps it off).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from _client_process import CLIENT
from budget_contracts import RULE_ID
from connect_server import ConnectServer
from waiting import wait_until

from contract_gate.local_spark.connect_server import free_port
from contract_gate_spark.runtime.job_start import CONNECT_CLIENT_ENV

RUN = Path(__file__).with_name("_budget_dag_run.py")


@pytest.fixture(scope="module")
def server_with_ui(tmp_path_factory):
    ui_port = free_port()
    server = ConnectServer(tmp_path_factory.mktemp("budget-connect"),
                           {"spark.ui.enabled": "true", "spark.ui.port": str(ui_port), "spark.port.maxRetries": "0"})
    server.start()
    server.ui = f"http://127.0.0.1:{ui_port}/api/v1"
    yield server
    server.stop()


def status(server, path: str):
    with urllib.request.urlopen(f"{server.ui}{path}", timeout=10) as response:
        return json.load(response)


def application(server, path: str):
    (app,) = status(server, "/applications")
    return status(server, f"/applications/{app['id']}{path}")


def jobs(server, query: str = "") -> list[dict]:
    return application(server, f"/jobs{query}")


def submission_jobs(server, submission_id: str) -> list[dict]:
    """The server's jobs run for the submission: tagged with its tag (``GateJob.tag``)."""
    tag = f"contract-gate-{submission_id}"
    return [job for job in jobs(server) if any(t.endswith(tag) for t in job.get("jobTags", []))]


def seconds(job: dict) -> float:
    def at(text: str) -> datetime:
        return datetime.strptime(text.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z")

    return (at(job["completionTime"]) - at(job["submissionTime"])).total_seconds()


@pytest.fixture(scope="module")
def runs(server_with_ui, tmp_path_factory):
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AIRFLOW", "CONTRACT_GATE_")) and name not in CONNECT_CLIENT_ENV}
    env.update({"AIRFLOW_CONN_SPARK_CONNECT_DEFAULT": server_with_ui.connection(),
                "CONTRACT_GATE_TEST_SERVER_UI": server_with_ui.ui,
                "CONTRACT_GATE_TEST_WORLD_DIR": str(tmp_path_factory.mktemp("budget-world")),
                "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING"})
    done = subprocess.run([sys.executable, str(RUN)], env=env, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-5000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])["runs"]


def no_running_job(server) -> bool:
    """The server runs no job, and no task: a cancelled job is ``FAILED`` at once, its tasks stop
    at their next look at their input."""
    return jobs(server, "?status=running") == [] and all(
        executor["activeTasks"] == 0 for executor in application(server, "/executors"))


@pytest.mark.slow
def test_a_query_past_its_budget_is_stopped_on_the_server(server_with_ui, runs):
    run = runs["stopped"]
    assert run["first"] == "published"
    assert run["states"]["stage_validate"] == "failed" and run["states"]["publish"] != "success"
    assert run["stopped"] == {"reason": "time budget exceeded", "running": f"rule {RULE_ID!r}", "seconds": 5,
                              "setting": "limits.querySeconds"}
    assert run["decisions"] == [{"outcome": "failed", "reason": f"time budget exceeded: rule {RULE_ID!r} was still "
                                                               "running after 5 s (limits.querySeconds)"}]
    assert run["version_after"] == run["version_before"] and run["rows_after"] == 3  # nothing published
    wait_until(lambda: no_running_job(server_with_ui), timeout=10, interval=0.5, message="no job running on the server")
    # the server's own record of the query's jobs: cancelled within the budget plus 10 s
    cancelled = [job for job in submission_jobs(server_with_ui, run["submission_id"]) if job["status"] == "FAILED"]
    assert cancelled and max(map(seconds, cancelled)) <= 5 + 10


@pytest.mark.slow
def test_a_killed_validate_task_leaves_no_job_on_the_server(server_with_ui, runs):
    run = runs["killed"]
    assert run["states"]["stage_validate"] == "failed" and run["stopped"] is None
    assert [d["outcome"] for d in run["decisions"]] == ["failed"]
    assert run["version_after"] == run["version_before"] and run["rows_after"] == 3
    wait_until(lambda: no_running_job(server_with_ui), timeout=10, interval=0.5, message="no job running on the server")
    tagged = submission_jobs(server_with_ui, run["submission_id"])
    assert tagged and all(job["status"] != "RUNNING" for job in tagged)


@pytest.mark.slow
def test_a_task_stopped_with_sigterm_at_a_sql_rule_fails_without_a_verdict(server_with_ui, runs):
    run = runs["terminated"]
    assert run["states"]["stage_validate"] == "failed"
    assert run["states"]["publish"] != "success" and run["states"]["quarantine"] != "success"
    stopped = run["stopped"]
    assert stopped["reason"] == "stopped by a kill or cancel" and stopped["running"] == f"rule {RULE_ID!r}"
    (decision,) = run["decisions"]
    assert decision["outcome"] == "failed" and decision["reason"].startswith(f"stopped by a kill or cancel: rule {RULE_ID!r}")
    assert run["quarantined"] == 0  # never judged, so never quarantined
    assert run["version_after"] == run["version_before"] and run["rows_after"] == 3
    wait_until(lambda: no_running_job(server_with_ui), timeout=10, interval=0.5, message="no job running on the server")


def query_jobs_running(server, submission_id: str) -> set[int]:
    """The server's running jobs of the submission's contract query: under the validation's budget and the query's own."""
    return {job["jobId"] for job in submission_jobs(server, submission_id)
            if job["status"] == "RUNNING" and sum("contract-gate-budget-" in tag for tag in job.get("jobTags", [])) >= 2}


@pytest.mark.slow
def test_a_client_killed_with_sigkill_leaves_no_job_on_the_server(server_with_ui, runs, tmp_path):
    """After the DAG runs (the module's server is then idle): a client process runs the slow
    validation through the ``spark_connect`` runner and is killed with SIGKILL while its query
    runs; the server's own status shows no running job of the submission within 15 s. The server
    itself never notices (its query would run for many minutes): the job's fence
    (``contract_gate.runners.connect_fence``) ends the dead client's sessions. The delay is printed
    (``-s``); the decision is recorded only after Airflow's task heartbeat timeout, 300 s by
    default, has declared the killed task failed."""
    with (tmp_path / "client.log").open("w") as log:
        client = subprocess.Popen([sys.executable, str(CLIENT), "slow", server_with_ui.url, str(tmp_path)],
                                  cwd=tmp_path, stdout=log, stderr=log)
        try:
            # The query runs as several jobs: short ones (its scan, its broadcast) and then the one of
            # minutes. A kill between two short ones would let the test see "no job" before the next
            # starts, so the kill waits for a query job still running 3 s after it was first seen.
            first_seen: dict[int, float] = {}

            def query_running() -> bool:
                if client.poll() is not None:
                    raise AssertionError(f"the client ended first: {(tmp_path / 'client.log').read_text()[-3000:]}")
                try:
                    running = query_jobs_running(server_with_ui, "slow-killed")
                except OSError:  # a UI too busy to answer (staging on two cores) has not said so yet
                    return False
                now = time.monotonic()
                return any(now - first_seen.setdefault(job, now) >= 3 for job in running)

            wait_until(query_running, timeout=600, interval=0.5, message="the client's query running on the server")
        finally:
            client.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            client.wait()
    wait_until(lambda: not [job for job in submission_jobs(server_with_ui, "slow-killed") if job["status"] == "RUNNING"],
               timeout=15, interval=0.5, message="no job of the killed client's submission running on the server")
    print(f"SIGKILL of the client to no job of its submission on the server: {time.monotonic() - killed:.1f} s "
          f"(load {os.getloadavg()[0]:.1f})")
    assert jobs(server_with_ui, "?status=running") == []
