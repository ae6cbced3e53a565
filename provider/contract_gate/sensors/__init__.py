"""Sensors: wait for a contract's batch to land, or for its accepted data.

* :class:`~contract_gate.sensors.landing.ContractLandingSensor`: a new batch has landed and
  settled at the contract's landing and was not gated yet (producer side, before the gate).
* :class:`~contract_gate.sensors.accepted_data_sensor.AcceptedDataSensor`: the target holds accepted
  data for a business date, or is fresh within its SLA (consumer side, after the gate).

Both poke without a JVM and defer to a trigger of :mod:`contract_gate.triggers` with
``deferrable=True``.
"""

from contract_gate.sensors.accepted_data_sensor import AcceptedDataSensor
from contract_gate.sensors.landing import ContractLandingSensor

__all__ = ["AcceptedDataSensor", "ContractLandingSensor"]
