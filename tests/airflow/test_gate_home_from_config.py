"""The gate's home comes from ``[contract_gate] home``, never from a component's working directory:
``CONTRACT_GATE_HOME`` (the job environment a runner hands to a Spark driver) wins, then the
option, then the working directory; and a gate DAG parsed and run (``dag.test()``, real local
Spark and Delta) from another working directory, with only the option set, gates in that home.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timezone
from pathlib import Path

import pytest
from _airflow_gate import HOME, gate_home
from _landing_contracts import LAKEHOUSE, case_rows, land_csv, write_contract

from contract_gate import config
from contract_gate.provider_info import get_provider_info
from contract_gate_plan.addresses import HOME_ENV, Address

CONTRACT = "cases_home_from_config"
RELATIVE = {"kind": "path", "path": "lakehouse/orders", "format": "delta"}


@contextlib.contextmanager
def home_in_airflow_cfg(home: Path):
    """``[contract_gate] home`` as an ``airflow.cfg`` line sets it (not an environment variable)."""
    from airflow.configuration import conf

    conf.set("contract_gate", "home", str(home))
    try:
        yield
    finally:
        conf.remove_option("contract_gate", "home", remove_default=False)


def test_the_home_is_contract_gate_home_else_the_option_else_the_working_directory(monkeypatch, tmp_path):
    monkeypatch.delenv(HOME_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert config.gate_home() == tmp_path
    with home_in_airflow_cfg(tmp_path / "configured"):
        assert config.gate_home() == tmp_path / "configured"
        assert Address.from_document(RELATIVE).location == f"{tmp_path}/configured/lakehouse/orders"
        monkeypatch.setenv(config.environment_variable("home"), str(tmp_path / "from_variable"))
        assert config.gate_home() == tmp_path / "from_variable"  # Airflow's own order: the variable, then the file
        monkeypatch.setenv(HOME_ENV, str(tmp_path / "job"))
        assert config.gate_home() == tmp_path / "job"
        assert Address.from_document(RELATIVE).location == f"{tmp_path}/job/lakehouse/orders"


def test_the_option_is_in_the_providers_config_description():
    option = get_provider_info()["config"]["contract_gate"]["options"]["home"]
    assert option["type"] == "string" and option["default"] is None
    assert "CONTRACT_GATE_HOME" in option["description"]


@pytest.mark.slow  # a gate run: two Spark jobs
def test_a_dag_parsed_and_run_from_elsewhere_gates_in_the_configured_home(gate, tmp_path, monkeypatch):
    from contract_gate.airflow_compat import dag_bag
    from contract_gate.decisions import store_for
    from contract_gate.operators.base import compile_gate_plan

    path = write_contract(tmp_path / "contracts", CONTRACT)  # relative tables: lakehouse/...
    dag_file = gate.dags / "home_from_config_dags.py"  # in the DAG folder: dag.test() runs serialized DAGs
    dag_file.write_text('"""An Airflow DAG file (the words DagBag looks for)."""\n'
                        f"from contract_gate.dag_factory import contract_dag\n{CONTRACT} = contract_dag({str(path)!r})\n")
    land_csv(CONTRACT, case_rows("2025-05-01", region="H"))  # in the session's home
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv(HOME_ENV, raising=False)

    try:
        with home_in_airflow_cfg(HOME):
            bag = dag_bag(gate.dags)
            assert bag.import_errors == {}
            dagrun = bag.dags[CONTRACT].test(logical_date=datetime(2030, 1, 1, tzinfo=timezone.utc))
    finally:
        dag_file.unlink()
        gate.reset_bag()

    assert dagrun.state == "success"
    assert sorted(row["region_code"] for row in gate.rows(f"lakehouse/{CONTRACT}")) == ["H0", "H1", "H2"]
    with gate_home():
        records = store_for(compile_gate_plan(str(path), None, None)).records(contract_id=CONTRACT)
    assert [(r.outcome, r.rows_published) for r in records] == [("published", 3)]
    assert (LAKEHOUSE / CONTRACT / "_delta_log").is_dir()
    assert not (elsewhere / "lakehouse").exists()  # nothing resolved against the working directory
