"""In the compose stack, ``contract-gate status`` reads the contracts folder the DAG factory
builds the gates from: both resolve ``[contract_gate] contracts_dir`` from the environment that
docker-compose.yaml gives the Airflow containers."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from contract_gate.cli.main import main
from contract_gate.contract_folder import contract_files
from contract_gate.config import contracts_dir

REPO = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((REPO / "docker-compose.yaml").read_text())


def compose_environment(service: str) -> dict[str, str]:
    """A service's environment as compose passes it on (``${NAME:-default}`` is the default)."""
    return {name: re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: m.group(2), str(value))
            for name, value in COMPOSE["services"][service]["environment"].items()}


@pytest.fixture
def in_compose(monkeypatch):
    """This process with the scheduler container's environment (and no other gate setting)."""
    import os

    for name in list(os.environ):
        if name.startswith(("CONTRACT_GATE_", "AIRFLOW__CONTRACT_GATE__")):
            monkeypatch.delenv(name)
    environment = compose_environment("airflow-scheduler")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return environment


def status(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["status", *args])
    return code, out.getvalue(), err.getvalue()


def test_status_and_the_dag_factory_read_the_same_contracts_folder(in_compose):
    mounted = next(volume.split(":")[1] for volume in COMPOSE["services"]["airflow-scheduler"]["volumes"]
                   if volume.startswith("./contracts:"))
    assert contracts_dir() == Path(mounted)
    code, _, err = status("--json")
    assert (code, err.strip()) == (2, f"contract-gate status: no such contracts folder: {mounted}")


def test_status_lists_the_contracts_the_dag_factory_builds(in_compose, monkeypatch, tmp_path):
    """The same setting pointed at a real folder: status reports exactly the factory's contracts."""
    name = next(name for name in in_compose if name.endswith("CONTRACTS_DIR"))
    folder = tmp_path / "contracts"
    shutil.copytree(REPO / "contracts", folder)
    monkeypatch.setenv(name, str(folder))
    monkeypatch.chdir(tmp_path)
    built = {file.resolve() for file in contract_files(contracts_dir())}
    code, out, _ = status("--json")
    assert code in (0, 1)
    listed = {Path(entry["file"]).resolve() for entry in json.loads(out)["contracts"]}
    assert listed == built and len(built) >= 3
