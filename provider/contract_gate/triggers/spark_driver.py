"""Wait for a Spark standalone driver (cluster deploy mode) in the triggerer.

The standalone master's REST submission server (``spark.master.rest.enabled=true``, port 6066
by default) answers ``GET /v1/submissions/status/<driverId>`` with the driver's state. The
trigger polls it until the driver reaches a terminal state and fires one event carrying what
the runner's ``finish`` needs: the driver id, its state, the worker it ran on and the server's
message. A master that no longer knows the driver (``success: false``, e.g. after a master
restart without recovery) is terminal too: waiting would never end.

The REST client of the runner (submit, kill) is :mod:`contract_gate.runners.standalone_rest`;
the states and the status reading live here, once, for the trigger and a blocking wait alike.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

# org.apache.spark.deploy.master.DriverState: the states a driver never leaves.
TERMINAL_STATES = frozenset({"FINISHED", "FAILED", "KILLED", "ERROR"})
# The master names drivers driver-<yyyyMMddHHmmss>-<n>; nothing else goes into a URL path.
DRIVER_ID = re.compile(r"driver-[0-9]+-[0-9]+")
REQUEST_TIMEOUT_SECONDS = 30


def checked_driver_id(driver_id: str) -> str:
    if not isinstance(driver_id, str) or not DRIVER_ID.fullmatch(driver_id):
        raise ValueError(f"{driver_id!r} is not a standalone driver id (driver-<timestamp>-<n>)")
    return driver_id


def status_url(rest_url: str, driver_id: str) -> str:
    return f"{rest_url.rstrip('/')}/v1/submissions/status/{checked_driver_id(driver_id)}"


def kill_url(rest_url: str, driver_id: str) -> str:
    return f"{rest_url.rstrip('/')}/v1/submissions/kill/{checked_driver_id(driver_id)}"


def status_event(driver_id: str, response: dict) -> dict | None:
    """The terminal event for a ``SubmissionStatusResponse``, or ``None`` while the driver runs."""
    if not response.get("success", False):
        return {"driver_id": driver_id, "driver_state": "UNKNOWN", "worker": None,
                "message": str(response.get("message") or "the master does not know this driver")}
    state = str(response.get("driverState", ""))
    if state not in TERMINAL_STATES:
        return None
    return {"driver_id": driver_id, "driver_state": state, "worker": response.get("workerHostPort"),
            "message": str(response.get("message") or "")}


class SparkDriverStatusTrigger(BaseTrigger):
    """Fires when a driver submitted to a standalone master in cluster deploy mode has ended.

    :param rest_url: the master's REST submission server, e.g. ``http://spark-master:6066``.
    :param driver_id: the submission id the master gave (``driver-...``).
    :param polling_period_seconds: how often to ask.
    """

    def __init__(self, rest_url: str, driver_id: str, polling_period_seconds: float = 10) -> None:
        super().__init__()
        self.rest_url = rest_url
        self.driver_id = checked_driver_id(driver_id)
        self.polling_period_seconds = polling_period_seconds

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"rest_url": self.rest_url, "driver_id": self.driver_id,
                 "polling_period_seconds": self.polling_period_seconds})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        import httpx

        url = status_url(self.rest_url, self.driver_id)
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_SECONDS) as client:
            while True:
                response = await client.get(url)
                response.raise_for_status()
                status = response.json()
                event = status_event(self.driver_id, status)
                if event is not None:
                    yield TriggerEvent(event)
                    return
                self.log.info("Spark driver %s: %s", self.driver_id, status.get("driverState"))
                await asyncio.sleep(self.polling_period_seconds)

    async def on_kill(self) -> None:
        """The deferred task was killed by a user: kill its driver too (not on triggerer restarts)."""
        import httpx

        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_SECONDS) as client:
            response = await client.post(kill_url(self.rest_url, self.driver_id))
            self.log.info("Spark driver %s: kill asked: %s", self.driver_id, response.json().get("message"))
