"""Wait for a Databricks run in the triggerer.

The trigger asks the run's state through the same hook the runner submitted it with
(:class:`~contract_gate.hooks.databricks.DatabricksWorkspaceHook`; the SDK's client is blocking, so
each call runs in a thread) until the run is terminal, and fires one event carrying what the
runner's ``finish`` needs: the run id, its life-cycle and result states, the state message and
the failed task's error.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from contract_gate.hooks.databricks import DatabricksWorkspaceHook, run_event


class DatabricksRunTrigger(BaseTrigger):
    """Fires when the Databricks run ``run_id`` has ended.

    :param databricks_conn_id: the connection the run was submitted through.
    :param run_id: the run's id.
    :param polling_period_seconds: how often to ask.
    """

    def __init__(self, databricks_conn_id: str, run_id: int, polling_period_seconds: float = 30) -> None:
        super().__init__()
        self.databricks_conn_id = databricks_conn_id
        self.run_id = int(run_id)
        self.polling_period_seconds = polling_period_seconds

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"databricks_conn_id": self.databricks_conn_id, "run_id": self.run_id,
                 "polling_period_seconds": self.polling_period_seconds})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = DatabricksWorkspaceHook(self.databricks_conn_id)
        while True:
            event = await asyncio.to_thread(run_event, hook, self.run_id)
            if event is not None:
                yield TriggerEvent(event)
                return
            await asyncio.sleep(self.polling_period_seconds)

    async def on_kill(self) -> None:
        """The deferred task was killed by a user: cancel its run too (not on triggerer restarts)."""
        await asyncio.to_thread(DatabricksWorkspaceHook(self.databricks_conn_id).cancel_run, self.run_id)
        self.log.info("Databricks run %s: cancel asked", self.run_id)
