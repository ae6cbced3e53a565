"""Rows of a small, unpartitioned Delta table with pyarrow: the decision table, read without a JVM.

Only the live files of the current snapshot are read, so rows of removed files never show.
Columns are selected by their physical names and returned under their logical names; a column
a file lacks (added to the table later) reads as NULL.
"""

from __future__ import annotations

import pyarrow.dataset as ds

from contract_gate.freshness.delta_log import DeltaLog, DeltaLogError


def read_rows(location: str, columns: list[str], equals: tuple[str, str] | None = None) -> list[dict]:
    """The rows of the table at ``location`` (``[]`` when it does not exist yet), optionally only
    those where column ``equals[0]`` has the value ``equals[1]``."""
    log = DeltaLog(location)
    if not log.exists():
        return []
    snapshot = log.snapshot()
    if not snapshot.files:
        return []
    if snapshot.partition_columns:
        raise DeltaLogError(f"{location}: reading partitioned tables without Spark is not supported")
    known = [c for c in columns if any(f["name"] == c for f in snapshot.fields)]
    physical = {snapshot.physical_name(c): c for c in known}
    paths = [log.file_path(f) for f in snapshot.files]
    # The newest file has every column the table has gained, so its schema reads them all.
    schema = ds.dataset(paths[-1], format="parquet", filesystem=log.fs).schema
    dataset = ds.dataset(paths, format="parquet", filesystem=log.fs, schema=schema)
    wanted = [p for p in physical if p in schema.names]
    condition = None
    if equals is not None:
        name, value = equals
        condition = ds.field(snapshot.physical_name(name)) == value
    table = dataset.to_table(columns=wanted, filter=condition)
    rows = table.rename_columns([physical[p] for p in wanted]).to_pylist()
    for row in rows:
        for column in columns:
            row.setdefault(column, None)
    return rows
