"""What has landed at a contract's landing, without Spark: is there a batch, has it settled,
which submission would it be, and was that submission gated already.

One implementation for every waiter: the landing sensor's poke mode, its deferred trigger and
the Asset watcher that starts an event-driven gate (:mod:`contract_gate.triggers.landing`).

* A **file landing** has landed when its folder holds data files and either the ``marker``
  (e.g. ``_SUCCESS``, written last by the producer) is there, or nothing in the folder has
  changed for ``settle_seconds``: the newest modification time of its files and folders is
  that old. Stateless on purpose, so a rescheduled sensor or a restarted triggerer judges the
  same way. A producer that copies with preserved times (``cp -p``) should write a marker.
* A **Delta landing** has landed when it has a committed version (commits are atomic); a
  catalog table's version is read from its Delta log where the catalog gives its location, else
  asked of the catalog's SQL warehouse (:mod:`contract_gate.landing_tables`); one in S3 is read
  from its Delta log with the credentials of ``landing.connection``.
* An **object-storage landing** (``s3://``...) follows the file rules on one listing of its
  prefix (:mod:`contract_gate.landing_objects`): the marker is an object of that name directly
  below the prefix, and settling goes by the objects' modification times. The listing's keys,
  sizes and ETags are the batch's identity; no object is read.
* The batch's identity is the submission id the gate itself will derive
  (:func:`contract_gate.submission.derive_submission_id`: file contents, or the Delta version),
  so "already gated" means the decision log holds a final decision for that id, and a producer
  that re-copies the same files does not start a second gate.

The landing text comes from a contract, so it is hostile: its address was checked by the
compiler (under the server's root); here nothing outside the landing folder is opened, and a
symbolic link or a special file (a FIFO, a device) in the folder is refused instead of read
(:mod:`contract_gate_plan.landing_files`, as the gate itself does), since hashing ``/dev/zero`` would
never end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from contract_gate.contract.retry_policy import RetryPolicy
from contract_gate.contract.settings import DEFAULT_SETTLE_SECONDS
from contract_gate.decisions import decision_store, failed_count
from contract_gate.decisions.record import ObjectScope
from contract_gate.landing_objects import StoredObject, alist_objects, is_object_store, list_objects, objects_digest
from contract_gate.landing_tables import catalog_version
from contract_gate.submission import (
    delta_digest,
    derive_submission_id,
    object_of,
    object_store_delta_version,
    submission_id_of,
)
from contract_gate_plan.addresses import Address
from contract_gate_plan.model import Plan
from contract_gate_plan.landing_files import Entry, LandingRefused, landing_entries



@dataclass(frozen=True)
class Watch:
    """What to watch, as plain JSON values (a trigger's serialised kwargs).

    ``landing`` and ``decisions`` are the plan's addresses, resolved where the watch runs (the
    worker or the triggerer, against the gate's home, ``contract_gate.config.gate_home``)."""

    contract_id: str
    landing: dict
    decisions: dict
    marker: str | None = None
    settle_seconds: int = DEFAULT_SETTLE_SECONDS
    connection_id: str | None = None  # a catalog decision table's Databricks connection
    object_name: str | None = None  # the schema object whose landing this is
    sole_object: bool = True  # the contract's only object (its records from before ``object`` count)
    runs_per_batch: int = 1  # failed runs after which a watcher stops firing a batch (``retry_policy``)

    @classmethod
    def from_plan(cls, plan: Plan, marker: str | None = None, settle_seconds: int | None = None) -> Watch:
        """The watch of ``plan``'s landing: ``marker`` and ``settle_seconds`` when given, else the
        contract's ``schedule.onLanding`` settings, else no marker and the default settle time.
        The addresses travel as the plan writes them (trigger arguments are JSON)."""
        if not plan.gated:
            raise ValueError(f"contract {plan.contract_id!r} has no contractGate settings: no landing to watch")
        # a cron gate's sensor watches too: its schedule names no landing settings
        configured = (plan.schedule.get("onLanding") or {}) if isinstance(plan.schedule, Mapping) else {}
        written = plan.document["tables"]
        return cls(
            contract_id=plan.contract_id,
            landing=dict(written["landing"]),
            decisions=dict(written["decisions"]),
            marker=marker if marker is not None else configured.get("marker"),
            settle_seconds=int(settle_seconds if settle_seconds is not None
                               else configured.get("settleSeconds", DEFAULT_SETTLE_SECONDS)),
            connection_id=plan.connection_id,
            object_name=plan.object,
            sole_object=plan.names.sole,
            runs_per_batch=RetryPolicy.of(plan.gate).runs_per_batch,
        )

    def as_kwargs(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Batch:
    """A landed batch: the submission id the gate will give it, and what it is made of."""

    contract_id: str
    submission_id: str
    landing: str
    kind: str  # "files" | "delta" | "objects"
    files: int | None = None
    delta_version: int | None = None
    object: str | None = None  # the schema object whose landing it is

    def payload(self) -> dict[str, Any]:
        """The event / XCom: identities and counts only, never a data value."""
        return asdict(self)


def _delta_batch(watch: Watch, location: str, version: int | None, object_name: str | None) -> Batch | None:
    """The batch of a Delta landing at ``version`` (None: no commit yet), its submission id from
    that same version, so the id and the version the gate pins cannot come from two reads."""
    if version is None:
        return None
    submission_id = submission_id_of(watch.contract_id, delta_digest(version), object_name=object_name)
    return Batch(watch.contract_id, submission_id, location, "delta", delta_version=version, object=watch.object_name)


def landed_batch(watch: Watch, now: float | None = None) -> Batch | None:
    """The batch that has landed and settled at ``watch``'s landing now, or None.

    :raises LandingRefused: the landing is a catalog table that is not Delta, holds a link or
        special file, or is a Delta table that cannot be read."""
    landing = Address.from_document(watch.landing)
    object_name = object_of(watch.object_name, watch.sole_object)
    if is_object_store(landing) and landing.format == "delta":
        return _delta_batch(watch, landing.location, object_store_delta_version(landing), object_name)
    if is_object_store(landing):
        return landed_objects(watch, landing, list_objects(landing), now)
    if not landing.is_path and landing.format == "delta":
        return _delta_batch(watch, landing.location, catalog_version(landing, connection_id=watch.connection_id),
                            object_name)
    if not landing.is_path or "://" in landing.location:
        raise LandingRefused(f"contract {watch.contract_id}: landing {landing.location!r} "
                             "is neither a local folder, object storage nor a Delta catalog table; it cannot be "
                             "watched without Spark")
    folder = Path(landing.location)
    if landing.format == "delta":
        # deltalake and pyarrow only for a Delta landing: DAG files import this module (the landing
        # sensor, an onLanding gate's Asset watcher)
        from contract_gate.delta_tables import UnreadableTable, newest_version

        try:
            version = newest_version(str(folder)) if folder.is_dir() else None
        except UnreadableTable as exc:
            raise LandingRefused(f"contract {watch.contract_id}: Delta landing {exc}") from exc
        return _delta_batch(watch, str(folder), version, object_name)
    entries = listing(folder, watch.contract_id)
    data = [entry.relative for entry in entries if entry.is_file and not entry.skipped]
    if not data:
        return None
    if watch.marker is not None:
        if not (folder / watch.marker).is_file():
            return None
    else:
        newest = max(entry.mtime for entry in entries)
        if (time.time() if now is None else now) - newest < watch.settle_seconds:
            return None
    submission_id = derive_submission_id(watch.contract_id, landing, object_name=object_name)
    return Batch(watch.contract_id, submission_id, str(folder), "files", files=len(data), object=watch.object_name)


async def alanded_batch(watch: Watch, now: float | None = None) -> Batch | None:
    """:func:`landed_batch` for the triggerer's event loop: an object-storage landing is listed
    with fsspec's async listing, a local one is read in a thread."""
    landing = Address.from_document(watch.landing)
    if is_object_store(landing) and landing.format != "delta":
        return landed_objects(watch, landing, await alist_objects(landing), now)
    return await asyncio.to_thread(landed_batch, watch, now)  # a Delta log is read with delta-rs


def landed_objects(watch: Watch, landing: Address, objects: list[StoredObject], now: float | None) -> Batch | None:
    """The batch that one listing of an object-storage landing shows as landed and settled, or None."""
    data = [stored for stored in objects if not stored.skipped]
    if not data:
        return None
    if watch.marker is not None:
        if not any(stored.relative == watch.marker for stored in objects):
            return None
    else:
        times = [stored.mtime for stored in objects if stored.mtime is not None]
        if len(times) < len(objects):
            raise LandingRefused(f"contract {watch.contract_id}: landing {landing.location} lists objects without a "
                                 "modification time; set schedule.onLanding.marker")
        if (time.time() if now is None else now) - max(times) < watch.settle_seconds:
            return None
    submission_id = submission_id_of(watch.contract_id, objects_digest(objects),
                                     object_name=object_of(watch.object_name, watch.sole_object))
    return Batch(watch.contract_id, submission_id, landing.location, "objects", files=len(data),
                 object=watch.object_name)


def listing(folder: Path, contract_id: str) -> list[Entry]:
    """The landing folder and everything below it (:func:`contract_gate_plan.landing_files.landing_entries`);
    [] when the folder does not exist. A landing that is a single file is refused: a marker and
    settling need a folder."""
    try:
        entries = landing_entries(folder)
    except LandingRefused as exc:
        raise LandingRefused(f"contract {contract_id}: {exc}") from exc
    if entries and entries[0].is_file:
        raise LandingRefused(f"contract {contract_id}: landing {folder} is not a folder")
    return entries


def gated(watch: Watch, submission_id: str) -> bool:
    """Whether the decision log holds a final decision for ``submission_id`` (of the watched object)."""
    return gate_runs(watch, submission_id).final


@dataclass(frozen=True)
class GateRuns:
    """What the decision log says about one submission's runs so far."""

    final: bool  # it has its final decision
    failed: int  # runs that ended with a non-final ``failed`` decision


def gate_runs(watch: Watch, submission_id: str) -> GateRuns:
    """``submission_id``'s runs (of the watched object), from one read of the decision log."""
    store = decision_store(Address.from_document(watch.decisions), watch.connection_id, {"decisions": watch.decisions})
    scope = ObjectScope(watch.object_name, watch.sole_object) if watch.object_name else None
    records = store.records(submission_id=submission_id, contract_id=watch.contract_id, scope=scope)
    return GateRuns(any(record.final for record in records), failed_count(records))
