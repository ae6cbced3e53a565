"""Rows of a small, unpartitioned Delta table with pyarrow: the decision table, read without a JVM.

Only the live files of the current snapshot are read, so rows of removed files never show.
Columns are selected by their physical names and returned under their logical names; a column
a file lacks (added to the table later) reads as NULL.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from contract_gate.freshness.delta_log import DeltaLog, DeltaLogError


def read_rows(location: str, columns: list[str], equals: tuple[str, str] | None = None) -> list[dict]:
    """The rows of the table at ``location`` (``[]`` when it does not exist yet), optionally only
    those where column ``equals[0]`` has the value ``equals[1]``."""
    log = DeltaLog(location)
    if not log.exists():
        return []
    snapshot = log.snapshot()
    if snapshot.partition_columns:
        raise DeltaLogError(f"{location}: reading partitioned tables without Spark is not supported")
    known = {f["name"] for f in snapshot.fields}
    logical = {snapshot.physical_name(c): c for c in columns if c in known}
    rows = []
    for live in snapshot.files:
        table = _plain_strings(log.read_parquet(log.file_path(live), list(logical)))
        if equals is not None:
            name = snapshot.physical_name(equals[0])
            if name not in table.column_names:
                continue
            table = table.filter(pc.equal(table[name], equals[1]))
        table = table.rename_columns([logical[name] for name in table.column_names])
        rows += [{**dict.fromkeys(columns), **row} for row in table.to_pylist()]
    return rows


def _plain_strings(table: pa.Table) -> pa.Table:
    """delta-rs writes strings as ``string_view``, which most pyarrow kernels (compare, take)
    do not accept yet: read them as plain strings."""
    schema = pa.schema([f.with_type(pa.string()) if f.type == pa.string_view() else f for f in table.schema])
    return table.cast(schema) if schema != table.schema else table
