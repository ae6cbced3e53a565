"""``contract-gate airflow up`` without starting it: it runs the compose stack's Airflow components,
and the settings it writes make no component depend on its working directory."""

from __future__ import annotations

from pathlib import Path

import yaml
from contract_gate.cli.deployment import COMPONENTS, Deployment, Options, first_settings, gate_home, parallelism

REPO = Path(__file__).resolve().parents[2]


def test_the_command_starts_the_compose_stacks_airflow_components():
    services = yaml.safe_load((REPO / "docker-compose.yaml").read_text())["services"]
    compose = {service["command"] for name, service in services.items()
               if name.startswith("airflow-") and isinstance(service.get("command"), str)}
    assert compose == set(COMPONENTS)


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
