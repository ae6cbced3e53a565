"""The provider's ``[contract_gate]`` configuration section: registered in provider info, read
from Airflow's configuration inside Airflow and from ``AIRFLOW__CONTRACT_GATE__*`` outside it,
the old ``CONTRACT_GATE_*`` names still honoured with a deprecation warning."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contract_gate import config
from contract_gate.provider_info import get_provider_info

ROOT = Path(__file__).resolve().parents[2]
# Job environment: read in every process that resolves a plan address or starts local Spark,
# Spark drivers and notebooks included, where no Airflow configuration exists.
JOB_ENVIRONMENT = {"CONTRACT_GATE_HOME", "CONTRACT_GATE_JARS", "CONTRACT_GATE_IVY_JARS", "CONTRACT_GATE_CLASS_ARCHIVE",
                   "CONTRACT_GATE_SPARK_LOG_LEVEL", "CONTRACT_GATE_LOCAL_START", "CONTRACT_GATE_DISABLE_VALIDATION",
                   "CONTRACT_GATE_SPARK_SETTINGS_FILE"}  # the driver reads its private S3A settings file

READ_OPTIONS = """
import json, sys, warnings
{prelude}
from contract_gate import config
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    values = {{name: config.get(name) for name in config.OPTIONS}}
print(json.dumps({{"values": values, "warnings": [str(w.message) for w in caught],
                  "airflow": "airflow" in sys.modules}}))
"""


def read_options(env: dict[str, str], prelude: str = "", home: Path | None = None) -> dict:
    """Every option as a fresh interpreter reads it with ``env`` (and no other gate setting)."""
    import os

    environment = {k: v for k, v in os.environ.items() if not k.startswith(("CONTRACT_GATE_", "AIRFLOW__CONTRACT_GATE__"))}
    if home is not None:
        environment["AIRFLOW_HOME"] = str(home)
    result = subprocess.run([sys.executable, "-c", READ_OPTIONS.format(prelude=prelude)], capture_output=True,
                            text=True, cwd=ROOT, env={**environment, **env}, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_every_option_is_registered_in_provider_info_with_a_description():
    section = get_provider_info()["config"]["contract_gate"]
    assert set(section["options"]) == set(config.OPTIONS)
    for name, option in section["options"].items():
        assert option["description"] and option["example"], name
        assert option["type"] in ("string", "integer", "boolean") and "default" in option


def test_without_airflow_the_airflow_variable_wins_and_old_names_still_work_with_a_warning():
    read = read_options({"AIRFLOW__CONTRACT_GATE__ENV": "prod", "CONTRACT_GATE_ENV": "dev",
                         "CONTRACT_GATE_WORK_DIR": "/old/runs", "CONTRACT_GATE_CONTRACTS": "/old/status-name"})
    assert read["airflow"] is False  # a lint or a plan never imports Airflow for its settings
    assert read["values"]["env"] == "prod"
    assert read["values"]["work_dir"] == "/old/runs"
    assert read["values"]["contracts_dir"] == "/old/status-name"
    assert read["values"]["execution_mode"] is None
    assert sorted(read["warnings"]) == [
        "CONTRACT_GATE_CONTRACTS is deprecated: set [contract_gate] contracts_dir in airflow.cfg, or "
        "AIRFLOW__CONTRACT_GATE__CONTRACTS_DIR",
        "CONTRACT_GATE_WORK_DIR is deprecated: set [contract_gate] work_dir in airflow.cfg, or "
        "AIRFLOW__CONTRACT_GATE__WORK_DIR",
    ]


@pytest.mark.slow
def test_inside_airflow_airflow_cfg_answers(tmp_path):
    (tmp_path / "airflow.cfg").write_text("[contract_gate]\nstatus_dir = /from/airflow/cfg\nenv = acc\n")
    read = read_options({"AIRFLOW__CONTRACT_GATE__ENV": "prod", "CONTRACT_GATE_ROOTS": "/old,/names"},
                        prelude="import airflow", home=tmp_path)
    assert read["airflow"] is True
    assert read["values"]["status_dir"] == "/from/airflow/cfg"
    assert read["values"]["env"] == "prod"  # Airflow's own order: the environment over the file
    assert read["values"]["roots"] == "/old,/names"
    assert read["warnings"] == ["CONTRACT_GATE_ROOTS is deprecated: set [contract_gate] roots in airflow.cfg, "
                                "or AIRFLOW__CONTRACT_GATE__ROOTS"]


def test_a_list_option_is_its_entries(monkeypatch):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__LANDING_ROOTS", " /a , s3://b/c,, ")
    assert config.get_list("landing_roots") == ["/a", "s3://b/c"]


def test_only_the_job_environment_is_read_under_the_old_names():
    """Outside ``config.py`` the provider names no ``CONTRACT_GATE_*`` variable but the job
    environment's: every other setting is an option of the section."""
    named = {}
    for source in (ROOT / "provider" / "contract_gate").rglob("*.py"):
        if source.name != "config.py":
            for name in re.findall(r"\bCONTRACT_GATE_[A-Z_]+\b", source.read_text(encoding="utf-8")):
                named.setdefault(name, source.relative_to(ROOT))
    assert {name: file for name, file in named.items() if name not in JOB_ENVIRONMENT} == {}
    old = {old for option in config.OPTIONS.values() for old in option.old_names}
    assert not old & JOB_ENVIRONMENT
