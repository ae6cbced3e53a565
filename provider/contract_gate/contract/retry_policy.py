"""How a gate recovers from a fault by itself: each task's retries, and how many runs one batch gets.

A fault (a worker stopped by a service manager, a lost Spark server) fails a task; Airflow
retries it (``tasks`` times, ``delay_seconds`` apart). A run that still ends without a final
decision records a non-final ``failed`` decision, and the batch is gated again: by the landing
watcher (:mod:`contract_gate.triggers.landing`) or the next scheduled run
(:mod:`contract_gate.operators.submission`), until it has a final decision or ``runs_per_batch``
runs have failed; every ``failed`` decision alerts ``alerts.onRejection``, the last one saying the
retry cap is reached (:func:`contract_gate.operators.record.retry_cap_reached`). None of this can
publish twice: the publish step's Delta commit is idempotent (``txnAppId``/``txnVersion``) and a
publication whose record was lost is recovered from the target's tagged commits.

Each value: the contract's ``retries`` settings, else the deployment's ``[contract_gate]`` option
(:mod:`contract_gate.config`), else the built-in default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from contract_gate import config

_SETTINGS = {"tasks": ("tasks", "task_retries"), "delay_seconds": ("delaySeconds", "retry_delay_seconds"),
             "runs_per_batch": ("runsPerBatch", "runs_per_batch")}


@dataclass(frozen=True)
class RetryPolicy:
    tasks: int
    delay_seconds: int
    runs_per_batch: int

    @classmethod
    def of(cls, gate: Mapping[str, Any] | None) -> RetryPolicy:
        """The policy of a plan's gate settings (``plan.gate``)."""
        given = (gate or {}).get("retries") or {}
        values = {}
        for field, (key, option) in _SETTINGS.items():
            value = given.get(key)
            values[field] = int(value) if value is not None else _deployment(option)
        return cls(**values)

    def task_arguments(self) -> dict[str, Any]:
        """``retries`` and ``retry_delay`` for every task of a gate DAG."""
        return {"retries": self.tasks, "retry_delay": timedelta(seconds=self.delay_seconds)}


def _deployment(option: str) -> int:
    value = config.get(option)
    if value is None or not value.strip().isdigit():
        raise ValueError(f"{config.describe(option)}={value!r} must be a whole number of 0 or more")
    return int(value)
