"""The gate DAG's schedule from the gate settings' ``schedule``.

A cron expression or preset is used as it is. ``schedule: {onLanding: {...}}`` (or ``"@landing"``)
makes the gate event-driven with Airflow 3's Asset watchers: the DAG is scheduled on an Asset for
the contract's landing, watched by a :class:`~contract_gate.triggers.landing.LandingTrigger` in
the triggerer, so a landed batch starts the gate and no worker slot waits for it. Each new batch
fires one Asset event (see the trigger for why the same batch never fires twice); Airflow folds
events that arrive before the run starts into that run, and ``max_active_runs=1`` queues the rest.

Called by :func:`contract_gate.dags.contract_dags.contract_dag` while a DAG file is parsed: it builds
objects only (the trigger reads nothing until the triggerer runs it), and its kwargs are the
plan's addresses, so they stay the same from parse to parse and Airflow keeps one watcher.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from airflow.sdk import Asset, AssetAny, AssetWatcher

from contract_gate.asset_uris import table_uri
from contract_gate.landing_batches import Watch
from contract_gate.triggers.landing import LandingTrigger

if TYPE_CHECKING:
    from contract_gate_plan.model import Plan


def gate_schedule(plans: list[Plan]):
    """``DAG(schedule=...)`` for the gates of ``plans`` (one per gated object of a contract): the
    setting itself, or the landing Asset (any of them, for several objects that start on landing).
    One DAG has one schedule, so its objects must agree on a cron or all start on landing."""
    schedules = [plan.schedule for plan in plans]
    if all(isinstance(schedule, Mapping) for schedule in schedules):
        assets = [landing_asset(plan) for plan in plans]
        if len(assets) == 1:
            return assets[0]
        return AssetAny(*assets)
    if len({str(schedule) for schedule in schedules}) > 1:
        raise ValueError("the gated objects of one contract share its DAG, so they need one schedule; found "
                         + ", ".join(f"{plan.object!r}: {schedule!r}" for plan, schedule in zip(plans, schedules)))
    return schedules[0]


def landing_asset(plan: Plan):
    """The Asset of ``plan``'s landing, watched for new batches."""
    names, landing, schedule = plan.names, plan.require_tables().landing, plan.schedule
    if landing is None or not isinstance(schedule, Mapping):
        raise ValueError(f"object {plan.object!r}: only a gate with a landing and schedule onLanding watches it")
    if not landing.is_path:  # a catalog table, as the target's Asset names one
        uri = table_uri(landing.location)
    else:
        uri = landing.location if "://" in landing.location else Path(landing.location).as_uri()
    trigger = LandingTrigger(**Watch.from_plan(plan).as_kwargs(),
                             poll_seconds=schedule["onLanding"]["pollSeconds"], repeat=True)
    return Asset(name=f"{names.asset}.landing", uri=uri,
                 group="contract_gate", watchers=[AssetWatcher(name=f"{names.gate}_landing", trigger=trigger)])
