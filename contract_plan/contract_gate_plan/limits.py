"""The gate's time budgets, shared by both sides: the defaults of the gate settings
``limits.validationSeconds`` and ``limits.querySeconds``, the limits a plan carries, and the
record a job leaves when a budget ran out.

A contract is untrusted: one ``type: sql`` query can keep a shared Spark cluster busy for hours.
So every validation, and every contract query inside it, runs under a budget that the Spark side
enforces itself (``contract_gate_spark.runtime.budget``). When one runs out, or the job's query is
cancelled from outside (its task was killed), the job writes a stop record (``stopped.json``
beside the report) and fails; the Airflow side turns that record into a ``failed`` decision,
not final, whose reason says so and names what was running.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from contract_gate_plan.restricted import write_private_text

DEFAULT_VALIDATION_SECONDS = 1800
"""A whole validation: the documented batches (10M rows on a 2-vCPU worker) take minutes."""
DEFAULT_QUERY_SECONDS = 300
"""One ``type: sql`` query: a count or a join with a reference table on such a batch."""

REASON = "time budget exceeded"
KILLED = "stopped by a kill or cancel"
"""The reason of a stop from outside the job: its task was killed, or its query cancelled on the cluster."""
KILLED_SETTING = "no limit had run out"
STOP_RECORD = "stopped.json"


@dataclass(frozen=True)
class Limits:
    """The effective budgets of a plan, in seconds."""

    validation_seconds: int = DEFAULT_VALIDATION_SECONDS
    query_seconds: int = DEFAULT_QUERY_SECONDS


def limits_of(gate: Mapping[str, Any] | None) -> Limits:
    """The limits in a plan's ``gate`` section (``limits: {validationSeconds, querySeconds}``);
    the defaults for a plan without gate settings (compiled for a notebook)."""
    given = (gate or {}).get("limits") or {}
    return Limits(int(given.get("validationSeconds", DEFAULT_VALIDATION_SECONDS)),
                  int(given.get("querySeconds", DEFAULT_QUERY_SECONDS)))


def check_limits(gate: Any) -> str | None:
    """What is wrong with a plan's ``gate.limits``, or None: each limit a whole number of seconds above 0."""
    limits = (gate or {}).get("limits") if isinstance(gate, dict) else None
    if limits is None:
        return None
    if not isinstance(limits, dict):
        return "plan.gate.limits must be an object"
    for key in ("validationSeconds", "querySeconds"):
        value = limits.get(key)
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            return f"plan.gate.limits.{key} must be a whole number of seconds above 0"
    return None


@dataclass(frozen=True)
class Stop:
    """Why a job stopped before its verdict: ``running`` names the rule or pass (``rule 'x'``),
    ``setting`` the limit that ran out (``limits.querySeconds``)."""

    running: str
    seconds: int
    setting: str
    reason: str = REASON

    def describe(self) -> str:
        return f"{self.reason}: {self.running} was still running after {self.seconds} s ({self.setting})"


def write_stop(folder: str | Path, stop: Stop) -> Path:
    path = Path(folder) / STOP_RECORD
    write_private_text(path, json.dumps(asdict(stop), sort_keys=True) + "\n")
    return path


def clear_stop(folder: str | Path) -> None:
    """Remove an earlier attempt's stop record, before a job that may write one starts."""
    (Path(folder) / STOP_RECORD).unlink(missing_ok=True)


def read_stop(folder: str | Path) -> Stop | None:
    """The stop record in ``folder``, or None when the job left none."""
    try:
        record = json.loads((Path(folder) / STOP_RECORD).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return Stop(str(record["running"]), int(record["seconds"]), str(record["setting"]), str(record["reason"]))
