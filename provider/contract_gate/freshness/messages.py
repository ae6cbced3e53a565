"""What a freshness alert says: contract, age, SLA, last accepted submission, nothing else.

The payload goes to notifiers as ``context["contract_gate"]``; its ``title`` and ``message``
are ready-made text for notifier arguments such as ``text: "{{ contract_gate.message }}"``.
The business date is the only data value it carries, and only when its column is not
classified (the status record already withholds it then).
"""

from __future__ import annotations

from contract_gate.freshness.business_time import render_duration
from contract_gate.freshness.episodes import RECOVERY, STALE_ALERT

PAYLOAD_KEYS = (
    "contract_id", "contract_version", "environment", "state", "age_seconds", "sla_seconds",
    "latest_accepted_date", "latest_accepted_submission", "target_version", "checked_at", "state_since",
)


def freshness_payload(record: dict, kind: str, stale_since: str | None = None) -> dict:
    payload = {"event": f"freshness_{kind}", **{key: record.get(key) for key in PAYLOAD_KEYS}}
    where = f"contract {record['contract_id']!r}" + (f" (environment {record['environment']})" if record["environment"] else "")
    sla = record["sla"]
    sla_text = f"the {sla['property']} SLA of {sla['value']} {sla['unit']} ({record['sla_seconds']} s)"
    if record["age_seconds"] is None:
        data = "there is no accepted data yet"
    else:
        date = record["latest_accepted_date"] or "(withheld: classified column)"
        data = f"the latest accepted {sla['column']}, {date}, is {render_duration(record['age_seconds'])} old"
    submission = record["latest_accepted_submission"] or "none"
    if kind == STALE_ALERT:
        payload["title"] = f"contract-gate: {record['contract_id']} is stale"
        payload["message"] = (f"Accepted data of {where} is STALE: {data}, beyond {sla_text}. "
                              f"Last accepted submission: {submission}. Checked at {record['checked_at']}.")
    elif kind == RECOVERY:
        payload["title"] = f"contract-gate: {record['contract_id']} is fresh again"
        payload["message"] = (f"Accepted data of {where} is FRESH again: {data}, within {sla_text}. "
                              f"Last accepted submission: {submission}. Stale since {stale_since}.")
    else:
        raise ValueError(f"unknown notice kind {kind!r}")
    return payload
