"""What the latest accepted data of a target is, whichever source told it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

SOURCE_DELTA_LOG = "delta_log"
SOURCE_DECISIONS = "decisions"
SOURCE_WAREHOUSE = "databricks_sql"


@dataclass(frozen=True)
class LatestAccepted:
    value: date | datetime | None  # None: no accepted row has a value yet
    submission_id: str | None
    target_version: int | None
    source: str
    note: str | None = None  # why a fallback source was used
