"""Airflow's ``[operators] default_deferrable`` decides whether a sensor not told otherwise waits in
the triggerer; a sensor's own ``deferrable`` wins. Read when the sensor is made, so the setting of
the process that parses the DAG applies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from airflow.exceptions import TaskDeferred

from contract_gate.sensors import AcceptedDataSensor, ContractLandingSensor
from contract_gate.triggers.accepted_data_trigger import AcceptedDataTrigger
from contract_gate.triggers.landing import LandingTrigger

ORDERS = Path(__file__).resolve().parents[2] / "contracts" / "orders.yaml"
SENSORS = {ContractLandingSensor: LandingTrigger, AcceptedDataSensor: AcceptedDataTrigger}


@pytest.fixture
def contract(tmp_path) -> str:
    """The sample orders contract, gated when its batch lands."""
    path = tmp_path / "orders.yaml"
    path.write_text(ORDERS.read_text().replace('schedule: "@hourly"', "schedule: {onLanding: {marker: _SUCCESS}}"))
    return str(path)


@pytest.mark.parametrize("sensor", SENSORS, ids=lambda s: s.__name__)
@pytest.mark.parametrize("setting", ["True", "False"])
def test_a_sensor_follows_default_deferrable_unless_told(sensor, setting, contract, monkeypatch):
    monkeypatch.setenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", setting)
    assert sensor(task_id="wait", contract=contract).deferrable is (setting == "True")
    assert sensor(task_id="told", contract=contract, deferrable=setting != "True").deferrable is (setting != "True")


@pytest.mark.parametrize("sensor", SENSORS, ids=lambda s: s.__name__)
def test_without_the_setting_a_sensor_pokes_as_airflow_s_default_says(sensor, contract, monkeypatch):
    monkeypatch.delenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", raising=False)
    assert sensor(task_id="wait", contract=contract).deferrable is False


@pytest.mark.parametrize("sensor", SENSORS, ids=lambda s: s.__name__)
def test_a_sensor_deferrable_by_the_setting_defers_to_its_trigger(sensor, contract, monkeypatch):
    monkeypatch.setenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", "True")
    with pytest.raises(TaskDeferred) as deferred:
        sensor(task_id="wait", contract=contract, poke_interval=1, timeout=60).execute({})
    assert isinstance(deferred.value.trigger, SENSORS[sensor])


@pytest.mark.parametrize("setting", ["True", "False"])
def test_a_remote_runner_follows_default_deferrable_unless_its_connection_or_task_says(setting, monkeypatch):
    """The execution modes that can wait in the triggerer (a Databricks run, a standalone cluster's
    driver): the task's ``deferrable`` wins, then the connection's, then the setting."""
    from contract_gate.runners import get_runner

    monkeypatch.setenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", setting)
    by_setting = setting == "True"

    def databricks(**settings) -> str:
        return json.dumps({"conn_type": "databricks", "host": "127.0.0.1", "password": "t",
                           "extra": {"contract_gate": {"volume": "/Volumes/main/gate/work", **settings}}})

    monkeypatch.setenv("AIRFLOW_CONN_DBX", databricks())
    assert get_runner("databricks", conn_id="dbx").deferrable is by_setting
    assert get_runner("databricks", conn_id="dbx", deferrable=not by_setting).deferrable is (not by_setting)
    monkeypatch.setenv("AIRFLOW_CONN_DBX", databricks(deferrable=not by_setting))
    assert get_runner("databricks", conn_id="dbx").deferrable is (not by_setting)

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CLUSTER", json.dumps(
        {"conn_type": "spark", "host": "spark://127.0.0.1", "port": 7077, "extra": {"deploy-mode": "cluster"}}))
    assert get_runner("spark_submit", conn_id="spark_cluster").deferrable is by_setting
    assert get_runner("spark_submit", conn_id="spark_cluster", deferrable=not by_setting).deferrable is (not by_setting)
