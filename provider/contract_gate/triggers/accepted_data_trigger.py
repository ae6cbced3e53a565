"""Wait in the triggerer for a contract's accepted data (:mod:`contract_gate.freshness.readiness`):
the deferred half of :class:`~contract_gate.sensors.accepted_data_sensor.AcceptedDataSensor`.

The contract is compiled on each look (milliseconds, no Spark), from the same file the workers
read, so the triggerer needs the contracts folder as they do. Reads run in a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError
from contract_gate.freshness.readiness import accepted_data

ACCEPTED = "accepted"
ERROR = "error"


def accepted_data_event(contract: str, env: str | None, business_date: str | None,
         object_name: str | None = None) -> dict[str, Any] | None:
    """One look at ``object_name``'s target (default the contract's only gated object): the event
    to fire, or None while the consumer waits."""
    try:
        found = accepted_data(compile_plan(contract, env=env, object_name=object_name), business_date)
    except (ContractError, ValueError) as exc:  # a broken contract, or one that cannot be waited on: say why
        return {"status": ERROR, "message": str(exc)}
    return None if found is None else {"status": ACCEPTED, **found}


class AcceptedDataTrigger(BaseTrigger):
    """Fires ``{"status": "accepted", contract_id, object, reason, submission_id, ...}`` once the
    object's target holds accepted data for ``business_date`` (or is fresh, without one).

    :param contract: absolute path of the contract file.
    :param env: the contract's server/environment.
    :param business_date: ISO date or timestamp, or None to wait for freshness.
    :param poll_seconds: how often to look.
    :param object_name: the schema object; default the contract's only gated object.
    """

    def __init__(self, contract: str, env: str | None = None, business_date: str | None = None,
                 poll_seconds: float = 60, object_name: str | None = None) -> None:
        super().__init__()
        self.contract = contract
        self.env = env
        self.business_date = business_date
        self.poll_seconds = poll_seconds
        self.object_name = object_name

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"contract": self.contract, "env": self.env, "business_date": self.business_date,
                 "poll_seconds": self.poll_seconds, "object_name": self.object_name})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            event = await asyncio.to_thread(accepted_data_event, self.contract, self.env, self.business_date, self.object_name)
            if event is not None:
                yield TriggerEvent(event)
                return
            await asyncio.sleep(self.poll_seconds)
