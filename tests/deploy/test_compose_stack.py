"""The compose stack, checked without a Docker engine: docker-compose.yaml and the Dockerfile are
parsed (PyYAML, plain text) and every service's image, command, ports, volumes, health checks and
dependencies are cross-checked against each other, the tested versions (constraints/), the code the stack runs
(Airflow's own CLI parser and config, the apache-spark provider's hooks, the gate's Spark session
settings) and the "Run it on a cluster" section of docs/execution-modes.md.

`docker compose config` is used where the Docker client has the compose plugin. On the
development and CI machines it has not (`docker compose version` fails), so that one test skips
saying so; everything else runs. The FAB provider's `airflow users create` (in the official
Airflow image, not in this virtualenv) is the one command not checked against its parser.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((REPO / "docker-compose.yaml").read_text())
SERVICES = COMPOSE["services"]
DOCKERFILE = (REPO / "Dockerfile").read_text()
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
CONSTRAINTS = "constraints/constraints-3.11.txt"  # the image's Python is 3.11
CLUSTER_DOC = (REPO / "docs" / "execution-modes.md").read_text()

AIRFLOW_COMMANDS = {"airflow-apiserver": "api-server", "airflow-scheduler": "scheduler",
                    "airflow-dag-processor": "dag-processor", "airflow-triggerer": "triggerer"}
AIRFLOW = [*AIRFLOW_COMMANDS, "airflow-init"]
SPARK = ["spark-master", "spark-worker", "spark-connect"]
LAKEHOUSE = "/opt/lakehouse"


def pin(name: str) -> str:
    """The version of ``name`` the constraints file pins (pyproject.toml holds ranges)."""
    match = re.search(rf"^{re.escape(name)}==([\w.]+)", (REPO / CONSTRAINTS).read_text(), re.M)
    if match is None:
        raise AssertionError(f"{CONSTRAINTS} pins no {name}")
    return match.group(1)


def env(service: str) -> dict:
    return SERVICES[service].get("environment") or {}


def published(service: str) -> dict[int, int]:
    """Host port -> container port of a service (``"host:container"`` entries)."""
    ports = {}
    for entry in SERVICES[service].get("ports", []):
        host, container = str(entry).split(":")
        ports[int(host)] = int(container)
    return ports


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def confs(argv: list[str]) -> dict[str, str]:
    return dict(argv[i + 1].split("=", 1) for i, arg in enumerate(argv) if arg == "--conf")


def dockerfile_args() -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", DOCKERFILE, re.M))


def stage_base(stage: str) -> str:
    """The image a Dockerfile stage starts from, its ``ARG`` default filled in."""
    match = re.search(rf"^FROM (\S+) AS {stage}$", DOCKERFILE, re.M)
    assert match, f"the Dockerfile has no stage {stage!r}"
    return re.sub(r"\$\{(\w+)\}", lambda m: dockerfile_args()[m.group(1)], match.group(1))


def stage_text(stage: str) -> str:
    return DOCKERFILE.split(f" AS {stage}\n", 1)[1].split("\nFROM ", 1)[0]


def interpolated(value: str, **given: str) -> str:
    """``value`` as compose passes it on: ``${NAME:-default}`` is ``given[NAME]``, else the default."""
    return re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: given.get(m.group(1), m.group(2)), value)


def healthcheck_port(service: str) -> int:
    test = " ".join(SERVICES[service]["healthcheck"]["test"])
    match = re.search(r"(?:/dev/tcp/127\.0\.0\.1/|localhost:)(\d+)", test)
    assert match, f"{service}: no port in its health check {test!r}"
    return int(match.group(1))


@pytest.fixture(scope="module")
def airflow_facts(tmp_path_factory) -> dict:
    """What the installed Airflow and apache-spark provider make of the stack's settings, read in
    a child process (Airflow reads its home and database once per process; this suite's own
    Airflow runs elsewhere on SQLite)."""
    connections = {k: v for k, v in env("airflow-scheduler").items() if k.startswith("AIRFLOW_CONN_")}
    # the default spark_default, and the one CONTRACT_GATE_SPARK_DEPLOY_MODE=cluster makes of it
    environment = {name: interpolated(value) for name, value in connections.items()}
    environment["AIRFLOW_CONN_SPARK_CLUSTER"] = interpolated(connections["AIRFLOW_CONN_SPARK_DEFAULT"],
                                                             CONTRACT_GATE_SPARK_DEPLOY_MODE="cluster")
    probe = f"""
import argparse, json, os
os.environ.update({json.dumps(environment)})
from airflow.cli.cli_parser import get_parser
def subcommands(parser):
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)][0].choices
top = subcommands(get_parser())
check = subcommands(top["jobs"])["check"]
job_types = [a.choices for a in check._actions if "--job-type" in a.option_strings][0]
from airflow.configuration import conf
from airflow.api_fastapi.core_api.routes.public import public_router
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook
print(json.dumps({{
    "commands": sorted(top), "db": sorted(subcommands(top["db"])), "job_types": list(job_types),
    "scheduler_health_port": conf.getint("scheduler", "scheduler_health_check_server_port"),
    "api_routes": [route.path for route in public_router.routes],
    "spark_default": SparkSubmitHook(conn_id="spark_default")._connection,
    "spark_cluster": SparkSubmitHook(conn_id="spark_cluster")._connection,
    "spark_connect_url": SparkConnectHook(conn_id="spark_connect_default").get_connection_url(),
}}))
"""
    home = tmp_path_factory.mktemp("airflow-probe")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=home,
                          env={"PATH": "/usr/bin:/bin", "AIRFLOW_HOME": str(home),
                               "AIRFLOW__CORE__LOAD_EXAMPLES": "False"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_stack_is_airflow_3s_official_layout_beside_a_spark_cluster():
    assert set(SERVICES) == {"postgres", *AIRFLOW, *SPARK}
    for service, command in AIRFLOW_COMMANDS.items():
        assert SERVICES[service]["command"] == command
    for service in AIRFLOW:
        settings = env(service)
        assert settings["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
        assert settings["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://airflow-apiserver:8080/execution/"
        # one JWT secret for all, or the api-server rejects the tokens the scheduler issues
        assert settings["AIRFLOW__API_AUTH__JWT_SECRET"] == env("airflow-apiserver")["AIRFLOW__API_AUTH__JWT_SECRET"]


def test_airflow_commands_and_health_checks_exist_in_the_installed_airflow(airflow_facts):
    for command in AIRFLOW_COMMANDS.values():
        assert command in airflow_facts["commands"]
    init = SERVICES["airflow-init"]["command"][-1]
    assert "airflow db migrate" in init and "migrate" in airflow_facts["db"]
    assert "airflow users create --role Admin" in init  # FAB's CLI: see the module docstring
    assert SERVICES["airflow-init"]["restart"] == "no"
    for service, job_type in {"airflow-dag-processor": "DagProcessorJob", "airflow-triggerer": "TriggererJob"}.items():
        test = SERVICES[service]["healthcheck"]["test"]
        assert f"airflow jobs check --job-type {job_type}" in test[1] and job_type in airflow_facts["job_types"]
    assert env("airflow-scheduler")["AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK"] == "true"
    assert SERVICES["airflow-scheduler"]["healthcheck"]["test"][-1] == \
        f"http://localhost:{airflow_facts['scheduler_health_port']}/health"
    api = SERVICES["airflow-apiserver"]["healthcheck"]["test"][-1]
    assert api.startswith(f"http://localhost:{published('airflow-apiserver')[8080]}/")
    assert api.removeprefix("http://localhost:8080") in airflow_facts["api_routes"]


def test_airflow_runs_on_the_postgres_service():
    database = env("postgres")
    url = env("airflow-scheduler")["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    assert url == (f"postgresql+psycopg2://{database['POSTGRES_USER']}:{database['POSTGRES_PASSWORD']}"
                   f"@postgres/{database['POSTGRES_DB']}")
    assert SERVICES["postgres"]["healthcheck"]["test"] == ["CMD", "pg_isready", "-U", database["POSTGRES_USER"]]


def test_image_versions_match_pyproject():
    airflow, pyspark, delta = pin("apache-airflow"), pin("pyspark"), pin("delta-spark")
    assert stage_base("airflow").startswith(f"apache/airflow:{airflow}-python")
    assert dockerfile_args()["AIRFLOW_VERSION"] == airflow
    spark_image = stage_base("spark")
    match = re.fullmatch(r"apache/spark:([\d.]+)-scala([\d.]+)-java\d+-python3-ubuntu", spark_image)
    assert match and match.group(1) == pyspark, spark_image
    from contract_gate_spark.runtime.session import DELTA_PACKAGE

    major_minor = ".".join(pyspark.split(".")[:2])
    assert DELTA_PACKAGE == f"io.delta:delta-spark_{major_minor}_{match.group(2)}:{delta}"


def test_the_dockerfile_installs_the_provider_and_fetches_delta_once():
    airflow_stage, spark_stage = stage_text("airflow"), stage_text("spark")
    extras = re.search(r'"/opt/contract-gate\[([\w,]+)\]"', airflow_stage).group(1).split(",")
    assert set(extras) <= set(PYPROJECT["project"]["optional-dependencies"]) and {"spark", "airflow"} <= set(extras)
    copied = set(re.findall(r"^COPY --chown=\S+ (.+) /opt/contract-gate/\S*$", airflow_stage, re.M))
    packages = {"pyproject.toml", PYPROJECT["project"]["readme"], CONSTRAINTS, "provider", "contract_plan", "spark_jobs"}
    assert {part for line in copied for part in line.split()} == packages
    assert all((REPO / name).exists() for name in packages)
    assert "RUN python -m contract_gate_spark.runtime.jars" in airflow_stage
    # the Spark image takes the jars Ivy fetched in the airflow stage (Spark's default Ivy folder,
    # the one the local runner reads too), instead of fetching them again
    from contract_gate.local_spark import installation

    ivy = Path(re.search(r"Path\.home\(\) / \"([^\"]+)\" / \"jars\"", Path(installation.__file__).read_text()).group(1))
    assert f"COPY --from=airflow /home/airflow/{ivy}/jars/io.delta_*.jar /opt/spark/jars/" in spark_stage
    assert "--packages" not in json.dumps(SERVICES)  # nothing is fetched when the stack starts


def test_one_switch_points_every_gate_at_connect_or_the_cluster(airflow_facts):
    from typing import get_args

    from contract_gate.config import environment_variable
    from contract_gate.contract.settings import ExecutionSettings

    modes = get_args(ExecutionSettings.model_fields["mode"].annotation)
    for service in AIRFLOW:
        switch = env(service)[environment_variable("execution_mode")]
        default = re.fullmatch(r"\$\{CONTRACT_GATE_EXECUTION_MODE:-(\w+)\}", switch)
        assert default and default.group(1) in modes
    connect = SERVICES["spark-connect"]["command"]
    grpc_port = int(confs(connect)["spark.connect.grpc.binding.port"])
    assert airflow_facts["spark_connect_url"].rstrip("/") == f"sc://spark-connect:{grpc_port}"
    assert published("spark-connect")[grpc_port] == grpc_port == healthcheck_port("spark-connect")
    master = SERVICES["spark-master"]["command"]
    master_url = f"spark://{option(master, '--host')}:{option(master, '--port')}"
    assert airflow_facts["spark_default"]["master"] == master_url
    assert airflow_facts["spark_default"]["deploy_mode"] == "client"
    rest = re.search(r"-Dspark\.master\.rest\.port=(\d+)", env("spark-master")["SPARK_MASTER_OPTS"])
    assert "-Dspark.master.rest.enabled=true" in env("spark-master")["SPARK_MASTER_OPTS"]
    assert int(rest.group(1)) == airflow_facts["spark_default"]["rest_port"] in published("spark-master")
    # cluster deploy mode: the same master, the driver launched through its REST server (the
    # runner takes that path exactly when the hook names a REST endpoint)
    cluster = airflow_facts["spark_cluster"]
    assert (cluster["master"], cluster["deploy_mode"]) == (master_url, "cluster")
    assert cluster["rest_endpoint"] == f"http://{option(master, '--host')}:{rest.group(1)}"
    assert airflow_facts["spark_default"]["rest_endpoint"] is None  # client mode: none
    assert option(connect, "--master") == master_url
    assert master_url in SERVICES["spark-worker"]["command"]


def test_spark_services_run_the_gates_session_settings():
    from contract_gate_spark.runtime.session import DELTA_CONF, NO_SUBSTITUTION

    connect = SERVICES["spark-connect"]["command"]
    assert connect[0] == "/opt/spark/sbin/start-connect-server.sh"
    assert env("spark-connect")["SPARK_NO_DAEMONIZE"] == "true"  # the container's foreground process
    assert {**DELTA_CONF, **NO_SUBSTITUTION}.items() <= confs(connect).items()
    assert confs(connect)["spark.sql.session.timeZone"] == "UTC"
    for service, main_class in {"spark-master": "org.apache.spark.deploy.master.Master",
                                "spark-worker": "org.apache.spark.deploy.worker.Worker"}.items():
        command = SERVICES[service]["command"]
        assert command[:2] == ["/opt/spark/bin/spark-class", main_class]
        web_ui = int(option(command, "--webui-port"))
        assert published(service)[web_ui] == web_ui == healthcheck_port(service)


def test_volumes_share_one_lakehouse_and_mount_contracts_and_dags():
    declared = set(COMPOSE["volumes"])
    for service in [*AIRFLOW, *SPARK, "postgres"]:
        for volume in SERVICES[service].get("volumes", []):
            source, target = volume.split(":")[:2]
            assert source.startswith("./") or source in declared, f"{service}: undeclared volume {source}"
            if source.startswith("./"):
                assert (REPO / source).is_dir(), f"{service} mounts {source}, which the repository lacks"
    for service in [*AIRFLOW, *SPARK]:
        assert f"lakehouse:{LAKEHOUSE}" in SERVICES[service]["volumes"], service
    user = {SERVICES[service]["user"] for service in [*AIRFLOW, *SPARK]}
    assert user == {"50000:0"}  # the gate's owner-only files are read on both sides
    assert "useradd --uid 50000 --gid 0" in stage_text("spark")
    for stage in ("airflow", "spark"):  # the named volume takes its owner from the image's folder
        assert f"chown 50000:0 {LAKEHOUSE}" in stage_text(stage)
    for service in AIRFLOW:
        settings, volumes = env(service), SERVICES[service]["volumes"]
        assert settings["CONTRACT_GATE_HOME"] == LAKEHOUSE
        assert f"./contracts:{settings['AIRFLOW__CONTRACT_GATE__CONTRACTS_DIR']}:ro" in volumes
        assert "./dags:/opt/airflow/dags" in volumes  # the official image's DAG folder
        assert "AIRFLOW__CORE__DAGS_FOLDER" not in settings


def test_dependencies_wait_for_health_and_the_init():
    for service, spec in SERVICES.items():
        for needed, condition in (spec.get("depends_on") or {}).items():
            assert needed in SERVICES, f"{service} depends on a missing service {needed}"
            condition = condition["condition"]
            if condition == "service_healthy":
                assert SERVICES[needed].get("healthcheck", {}).get("test"), f"{needed} has no health check"
            else:
                assert (condition, needed) == ("service_completed_successfully", "airflow-init")
    for service in [*AIRFLOW_COMMANDS, "airflow-init"]:
        assert SERVICES[service]["depends_on"]["postgres"] == {"condition": "service_healthy"}
    for service in AIRFLOW_COMMANDS:
        assert SERVICES[service]["depends_on"]["airflow-init"] == {"condition": "service_completed_successfully"}
        assert SERVICES[service]["healthcheck"]["test"]
    # the scheduler runs the tasks (LocalExecutor): the Spark they go to is up first
    assert {"spark-connect", "spark-worker"} <= set(SERVICES["airflow-scheduler"]["depends_on"])
    assert SERVICES["spark-worker"]["depends_on"] == {"spark-master": {"condition": "service_healthy"}}
    order = {}

    def depth(service: str, seen: tuple = ()) -> int:
        assert service not in seen, f"dependency cycle through {service}"
        if service not in order:
            order[service] = 1 + max((depth(n, (*seen, service)) for n in SERVICES[service].get("depends_on", {})),
                                     default=0)
        return order[service]

    for service in SERVICES:
        depth(service)


def cluster_section() -> str:
    """docs/execution-modes.md, "Run it on a cluster": what a user reads about the stack."""
    return re.split(r"\n##+ ", CLUSTER_DOC.split("## Run it on a cluster\n", 1)[1], maxsplit=1)[0]


def readme_services() -> dict[str, set[int]]:
    section = cluster_section()
    rows = re.findall(r"^\| `([\w-]+)` \| [^|]+ \| ([^|]+) \|$", section, re.M)
    return {name: {int(port) for port in re.findall(r"\b(\d{4,5})\b", ports)} for name, ports in rows}


def test_the_readme_names_the_same_services_and_ports():
    listed = readme_services()
    assert set(listed) == set(SERVICES)
    for service in SERVICES:
        assert listed[service] == set(published(service)), service
    hosts = [port for service in SERVICES for port in published(service)]
    assert len(hosts) == len(set(hosts)), "a host port is published twice"
    section = cluster_section()
    assert "docker compose up" in section and "CONTRACT_GATE_EXECUTION_MODE" in section
    switches = {name for value in env("airflow-scheduler").values()
                for name in re.findall(r"\$\{(\w+):-", str(value))} - {"AIRFLOW_JWT_SECRET"}
    assert switches == {"CONTRACT_GATE_EXECUTION_MODE", "CONTRACT_GATE_SPARK_DEPLOY_MODE"}
    assert all(f"{name}=" in section for name in switches)  # each switch is documented with its use
    assert "was not started here" in section and "no Docker engine" in section


def test_docker_compose_config_agrees_with_the_parse(tmp_path):
    docker = shutil.which("docker")
    plugin = subprocess.run([docker, "compose", "version"], capture_output=True, text=True) if docker else None
    if plugin is None or plugin.returncode != 0:
        pytest.skip("`docker compose` is not available here (the Docker client has no compose plugin); "
                    "the stack's files are checked by the parse above")
    done = subprocess.run([docker, "compose", "-f", str(REPO / "docker-compose.yaml"), "config", "--format", "json"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    config = json.loads(done.stdout)["services"]
    assert set(config) == set(SERVICES)
    for service in SERVICES:
        assert {int(p["published"]) for p in config[service].get("ports", [])} == set(published(service))
