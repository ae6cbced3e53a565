"""Rows of a small Delta table with pyarrow: the decision table, read without a JVM.

Only the live files of the current snapshot are read, so rows of removed files never show.
Columns are selected by their physical names and returned under their logical names; a column
a file lacks (added to the table later) reads as NULL.

A read for some values of one column (``where``) opens only the files that can hold them: on a
partition column the partition value decides, on any other column the file's min/max
statistics (issue 18: the decision table is partitioned by contract, and one of the earlier,
unpartitioned layout still carries per-file ``contract_id`` statistics). Partition columns are
not stored in the files; their values come from the log. Only string partition columns are
supported (the decision table's ``contract_id``).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc

from contract_gate.freshness.delta_log import DeltaLog, DeltaLogError, LiveFile, Snapshot

# Writers truncate string statistics (Spark and delta-rs: to 32 characters), so a maximum that
# long may stand for a longer, larger value: it bounds nothing.
TRUNCATED_STRING_STATS = 32


def read_rows(location: str, columns: list[str], where: tuple[str, set[str]] | None = None,
              newest: tuple[str, int] | None = None) -> list[dict]:
    """The rows of the table at ``location`` (``[]`` when it does not exist yet), optionally only
    those whose column ``where[0]`` holds one of the values ``where[1]``. With ``where``,
    ``newest`` = (column, n) keeps of each file at most the n rows with the largest ``column``
    per ``where[0]`` value: a superset of each value's n newest rows, which the caller picks."""
    log = DeltaLog(location)
    if not log.exists():
        return []
    snapshot = log.snapshot()
    _check_partitions(location, snapshot)
    names = list(dict.fromkeys([*columns, *([where[0]] if where else [])]))
    known = {f["name"] for f in snapshot.fields}
    partitions = [c for c in snapshot.partition_columns if c in names]
    stored = {snapshot.physical_name(c): c for c in names if c in known and c not in partitions}
    rows = []
    for live in snapshot.files:
        if where is not None and not _may_hold(snapshot, live, *where):
            continue
        table = _plain_strings(log.read_parquet(log.file_path(live), list(stored)))
        table = table.rename_columns([stored[name] for name in table.column_names])
        for column in partitions:
            value = live.partition_values.get(snapshot.physical_name(column))
            table = table.append_column(column, pa.array([value] * table.num_rows, pa.string()))
        if where is not None:
            if where[0] not in table.column_names:
                continue  # a file written before the column existed: no row can match
            table = table.filter(pc.is_in(table[where[0]], value_set=pa.array(sorted(where[1]), pa.string())))
            if newest is not None:
                table = _newest_per_value(table, where[0], *newest)
        rows += [{column: row.get(column) for column in columns} for row in table.to_pylist()]
    return rows


def _newest_per_value(table: pa.Table, key: str, order: str, count: int) -> pa.Table:
    """At most ``count`` rows per ``key`` value, those with the largest ``order``: a status
    shows a contract's latest decisions, not the ten thousand before them."""
    parts = []
    for value in pc.unique(table[key]).to_pylist():
        part = table.filter(pc.equal(table[key], value))
        if part.num_rows > count:
            part = part.take(pc.sort_indices(part, sort_keys=[(order, "descending")])[:count])
        parts.append(part)
    return pa.concat_tables(parts) if parts else table


def _check_partitions(location: str, snapshot: Snapshot) -> None:
    for column in snapshot.partition_columns:
        if snapshot.column(column).get("type") != "string":
            raise DeltaLogError(f"{location}: reading a table partitioned by a non-string column ({column}) "
                                "without Spark is not supported")


def _may_hold(snapshot: Snapshot, live: LiveFile, column: str, values: set[str]) -> bool:
    """Whether ``live`` can hold a row whose ``column`` is one of ``values`` (when unsure: yes)."""
    physical = snapshot.physical_name(column)
    if column in snapshot.partition_columns:
        return live.partition_values.get(physical) in values
    if not live.stats:
        return True
    stats = json.loads(live.stats)
    low = (stats.get("minValues") or {}).get(physical)
    high = (stats.get("maxValues") or {}).get(physical)
    if not isinstance(low, str) or not isinstance(high, str):
        return True
    bounded = len(high) < TRUNCATED_STRING_STATS
    return any(low <= value and (not bounded or value <= high) for value in values)


def _plain_strings(table: pa.Table) -> pa.Table:
    """delta-rs writes strings as ``string_view``, which most pyarrow kernels (compare, take)
    do not accept yet: read them as plain strings."""
    schema = pa.schema([f.with_type(pa.string()) if f.type == pa.string_view() else f for f in table.schema])
    return table.cast(schema) if schema != table.schema else table
