"""Wait in the triggerer for a new batch at a contract's landing (:mod:`contract_gate.landing_batches`).

One trigger, two uses:

* a deferred :class:`~contract_gate.sensors.landing.ContractLandingSensor` (``repeat=False``):
  one event, then the trigger ends;
* the ``AssetWatcher`` of an event-driven gate DAG (``repeat=True``, see
  :mod:`contract_gate.dags.gate_schedule`): an event for every new batch, for as long as the DAG is
  deployed; each event becomes an Asset event that starts the gate, with no worker slot waiting.

The same batch never fires twice: a batch whose submission already has a final decision is
skipped, and the trigger remembers the last submission it fired so a batch whose gate run has
not decided yet does not fire again. As an Asset watcher it keeps that memory in the Asset's
state store (``asset_state_store``, kept in Airflow's database) once the triggerer holds the
event, so a restarted or moved triggerer remembers it too.

The triggerer's event loop serves every deferred task of the deployment, so nothing blocks it:
an object-storage landing is listed with fsspec's async listing, and the local filesystem and
decision-log reads run in a thread.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from contract_gate.landing_batches import DEFAULT_SETTLE_SECONDS, Watch, alanded_batch, gated
from contract_gate_plan.landing_files import LandingRefused

LANDED = "landed"
ERROR = "error"
FIRED_KEY = "last_fired_submission"  # in the watched Asset's state store


class LandingTrigger(BaseEventTrigger):
    """Fires ``{"status": "landed", contract_id, object, submission_id, landing, kind, files, delta_version}``
    when a batch that was not gated yet has landed and settled.

    :param contract_id, landing, decisions, marker, settle_seconds, connection_id, object_name, sole_object: the
        :class:`~contract_gate.landing_batches.Watch` (plan addresses, JSON values).
    :param poll_seconds: how often to look.
    :param repeat: keep watching after an event (an Asset watcher) instead of ending.
    """

    def __init__(self, contract_id: str, landing: dict, decisions: dict, marker: str | None = None,
                 settle_seconds: int = DEFAULT_SETTLE_SECONDS, connection_id: str | None = None,
                 poll_seconds: float = 30, repeat: bool = False, object_name: str | None = None,
                 sole_object: bool = True) -> None:
        super().__init__()
        self.watch = Watch(contract_id, dict(landing), dict(decisions), marker, int(settle_seconds), connection_id,
                           object_name, sole_object)
        self.poll_seconds = poll_seconds
        self.repeat = repeat
        self.last_fired: str | None = None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {**self.watch.as_kwargs(), "poll_seconds": self.poll_seconds, "repeat": self.repeat})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            event = await self.poll()
            if event is not None:
                yield TriggerEvent(event)
                if not self.repeat or event["status"] == ERROR:
                    return
                # once the triggerer holds the event: written before, a crash in between would lose the batch
                await self.persist(event["submission_id"])
            await asyncio.sleep(self.poll_seconds)

    async def poll(self) -> dict[str, Any] | None:
        """One look at the landing: the event to fire, or None."""
        try:
            batch = await alanded_batch(self.watch, time.time())
        except (LandingRefused, OSError) as exc:
            if not self.repeat:  # a deferred sensor fails with the reason
                return {"status": ERROR, "contract_id": self.watch.contract_id, "message": str(exc)}
            # a watcher keeps watching: the producer (or the mount) can fix the landing without a redeploy
            self.log.error("contract %s: %s; waiting for a landing the gate can read", self.watch.contract_id, exc)
            return None
        if batch is None or batch.submission_id == await self.fired():
            return None
        if await asyncio.to_thread(gated, self.watch, batch.submission_id):
            self.log.info("contract %s: submission %s at the landing was gated already", batch.contract_id,
                          batch.submission_id)
            self.last_fired = batch.submission_id  # no need to ask the decision log again
            return None
        self.last_fired = batch.submission_id
        self.log.info("contract %s: batch %s has landed", batch.contract_id, batch.submission_id)
        return {"status": LANDED, **batch.payload(), "object": self.watch.object_name}

    async def fired(self) -> str | None:
        """The last submission fired (or found gated), from the Asset's state store after a restart."""
        if self.last_fired is None and self.asset_state_store is not None:
            stored = await self.asset_state_store.aget(FIRED_KEY)
            self.last_fired = stored if isinstance(stored, str) else None  # a submission id, as persist writes it
            if self.last_fired is not None:
                self.log.info("contract %s: submission %s was fired before this trigger started; waiting for a "
                              "new batch", self.watch.contract_id, self.last_fired)
        return self.last_fired

    async def persist(self, submission_id: str) -> None:
        """Keep the fired submission in the Asset's state store, for the next triggerer that runs this watcher."""
        if self.asset_state_store is not None:
            await self.asset_state_store.aset(FIRED_KEY, submission_id)
