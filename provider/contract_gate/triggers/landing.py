"""Wait in the triggerer for a new batch at a contract's landing (:mod:`contract_gate.landing_batches`).

One trigger, two uses:

* a deferred :class:`~contract_gate.sensors.landing.ContractLandingSensor` (``repeat=False``):
  one event, then the trigger ends;
* the ``AssetWatcher`` of an event-driven gate DAG (``repeat=True``, see
  :mod:`contract_gate.dags.gate_schedule`): an event for every new batch, for as long as the DAG is
  deployed; each event becomes an Asset event that starts the gate, with no worker slot waiting.

The same batch fires once per gate run it needs: a batch whose submission already has a final
decision is skipped, and the trigger remembers the last submission it fired (and how many of
its runs had failed then) so a batch whose gate run has not decided yet does not fire again.
A batch whose run then ends without a final decision (a ``failed`` record: a stopped worker, a
lost server) fires again, until it has a final decision or ``runs_per_batch`` runs have failed
(:mod:`contract_gate.contract.retry_policy`). As an Asset watcher it keeps that memory in the Asset's state
store (``asset_state_store``, kept in Airflow's database) once the triggerer holds the event, so
a restarted or moved triggerer remembers it too.

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

from contract_gate.contract.settings import DEFAULT_POLL_SECONDS, DEFAULT_SETTLE_SECONDS
from contract_gate.landing_batches import Watch, alanded_batch, gate_runs
from contract_gate_plan.landing_files import LandingRefused

LANDED = "landed"
ERROR = "error"
FIRED_KEY = "last_fired_submission"  # in the watched Asset's state store
FAILED_KEY = "failed_runs_when_fired"  # how many of its runs had failed when it fired (a count, as text)


class LandingTrigger(BaseEventTrigger):
    """Fires ``{"status": "landed", contract_id, object, submission_id, landing, kind, files, delta_version}``
    when a batch that was not gated yet has landed and settled.

    :param contract_id, landing, decisions, marker, settle_seconds, connection_id, object_name, sole_object,
        runs_per_batch: the :class:`~contract_gate.landing_batches.Watch` (plan addresses, JSON values);
        ``runs_per_batch``: as an Asset watcher, how many failed runs a batch gets before it is not
        fired again (:class:`~contract_gate.contract.retry_policy.RetryPolicy`).
    :param poll_seconds: how often to look.
    :param repeat: keep watching after an event (an Asset watcher) instead of ending.
    """

    def __init__(self, contract_id: str, landing: dict, decisions: dict, marker: str | None = None,
                 settle_seconds: int = DEFAULT_SETTLE_SECONDS, connection_id: str | None = None,
                 poll_seconds: float = DEFAULT_POLL_SECONDS, repeat: bool = False, object_name: str | None = None,
                 sole_object: bool = True, runs_per_batch: int = 1) -> None:
        super().__init__()
        self.watch = Watch(contract_id, dict(landing), dict(decisions), marker, int(settle_seconds), connection_id,
                           object_name, sole_object, int(runs_per_batch))
        self.poll_seconds = poll_seconds
        self.repeat = repeat
        self.last_fired: str | None = None
        self.failed_when_fired = 0
        self.settled: str | None = None  # the fired submission, once it is final or out of runs

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
                await self.persist(event["submission_id"], self.failed_when_fired)
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
        if batch is None or batch.submission_id == self.settled:
            return None
        again = batch.submission_id == await self.fired()
        if again and not self.repeat:
            return None
        runs = await asyncio.to_thread(gate_runs, self.watch, batch.submission_id)
        if runs.final:
            if not again:
                self.log.info("contract %s: submission %s at the landing was gated already", batch.contract_id,
                              batch.submission_id)
            self.last_fired = self.settled = batch.submission_id  # no need to ask the decision log again
            return None
        if again and runs.failed <= self.failed_when_fired:
            return None  # its run has not ended yet
        if runs.failed >= self.watch.runs_per_batch:
            self.log.error("contract %s: submission %s failed in %d runs (runs per batch: %d); it is not gated again "
                           "by itself: fix the cause and re-run it, or land a new batch", batch.contract_id,
                           batch.submission_id, runs.failed, self.watch.runs_per_batch)
            self.last_fired = self.settled = batch.submission_id
            return None
        self.last_fired, self.failed_when_fired = batch.submission_id, runs.failed
        if again:
            self.log.warning("contract %s: the run of batch %s ended without a final decision; gating it again "
                             "(run %d of %d)", batch.contract_id, batch.submission_id, runs.failed + 1,
                             self.watch.runs_per_batch)
        else:
            self.log.info("contract %s: batch %s has landed", batch.contract_id, batch.submission_id)
        return {"status": LANDED, **batch.payload(), "object": self.watch.object_name}

    async def fired(self) -> str | None:
        """The last submission fired (or found gated), from the Asset's state store after a restart."""
        if self.last_fired is None and self.asset_state_store is not None:
            stored = await self.asset_state_store.aget(FIRED_KEY)
            self.last_fired = stored if isinstance(stored, str) else None  # a submission id, as persist writes it
            failed = await self.asset_state_store.aget(FAILED_KEY)
            self.failed_when_fired = int(failed) if isinstance(failed, str) and failed.isdigit() else 0
            if self.last_fired is not None:
                self.log.info("contract %s: submission %s was fired before this trigger started; waiting for a "
                              "new batch", self.watch.contract_id, self.last_fired)
        return self.last_fired

    async def persist(self, submission_id: str, failed_runs: int) -> None:
        """Keep the fired submission (and its failed runs then) in the Asset's state store, for the
        next triggerer that runs this watcher."""
        if self.asset_state_store is not None:
            await self.asset_state_store.aset(FAILED_KEY, str(failed_runs))
            await self.asset_state_store.aset(FIRED_KEY, submission_id)
