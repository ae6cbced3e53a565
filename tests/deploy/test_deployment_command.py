"""``contract-gate airflow up`` without starting it: it runs the compose stack's Airflow components,
the settings it writes make no component depend on its working directory, and the systemd units
``contract-gate airflow units`` writes (and docs/deployment.md shows) run what ``up`` runs."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from contract_gate.cli.deployment import (COMPONENTS, STOP_SECONDS, WORKER_PRELOAD, Deployment, Options,
                                         component_command,
                                         first_settings, gate_home, parallelism, units)

REPO = Path(__file__).resolve().parents[2]
# what a gate task loads on start (contract_gate.worker_preload), and over Spark Connect also
TASK_MODULES = ("airflow.sdk.execution_time.task_runner", "airflow.dag_processing.dagbag", "contract_gate.dags.contract_dags")
CONNECT_MODULES = ("pyspark.sql.connect.session", "contract_gate.runners.spark_connect",
                   "contract_gate_spark.commands.gate_job")


def test_the_command_starts_the_compose_stacks_airflow_components():
    services = yaml.safe_load((REPO / "docker-compose.yaml").read_text())["services"]
    compose = {service["command"] for name, service in services.items()
               if name.startswith("airflow-") and isinstance(service.get("command"), str)}
    assert compose == set(COMPONENTS)


WORKER_PROBE = """
import json, multiprocessing, sys
from airflow.utils.process_utils import set_component_mp_start_method
set_component_mp_start_method("scheduler")  # what `airflow scheduler` does before its executor starts
def loaded(queue):
    from airflow.sdk.listener import get_listener_manager
    queue.put({"modules": {name: name in sys.modules for name in sys.argv[1].split(",")},
               "listeners_loaded": get_listener_manager.cache_info().currsize == 1})
if __name__ == "__main__":
    queue = multiprocessing.SimpleQueue()
    worker = multiprocessing.Process(target=loaded, args=(queue,))  # as LocalExecutor starts a worker
    worker.start()
    print(json.dumps({"method": multiprocessing.get_start_method(), **queue.get()}))
    worker.join()
"""


def _worker_loaded(tmp_path: Path, spark_connect: bool) -> dict:
    settings = first_settings(Options(tmp_path / "home", spark_connect=spark_connect))
    env = {name: value for name, value in os.environ.items() if not name.startswith("AIRFLOW__CONTRACT_GATE__")}
    env.update({"AIRFLOW_HOME": str(tmp_path / "home"),
                **{k: v for k, v in settings.items() if k.startswith(("AIRFLOW__SCHEDULER__MP_",
                                                                       "AIRFLOW__CONTRACT_GATE__EXECUTION"))}})
    tmp_path.mkdir()
    probe = tmp_path / "probe.py"
    probe.write_text(WORKER_PROBE)
    modules = ",".join((*TASK_MODULES, *CONNECT_MODULES))
    done = subprocess.run([sys.executable, str(probe), modules], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_executors_workers_start_with_a_gate_tasks_modules_loaded(tmp_path):
    """A task process is forked from a LocalExecutor worker: the worker (forked from the
    forkserver ``up`` configures) already holds the task runner, Airflow's plugins and listeners,
    the gate's DAG code and, over Spark Connect, the Connect client, which each task loaded
    otherwise (about 3 s of CPU)."""
    found = _worker_loaded(tmp_path / "connect", spark_connect=True)
    assert found["method"] == "forkserver" and found["listeners_loaded"]
    assert found["modules"] == {name: True for name in (*TASK_MODULES, *CONNECT_MODULES)}
    # in local mode the task process runs no Spark itself: the Connect client is not loaded
    found = _worker_loaded(tmp_path / "local", spark_connect=False)
    assert found["modules"] == {**{name: True for name in TASK_MODULES}, **{name: False for name in CONNECT_MODULES}}
    # the compose stack's scheduler is configured the same way
    compose = yaml.safe_load((REPO / "docker-compose.yaml").read_text())["x-airflow-common"]["environment"]
    assert {k: compose[k] for k in ("AIRFLOW__SCHEDULER__MP_START_METHOD", "AIRFLOW__SCHEDULER__MP_FORKSERVER_PRELOAD")} == {
        "AIRFLOW__SCHEDULER__MP_START_METHOD": "forkserver", "AIRFLOW__SCHEDULER__MP_FORKSERVER_PRELOAD": WORKER_PRELOAD}


def test_the_first_settings_are_absolute_and_sized_to_the_machine(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = first_settings(Options(Path("home"), spark_connect=True, port=18123))
    for name in ("AIRFLOW_HOME", "AIRFLOW__CORE__DAGS_FOLDER", "AIRFLOW__CONTRACT_GATE__HOME",
                 "AIRFLOW__CONTRACT_GATE__CONTRACTS_DIR"):
        assert Path(settings[name]).is_absolute() and Path(settings[name]).is_relative_to(tmp_path / "home"), name
    assert "CONTRACT_GATE_HOME" not in settings  # the gate's home is [contract_gate] home
    assert settings["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert settings["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == f"sqlite:///{tmp_path / 'home' / 'airflow.db'}"
    assert settings["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:18123/execution/"
    assert settings["AIRFLOW__CONTRACT_GATE__EXECUTION_MODE"] == "spark_connect"
    assert settings["AIRFLOW__CONTRACT_GATE__DAGS_PAUSED_AT_CREATION"] == "false"
    assert settings["AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL"] == "10"
    assert settings["AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME"] == "0.25"  # the gaps between a gate's tasks
    assert int(settings["AIRFLOW__CORE__PARALLELISM"]) == parallelism(True)
    assert parallelism(False, cores=2) == 2 and parallelism(True, cores=2) == 8


def test_every_component_gets_the_settings_home_not_the_callers(tmp_path, monkeypatch):
    deployment = Deployment(tmp_path / "home")
    deployment.write_settings(first_settings(Options(tmp_path / "home", gate_home=tmp_path / "lake")))
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path / "the callers shell"))  # it would win over the option
    env = deployment.environment()
    assert "CONTRACT_GATE_HOME" not in env and env["AIRFLOW__CONTRACT_GATE__HOME"] == str(tmp_path / "lake")
    # a settings file written before the option existed still names the home
    assert gate_home({"CONTRACT_GATE_HOME": "/srv/old"}) == "/srv/old"


def test_a_component_is_known_by_its_pid_and_start_time_not_its_command_line(tmp_path):
    """``up`` once took a starting triggerer for an exited one: a process that sets its title
    (Airflow's components do, through setproctitle) may show an empty command line meanwhile."""
    deployment = Deployment(tmp_path / "home")
    retitled = subprocess.Popen([sys.executable, "-c", "import setproctitle, sys; "
                                 "setproctitle.setproctitle('no component name'); print('ready', flush=True); "
                                 "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert retitled.stdout.readline() == "ready\n"
        deployment.run.mkdir(parents=True)
        deployment.record("triggerer", retitled.pid)
        assert b"triggerer" not in Path(f"/proc/{retitled.pid}/cmdline").read_bytes()
        assert deployment.pid("triggerer") == retitled.pid
        # the same pid with another start time is some later process that reused it
        pid, started = (deployment.run / "triggerer.pid").read_text().split()
        (deployment.run / "triggerer.pid").write_text(f"{pid} {int(started) - 1}\n")
        assert deployment.pid("triggerer") is None
        deployment.record("triggerer", retitled.pid)
    finally:
        retitled.communicate("")
    assert deployment.pid("triggerer") is None  # ended and reaped


def test_the_components_log_at_the_callers_level_not_the_commands_quiet_one(tmp_path, monkeypatch):
    """The CLI quiets Airflow for itself (WARNING, without ``--verbose``); ``up``'s components once
    inherited that, and every task log lost its INFO lines."""
    from contract_gate.cli.options import configured_logging

    deployment = Deployment(tmp_path / "home")
    deployment.write_settings(first_settings(Options(tmp_path / "home")))
    monkeypatch.delenv("AIRFLOW__LOGGING__LOGGING_LEVEL", raising=False)
    with configured_logging(verbose=False):
        assert os.environ["AIRFLOW__LOGGING__LOGGING_LEVEL"] == "WARNING"  # the command itself is quiet
        assert "AIRFLOW__LOGGING__LOGGING_LEVEL" not in deployment.environment()
    monkeypatch.setenv("AIRFLOW__LOGGING__LOGGING_LEVEL", "DEBUG")  # a level the caller chose is kept
    with configured_logging(verbose=False):
        assert deployment.environment()["AIRFLOW__LOGGING__LOGGING_LEVEL"] == "DEBUG"


def unit_lines(text: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in text.splitlines() if line.startswith(f"{key}=")]


def test_the_units_run_the_commands_up_runs_with_its_settings_and_stop(tmp_path):
    bin_dir = Path("/opt/venv/bin")
    settings = first_settings(Options(tmp_path / "home", spark_connect=True))
    written = units(settings, bin_dir, "gates")
    assert set(written) == {f"gate-{c}.service" for c in (*COMPONENTS, "spark-connect")}
    for component in COMPONENTS:
        unit = written[f"gate-{component}.service"]
        assert shlex.split(unit_lines(unit, "ExecStart")[0]) == component_command(component, bin_dir)
        assert unit_lines(unit, "EnvironmentFile") == [str(tmp_path / "home" / "contract-gate.env")]
        assert unit_lines(unit, "WorkingDirectory") == [str(tmp_path / "home")]  # up's cwd
        assert unit_lines(unit, "KillMode") == ["control-group"]  # down stops the process group
        assert unit_lines(unit, "TimeoutStopSec") == [str(STOP_SECONDS)]
        assert "gate-spark-connect.service" in unit_lines(unit, "After")[0]
    connect = written["gate-spark-connect.service"]
    command = shlex.split(unit_lines(connect, "ExecStart")[0])
    assert "org.apache.spark.sql.connect.service.SparkConnectServer" in command
    port = re.search(r'"port":(\d+)', settings["AIRFLOW_CONN_SPARK_CONNECT_DEFAULT"]).group(1)
    assert f"spark.connect.grpc.binding.port={port}" in command  # the server the gates' connection names
    # Spark's shuffle files (rows) in a folder the unit makes owner-only before the server starts
    scratch = tmp_path / "home" / "contract-gate-run" / "spark-connect" / "spark-local"
    assert f"spark.local.dir={scratch}" in command and f"spark.hadoop.hadoop.tmp.dir={scratch}" in command
    (java_options,) = [part for part in command if part.startswith("spark.driver.extraJavaOptions=")]
    assert f"-Djava.io.tmpdir={scratch}" in java_options.split()  # the JVM's temporary files (clients' artifacts) too
    assert shlex.split(unit_lines(connect, "ExecStartPre")[0]) == ["mkdir", "-p", "-m", "700", str(scratch)]


def test_the_unit_the_deployment_guide_shows_is_the_generators():
    guide = (REPO / "docs" / "deployment.md").read_text()
    shown = guide.split("## Under a service manager", 1)[1].split("```ini\n", 1)[1].split("```", 1)[0]
    settings = first_settings(Options(Path("/srv/gates"), db_url="postgresql+psycopg2://airflow:x@127.0.0.1/airflow"))
    assert units(settings, Path("/opt/venv/bin"), "airflow")["gate-scheduler.service"] == shown


def test_the_units_command_writes_one_file_per_unit_run_as_the_settings_owner(tmp_path):
    import getpass

    from contract_gate.cli.main import main

    Deployment(tmp_path / "home").write_settings(first_settings(Options(tmp_path / "home")))
    assert main(["airflow", "units", "--airflow-home", str(tmp_path / "home"), "--output", str(tmp_path / "units")]) == 0
    written = sorted(path.name for path in (tmp_path / "units").iterdir())
    assert written == sorted(f"gate-{component}.service" for component in COMPONENTS)  # no Connect server asked for
    assert unit_lines((tmp_path / "units" / "gate-triggerer.service").read_text(), "User") == [getpass.getuser()]
