"""Has a contract's target accepted data for a business date, or is it fresh within its SLA?

What :class:`~contract_gate.sensors.accepted_data_sensor.AcceptedDataSensor` and its trigger wait for,
answered without a JVM by the freshness package's readers (:mod:`contract_gate.freshness`):

* **a business date**: a published decision (``published`` or ``split``: rows reached the
  target; a quarantined one never counts) whose latest business date, the maximum of the SLA's
  column over the rows it published, is on or after that date. A date is compared with the
  date of that value; a timestamp with the instant up to which the data is complete
  (:func:`contract_gate.freshness.business_time.as_of`).
* **no business date**: the freshness check's own verdict (newest accepted value within the
  SLA), exactly as the contract's freshness DAG computes it.

The result names decisions and ages only: the business value itself is not repeated (its column
may be classified).
"""

from __future__ import annotations

from datetime import date, datetime, timezone

from contract_gate.freshness.business_time import as_of, parse_value
from contract_gate.freshness.status import FRESH, evaluate
from contract_gate_plan.model import Plan


def business_date_value(value: str | date | datetime) -> date | datetime:
    """A date (``2025-03-02``) or an instant (``2025-03-02T06:00:00Z``; UTC when no zone is given)."""
    if isinstance(value, (date, datetime)):
        return parse_value(value.isoformat(), "timestamp" if isinstance(value, datetime) else "date")
    text = str(value).strip()
    try:
        return parse_value(text, "timestamp" if "T" in text or " " in text else "date")
    except ValueError:
        raise ValueError(f"business_date {text!r} is not an ISO date (2025-03-02) or timestamp "
                         "(2025-03-02T06:00:00Z)") from None


def accepted_data(plan: Plan, business_date: str | date | datetime | None = None,
                  now: datetime | None = None) -> dict | None:
    """What releases a consumer (see the module doc), or None while it must wait.

    :raises ValueError: the contract has no gate settings or no SLA column to date its data by,
        or (with a business date) its decision table is a catalog table."""
    contract_id = plan.contract_id
    freshness = plan.freshness
    if not plan.gated or freshness is None:
        raise ValueError(f"contract {contract_id!r} has no gate settings or no freshness/latency SLA "
                         "(slaProperties with element table.column): nothing dates its accepted data")
    if business_date is None:
        return _fresh(plan, now or datetime.now(timezone.utc))
    if not plan.require_tables().require_decisions().is_path:
        raise ValueError(f"contract {contract_id!r}: its decision table is a catalog table, which is read without "
                         "Spark only through a SQL warehouse; wait for freshness (no business_date) instead")
    # deltalake only when the sensor checks: DAG files import this module (AcceptedDataSensor's trigger)
    from contract_gate.freshness.decision_log import accepted_decisions

    wanted = business_date_value(business_date)
    for row in accepted_decisions(plan):  # newest first
        latest = row["latest_business_date"]
        if latest is not None and _covers(parse_value(str(latest), freshness.column_type), wanted):
            decided = row["decided_at"]
            return {"contract_id": contract_id, "object": plan.object, "business_date": wanted.isoformat(),
                    "reason": "published",
                    "submission_id": row["submission_id"], "outcome": row["outcome"],
                    "decided_at": decided.isoformat() if hasattr(decided, "isoformat") else decided}
    return None


def _covers(latest: date | datetime, wanted: date | datetime) -> bool:
    if isinstance(wanted, datetime):
        return as_of(latest) >= wanted
    return (latest.astimezone(timezone.utc).date() if isinstance(latest, datetime) else latest) >= wanted


def _fresh(plan: Plan, now: datetime) -> dict | None:
    from contract_gate.freshness.latest import latest_accepted  # deltalake: as in accepted_data()

    record = evaluate(plan, latest_accepted(plan), now)
    if record["state"] != FRESH:
        return None
    return {"contract_id": record["contract_id"], "object": record["object"], "reason": "fresh",
            "age_seconds": record["age_seconds"],
            "sla_seconds": record["sla_seconds"], "submission_id": record["latest_accepted_submission"]}
