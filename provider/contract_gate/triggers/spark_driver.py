"""Wait for a Spark standalone driver (cluster deploy mode) in the triggerer.

The trigger polls the master's REST submission server through
:class:`~contract_gate.hooks.spark_standalone.SparkStandaloneRestHook` until the driver reaches
a terminal state, and fires one event carrying what the runner's ``finish`` needs: the driver
id, its state, the worker it ran on and the server's message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from contract_gate.hooks.spark_standalone import SparkStandaloneRestHook, checked_driver_id


class SparkDriverStatusTrigger(BaseTrigger):
    """Fires when a driver submitted to a standalone master in cluster deploy mode has ended.

    :param rest_url: the master's REST submission server, e.g. ``http://spark-master:6066``.
    :param driver_id: the submission id the master gave (``driver-...``).
    :param polling_period_seconds: how often to ask.
    :param settings_file: the driver's secret settings (``contract_gate.runners.job_credentials``),
        removed when the task is killed; the runner's ``finish`` removes it otherwise.
    """

    def __init__(self, rest_url: str, driver_id: str, polling_period_seconds: float = 10,
                 settings_file: str | None = None) -> None:
        super().__init__()
        self.rest_url = rest_url
        self.driver_id = checked_driver_id(driver_id)
        self.polling_period_seconds = polling_period_seconds
        self.settings_file = settings_file

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"rest_url": self.rest_url, "driver_id": self.driver_id,
                 "polling_period_seconds": self.polling_period_seconds, "settings_file": self.settings_file})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = SparkStandaloneRestHook(self.rest_url)
        yield TriggerEvent(await hook.a_wait_for_driver(self.driver_id, self.polling_period_seconds))

    async def on_kill(self) -> None:
        """The deferred task was killed by a user: kill its driver too (not on triggerer restarts)."""
        message = await SparkStandaloneRestHook(self.rest_url).a_kill(self.driver_id)
        self.log.info("Spark driver %s: kill asked: %s", self.driver_id, message)
        if self.settings_file:
            Path(self.settings_file).unlink(missing_ok=True)
