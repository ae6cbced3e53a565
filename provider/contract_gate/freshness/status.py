"""The freshness status record consumers read, and where it is kept.

One JSON file per gated object, ``<status dir>/<gate>.json`` (the gate's derived name,
``contract_gate_plan.names``: the contract id itself when it is a plain name), replaced atomically on
every check, plus ``<gate>.history.jsonl`` with one line per check (append-only). Plain JSON,
so a dashboard, a shell script or a consumer's own job reads it without Spark or Airflow.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path

from contract_gate.freshness.business_time import age_seconds, render
from contract_gate.freshness.latest_value import LatestAccepted
from contract_gate_plan.model import Plan
from contract_gate_plan.names import safe_name

STATUS_VERSION = 1
FRESH = "fresh"
STALE = "stale"


def evaluate(plan: Plan, latest: LatestAccepted, now: datetime) -> dict:
    """The record's description of the data: fresh or stale at ``now`` under the plan's SLA.

    No accepted value at all counts as stale: consumers have nothing within the SLA. The business
    date is the only data value shown, and not even that when its column is classified."""
    freshness = plan.require_freshness()
    sla = freshness.max_age_seconds
    age = age_seconds(latest.value, now) if latest.value is not None else None
    withheld = freshness.column in plan.classified_columns
    return {
        "status_version": STATUS_VERSION,
        "contract_id": plan.contract_id,
        "object": plan.object,
        "gate": plan.names.gate,
        "contract_version": plan.contract_version,
        "environment": plan.environment,
        "state": STALE if age is None or age > sla else FRESH,
        "age_seconds": age,
        "sla_seconds": sla,
        "sla": freshness.sla,
        "latest_accepted_date": None if withheld or latest.value is None else render(latest.value),
        "latest_accepted_date_withheld": withheld,
        "latest_accepted_submission": latest.submission_id,
        "target_version": latest.target_version,
        "source": latest.source,
        "source_note": latest.note,
        "checked_at": render(now),
    }


def sendable_age(record: dict) -> float | None:
    """The age of a status record that a metric may carry: none when the business-date column is
    classified (an age gives the date away, which the record withholds too)."""
    return None if record.get("latest_accepted_date_withheld") else record.get("age_seconds")


class StatusStore:
    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def current_path(self, gate: str) -> Path:
        return self.folder / f"{safe_name(gate)}.json"

    def history_path(self, gate: str) -> Path:
        return self.folder / f"{safe_name(gate)}.history.jsonl"

    def read(self, gate: str) -> dict | None:
        """The current record of ``gate`` (a plan's ``names.gate``)."""
        try:
            return json.loads(self.current_path(gate).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def history(self, gate: str) -> list[dict]:
        try:
            text = self.history_path(gate).read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def write(self, record: dict) -> None:
        """Append to the history, then atomically replace the current record (a reader never
        sees a half-written file)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        gate = record["gate"]
        line = json.dumps(record, sort_keys=True)
        with self.history_path(gate).open("a", encoding="utf-8") as history:
            history.write(line + "\n")
        descriptor, temporary = tempfile.mkstemp(dir=self.folder, prefix=f".{safe_name(gate)}.", suffix=".tmp")
        with os.fdopen(descriptor, "w", encoding="utf-8") as current:
            current.write(json.dumps(record, sort_keys=True, indent=2) + "\n")
        os.replace(temporary, self.current_path(gate))
