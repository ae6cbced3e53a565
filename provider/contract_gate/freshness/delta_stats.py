"""The newest business value in a Delta snapshot, from file statistics alone.

Every live file's ``maxValues`` for the SLA column (or its partition value, when the table is
partitioned by that column) gives max(column) without reading a single data file. A file whose
statistics lack the column makes the answer unknowable from the log: :class:`StatsMissing` is
raised and the caller falls back to the decision table. Delta collects statistics for the first
32 columns unless ``delta.dataSkippingStatsColumns`` / ``delta.dataSkippingNumIndexedCols`` say
otherwise, so the publish step pins the SLA column with ``delta.dataSkippingStatsColumns``.
"""

from __future__ import annotations

import json
from datetime import date, datetime

from contract_gate.freshness.business_time import parse_value
from contract_gate.freshness.delta_log import Snapshot


class StatsMissing(Exception):
    """A live file has no statistics for the SLA column."""


def max_business_value(snapshot: Snapshot, column: str, column_type: str) -> date | datetime | None:
    """max(column) over the live files; None when the table holds no non-null value."""
    physical = snapshot.physical_name(column)
    if column in snapshot.partition_columns:
        texts = [f.partition_values.get(physical) for f in snapshot.files]
    else:
        texts = [_file_max(f.stats, physical, f.path) for f in snapshot.files]
    values = [parse_value(text, column_type) for text in texts if text is not None]
    return max(values, default=None)


def _file_max(stats_json: str | None, physical: str, path: str) -> str | None:
    if not stats_json:
        raise StatsMissing(f"data file {path} has no statistics")
    stats = json.loads(stats_json)
    rows = stats.get("numRecords")
    value = (stats.get("maxValues") or {}).get(physical)
    if value is not None or rows == 0:
        return value
    if rows is not None and (stats.get("nullCount") or {}).get(physical) == rows:
        return None  # every row of this file is NULL in the column
    raise StatsMissing(f"data file {path} has no statistics for column {physical!r}")
