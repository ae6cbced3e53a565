"""Airflow's ``[operators] default_deferrable`` decides whether a sensor not told otherwise waits in
the triggerer; a sensor's own ``deferrable`` wins. Read when the sensor is made, so the setting of
the process that parses the DAG applies."""

from __future__ import annotations

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
