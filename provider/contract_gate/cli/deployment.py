"""A long-lived Airflow on this machine without Docker: the compose stack's components
(api-server, scheduler, dag-processor, triggerer; LocalExecutor) as processes, with the gate's
settings in one environment file that every component, and a service manager, reads.

Everything lives under ``AIRFLOW_HOME``: ``contract-gate.env`` (the settings, written once by
``up`` and read back by every later command; ``KEY=value`` lines, a systemd ``EnvironmentFile``),
``contract-gate-run/<component>.pid`` and ``.log``. Each component runs in a process group of its
own, so ``down`` (SIGTERM to the group, as a service manager stops a unit) stops it with the task
processes it started; an ``up`` after one component stopped starts that one again. ``units`` writes
the same components as systemd units (:func:`units`): the same commands, settings file, working
directory and stop, from the one list of commands ``up`` runs (:func:`component_command`).

The gate's home (``[contract_gate] home``), its contracts folder and the DAG folder are absolute
paths resolved once, when the file is first written: no component depends on its working directory,
nor on a ``CONTRACT_GATE_HOME`` left in the environment of whoever runs ``up``.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from contract_gate import config
from contract_gate.cli.options import callers_environment
from contract_gate.dags.stub_files import sync_dag_files
from contract_gate.local_spark.connect_server import LocalConnectServer, free_port, listening
from contract_gate_plan.addresses import HOME_ENV

COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")
CONNECT = "spark-connect"
CONNECT_CONNECTION = "AIRFLOW_CONN_SPARK_CONNECT_DEFAULT"  # set when the deployment runs its own Spark Connect server
SETTINGS_FILE = "contract-gate.env"
HOME_OPTION = config.environment_variable("home")  # the gate's home, in every component's environment
RUN_FOLDER = "contract-gate-run"
GUARD_FILE = "contract_gates.py"
STOP_SECONDS = 60
# Components that serve logs listen on a port of their own; --skip-serve-logs is not wanted (task
# logs are read from the api-server), so each gets a free port instead of Airflow's fixed one.
LOG_PORTS = ("AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT", "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT")


@dataclass(frozen=True)
class Options:
    """What ``up`` is told the first time (later runs read the settings file)."""

    airflow_home: Path
    db_url: str | None = None
    dags: Path | None = None
    contracts: Path | None = None
    gate_home: Path | None = None
    port: int = 8080
    spark_connect: bool = False
    paused: bool = False


def parallelism(spark_connect: bool, cores: int | None = None) -> int:
    """Task slots for this machine: a ``local`` task runs a Spark JVM of its own (one per core);
    over a Connect server a task is a thin client waiting on the server (four per core)."""
    cores = cores or os.cpu_count() or 1
    return max(2, cores * (4 if spark_connect else 1))


WORKER_PRELOAD = "airflow.executors.local_executor,contract_gate.worker_preload"
"""``[scheduler] mp_forkserver_preload``: LocalExecutor's workers, and every task forked from them,
start with a gate task's modules loaded (``contract_gate.worker_preload``). ``up`` sets
``[scheduler] mp_start_method = forkserver`` beside it."""


def first_settings(options: Options) -> dict[str, str]:
    """The settings file's content for a new deployment."""
    home = options.airflow_home.resolve()
    port = options.port
    settings = {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": options.db_url or f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__DAGS_FOLDER": str((options.dags or home / "dags").resolve()),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": str(parallelism(options.spark_connect)),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
        "AIRFLOW__API__SECRET_KEY": secrets.token_urlsafe(32),
        # a new contract's DAG file is found within seconds, not Airflow's default five minutes
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "10",
        # a task whose process died with its worker is failed (and retried) within a minute
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "60",
        # a gate's next task starts a quarter second after the last one ends, not up to a second
        "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.25",
        # tasks start with their modules loaded (``WORKER_PRELOAD``)
        "AIRFLOW__SCHEDULER__MP_START_METHOD": "forkserver",
        "AIRFLOW__SCHEDULER__MP_FORKSERVER_PRELOAD": WORKER_PRELOAD,
        HOME_OPTION: str((options.gate_home or home).resolve()),
        config.environment_variable("contracts_dir"): str((options.contracts or home / "contracts").resolve()),
        config.environment_variable("dags_paused_at_creation"): "true" if options.paused else "false",
        **{name: str(free_port()) for name in LOG_PORTS},
    }
    if options.spark_connect:
        settings[config.environment_variable("execution_mode")] = "spark_connect"
        settings[CONNECT_CONNECTION] = json.dumps(
            {"conn_type": "spark_connect", "host": "127.0.0.1", "port": free_port()}, separators=(",", ":"))
    return settings


def component_command(component: str, bin_dir: Path) -> list[str]:
    """The command line of an Airflow component (``up`` runs it, a unit's ``ExecStart`` names it)."""
    return [str(bin_dir / "airflow"), component]


def migrate_command(bin_dir: Path) -> list[str]:
    """The metadata database's migration, before the scheduler starts."""
    return [str(bin_dir / "airflow"), "db", "migrate"]


def sync_command(bin_dir: Path, settings: dict[str, str]) -> list[str]:
    """One DAG file per contract, written before the scheduler starts (``up`` calls the command's
    function, ``sync_dag_files``, in its own process)."""
    return [str(bin_dir / "contract-gate"), "dags", "sync", "--dags", settings["AIRFLOW__CORE__DAGS_FOLDER"],
            "--contracts", settings[config.environment_variable("contracts_dir")]]


def gate_home(settings: dict[str, str]) -> str:
    """The deployment's gate home (a settings file written before ``[contract_gate] home`` existed names
    it ``CONTRACT_GATE_HOME``)."""
    return settings.get(HOME_OPTION) or settings[HOME_ENV]


def connect_port(settings: dict[str, str]) -> int | None:
    """The port of the deployment's own Spark Connect server, or None when it runs none."""
    connection = settings.get(CONNECT_CONNECTION)
    return int(json.loads(connection)["port"]) if connection else None


class Deployment:
    """The deployment whose settings file is in ``airflow_home``."""

    def __init__(self, airflow_home: Path) -> None:
        self.home = airflow_home.resolve()
        self.settings_file = self.home / SETTINGS_FILE
        self.run = self.home / RUN_FOLDER

    # -- settings -----------------------------------------------------------------------
    def settings(self) -> dict[str, str]:
        if not self.settings_file.is_file():
            raise FileNotFoundError(f"{self.settings_file} does not exist: run `contract-gate airflow up` first")
        lines = self.settings_file.read_text(encoding="utf-8").splitlines()
        return dict(line.split("=", 1) for line in lines if line and not line.startswith("#") and "=" in line)

    def write_settings(self, settings: dict[str, str]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        text = "# contract-gate airflow up: every component's settings (a systemd EnvironmentFile)\n" + \
            "".join(f"{key}={value}\n" for key, value in settings.items())
        temporary = self.settings_file.with_suffix(".tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.chmod(0o600)  # it holds the api-server's signing secrets
        temporary.replace(self.settings_file)

    def environment(self) -> dict[str, str]:
        # the settings name the gate's home: a CONTRACT_GATE_HOME of the caller's shell would win over it
        env = {**{name: value for name, value in callers_environment().items() if name != HOME_ENV},
               **self.settings()}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        return env

    # -- processes ----------------------------------------------------------------------
    def pid(self, component: str) -> int | None:
        """The component's process id while it runs (a stale pid file names no process).

        A process is known by its pid and its start time, both recorded when it started: a reused
        pid has another start time. Its command line is no witness: a process that sets its title
        (setproctitle) rewrites it, and a read meanwhile finds it empty."""
        pid_file = self.run / f"{component}.pid"
        if not pid_file.is_file():
            return None
        pid, *started = pid_file.read_text().split()
        running_since = _running_since(int(pid))
        return int(pid) if running_since is not None and started == [running_since] else None

    def record(self, component: str, pid: int) -> None:
        """Write the component's pid file: its pid and its start time."""
        (self.run / f"{component}.pid").write_text(f"{pid} {_running_since(pid) or ''}\n")

    def start(self, component: str, command: list[str], env: dict[str, str]) -> int:
        self.run.mkdir(parents=True, exist_ok=True)
        with (self.run / f"{component}.log").open("ab") as log:
            process = subprocess.Popen(command, env=env, cwd=self.home, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        self.record(component, process.pid)
        return process.pid

    def stop(self, component: str) -> bool:
        """SIGTERM to the component's process group, SIGKILL after ``STOP_SECONDS``; whether it ran."""
        pid = self.pid(component)
        if pid is None:
            return False
        os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        while self.pid(component) is not None:  # None once it exited, reaped or not
            if time.monotonic() > deadline:
                os.killpg(pid, signal.SIGKILL)
                break
            time.sleep(0.2)  # polling the process: a condition, not a fixed wait
        (self.run / f"{component}.pid").unlink(missing_ok=True)
        return True

    def status(self) -> dict[str, int | None]:
        names = (*COMPONENTS, CONNECT) if connect_port(self.settings()) else COMPONENTS
        return {name: self.pid(name) for name in names}

    def health(self) -> dict | None:
        """The api-server's health document (metadatabase, scheduler, triggerer, dag_processor), or None."""
        port = self.settings()["AIRFLOW__API__PORT"]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/monitor/health", timeout=5) as answer:
                return json.load(answer)
        except (urllib.error.URLError, OSError, ValueError):
            return None


def up(options: Options, timeout: float = 300, say=print) -> Deployment:
    """Start what is not running yet; return once the api-server reports every component healthy."""
    deployment = Deployment(options.airflow_home)
    if not deployment.settings_file.is_file():
        deployment.write_settings(first_settings(options))
        say(f"wrote {deployment.settings_file}")
    settings = deployment.settings()
    env = deployment.environment()
    for folder in (settings["AIRFLOW__CORE__DAGS_FOLDER"], gate_home(settings),
                   settings[config.environment_variable("contracts_dir")]):
        Path(folder).mkdir(parents=True, exist_ok=True)
    dags = Path(settings["AIRFLOW__CORE__DAGS_FOLDER"])
    stubs = sync_dag_files(dags / GUARD_FILE, Path(settings[config.environment_variable("contracts_dir")]))
    say(f"{len(stubs)} contract DAG file(s) in {dags}")
    bin_dir = Path(sys.executable).parent
    if deployment.pid("scheduler") is None:  # the schema is the scheduler's to migrate, before it starts
        migrate = subprocess.run(migrate_command(bin_dir), env=env, cwd=deployment.home, capture_output=True,
                                 text=True)
        if migrate.returncode != 0:
            raise RuntimeError(f"airflow db migrate failed:\n{migrate.stderr[-3000:]}")
    port = connect_port(settings)
    if port and deployment.pid(CONNECT) is None:
        server = LocalConnectServer(deployment.run / CONNECT, port=port)
        server.launch()
        assert server.process is not None  # launch() started it
        deployment.record(CONNECT, server.process.pid)
        say(f"started {CONNECT} (pid {server.process.pid}) on {server.url}")
    for component in COMPONENTS:
        if deployment.pid(component) is None:
            pid = deployment.start(component, component_command(component, bin_dir), env)
            say(f"started {component} (pid {pid})")
    wait_healthy(deployment, timeout)
    say(f"Airflow is up: http://127.0.0.1:{settings['AIRFLOW__API__PORT']}/ (settings: {deployment.settings_file})")
    return deployment


def units(settings: dict[str, str], bin_dir: Path, user: str) -> dict[str, str]:
    """A deployment's settings as systemd units, ``{file name: text}``: one per component ``up``
    starts, with ``up``'s commands, settings file and working directory, and ``down``'s stop
    (SIGTERM to the whole group, SIGKILL after ``STOP_SECONDS``). The scheduler's unit migrates
    the database and syncs the DAG files first, as ``up`` does before it starts the scheduler."""
    home = Path(settings["AIRFLOW_HOME"])
    settings_file = home / SETTINGS_FILE
    database = "postgresql.service" if settings["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("postgres") else ""
    written = {}
    port = connect_port(settings)
    if port:
        server = LocalConnectServer(home / RUN_FOLDER / CONNECT, port=port)
        environment = {key: server.environment()[key] for key in ("SPARK_HOME", "PYSPARK_PYTHON")}
        private_scratch = ["mkdir", "-p", "-m", "700", str(server.scratch)]  # as LocalConnectServer.launch makes it
        written[f"gate-{CONNECT}.service"] = _unit(f"Spark Connect server of {home}", "network-online.target", user,
                                                  settings_file, server.folder, [private_scratch], server.command(),
                                                  environment)
    after = " ".join(filter(None, ("network-online.target", database, f"gate-{CONNECT}.service" if port else "")))
    for component in COMPONENTS:
        before = [migrate_command(bin_dir), sync_command(bin_dir, settings)] if component == "scheduler" else []
        written[f"gate-{component}.service"] = _unit(
            f"Airflow {component} of {home}", after, user, settings_file, home, before,
            component_command(component, bin_dir), {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"})
    return written


def _unit(description: str, after: str, user: str, settings_file: Path, folder: Path, before: list[list[str]],
          command: list[str], environment: dict[str, str]) -> str:
    def line(argv: list[str]) -> str:
        return shlex.join(argv).replace("%", "%%")  # systemd reads % as a specifier

    lines = ["[Unit]", f"Description=contract-gate: {description}", f"After={after}", "", "[Service]",
             f"User={user}", f"EnvironmentFile={settings_file}",
             *(f"Environment={shlex.quote(f'{key}={value}')}" for key, value in environment.items()),
             f"WorkingDirectory={folder}", *(f"ExecStartPre={line(step)}" for step in before),
             f"ExecStart={line(command)}", "KillMode=control-group", f"TimeoutStopSec={STOP_SECONDS}",
             "Restart=always", "", "[Install]", "WantedBy=multi-user.target", ""]
    return "\n".join(lines)


def wait_healthy(deployment: Deployment, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    settings = deployment.settings()
    while True:
        stopped = [name for name, pid in deployment.status().items() if pid is None]
        if stopped:
            logs = deployment.run / f"{stopped[0]}.log"
            raise RuntimeError(f"{', '.join(stopped)} exited; see {logs}:\n"
                               f"{logs.read_text(errors='replace')[-3000:] if logs.is_file() else ''}")
        health = deployment.health()
        port = connect_port(settings)
        connect_ready = port is None or listening(port)
        if health is not None and connect_ready and all(
                (health.get(part) or {}).get("status") == "healthy"
                for part in ("metadatabase", "scheduler", "triggerer", "dag_processor")):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the deployment was not healthy within {timeout:.0f} s: {health}; "
                               f"logs in {deployment.run}")
        time.sleep(0.5)  # polling the health endpoint: a condition, not a fixed wait


def down(airflow_home: Path, say=print) -> None:
    """Stop every component (the schedulers first, so no new task starts), then the Connect server."""
    deployment = Deployment(airflow_home)
    for component in ("scheduler", "triggerer", "dag-processor", "api-server", CONNECT):
        if deployment.stop(component):
            say(f"stopped {component}")


def _running_since(pid: int) -> str | None:
    """The process's start time (field 22 of proc(5)'s ``stat``, in clock ticks since boot) while
    it runs; None once it exited, also while it is a zombie that its parent (``up``) has not reaped."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # after the command name
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]
