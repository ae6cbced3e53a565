"""Reading path-based Delta tables without a JVM, through ``deltalake``.

The Spark-free readers of Delta tables go through here: the freshness check (newest business
value, newest submission, version), ``contract-gate status`` (decision records), recovery (tagged
commit history, statistics at a version), submission identity (a Delta landing's version). The decision store reads back its own records on the
table it keeps open for writing (``contract_gate.decisions.delta_path``), with the same library.
The Delta protocol itself (checkpoints, log replay, column mapping, deletion vectors, reader
features) is ``deltalake``'s (delta-rs) job; this module only says which of its answers the
callers need and what a missing statistic means. Unity Catalog tables go through the Databricks
SQL hook (``contract_gate.freshness.databricks_sql``, ``contract_gate.decisions.unity_catalog``);
only a catalog landing's version is read here, at the location the catalog gives
(``contract_gate.landing_tables``).

One question ``deltalake`` does not answer: which files given commits wrote (a snapshot lists the
live files, not the commit that added each). The decision store needs it to make what a record
wrote owner-only without walking the whole table, so :func:`written_since` reads those commits'
own log entries; it is the only reader of ``_delta_log`` outside ``deltalake``.
"""

from __future__ import annotations

import glob
import json
import os
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder
from deltalake.exceptions import DeltaError, TableNotFoundError

# history() is read newest first in windows of this many commits, growing tenfold: the newest
# commit is usually the tagged one, and a table with thousands of commits still costs a few reads.
HISTORY_WINDOW = 4


class UnreadableTable(Exception):
    """The folder holds a Delta table that ``deltalake`` cannot read (e.g. a reader feature it
    does not support, or a broken log)."""


class StatsMissing(Exception):
    """A live file's statistics cannot bound the column: the answer is not in the log."""


def open_table(location: str, version: int | None = None,
               storage_options: dict[str, str] | None = None) -> DeltaTable | None:
    """The table at ``location`` (an absolute path or a URI), at ``version`` or its newest;
    None when there is no Delta table there yet."""
    try:  # one load: asking is_deltatable first would read the log twice
        return DeltaTable(location, version=version, storage_options=storage_options)
    except TableNotFoundError:
        return None
    except DeltaError as exc:
        raise UnreadableTable(f"{location}: {exc}") from exc


def newest_version(location: str, storage_options: dict[str, str] | None = None) -> int | None:
    """The newest committed version of the table at ``location``; None when there is no Delta
    table there yet."""
    table = open_table(location, storage_options=storage_options)
    return None if table is None else table.version()


def tagged_commits(table: DeltaTable) -> list[dict[str, Any]]:
    """The commit infos (``version`` added) that carry ``userMetadata`` (a submission id, as the
    publish step writes it), oldest first, as far back as the log still holds them."""
    return sorted((entry for entry in table.history() if entry.get("userMetadata")), key=lambda e: e["version"])


def newest_tag(table: DeltaTable) -> str | None:
    """The ``userMetadata`` of the newest commit that has one (maintenance commits such as
    OPTIMIZE carry none); older commits are read only as far as needed."""
    limit = HISTORY_WINDOW
    while True:
        entries = table.history(limit)
        for entry in entries:
            if entry.get("userMetadata"):
                return entry["userMetadata"]
        if len(entries) < limit:
            return None
        limit *= 10


def live_files(table: DeltaTable) -> pa.Table:
    """One row per live data file: ``path``, ``num_records``, ``partition.<name>``,
    ``null_count.<name>``, ``min.<name>``, ``max.<name>`` (typed values; ``<name>`` is the
    column's :func:`stored_name`)."""
    return pa.table(table.get_add_actions(flatten=True))


def stored_name(table: DeltaTable, column: str) -> str:
    """The name statistics and partition values use for ``column``: its physical name on a
    column-mapped table, else the column name."""
    for field in table.schema().fields:
        if field.name == column:
            return field.metadata.get("delta.columnMapping.physicalName", column)
    return column


def column_max(table: DeltaTable, column: str) -> Any | None:
    """max(``column``) over the live files from their partition values or ``maxValues``
    statistics, without reading a data file; None when no row has a value.

    :raises StatsMissing: a file with rows has no statistics for the column (Delta keeps them for
        the first 32 columns unless ``delta.dataSkippingStatsColumns`` names it)."""
    files = live_files(table)
    name = stored_name(table, column)
    if column in table.metadata().partition_columns:
        return _max(_column(files, f"partition.{name}"))
    values = []
    for path, rows, nulls, value in zip(files["path"].to_pylist(), files["num_records"].to_pylist(),
                                        _column(files, f"null_count.{name}"), _column(files, f"max.{name}")):
        if value is not None or rows == 0:
            values.append(value)
        elif rows is None:
            raise StatsMissing(f"data file {path} has no statistics")
        elif nulls != rows:  # unless every row of this file is NULL in the column
            raise StatsMissing(f"data file {path} has no statistics for column {column!r}")
    return _max(values)


def row_count(table: DeltaTable) -> int | None:
    """The rows of the table from the files' ``numRecords``; None when a file has no statistics."""
    counts = live_files(table)["num_records"].to_pylist()
    return None if None in counts else sum(counts)


def read_rows(table: DeltaTable, columns: list[str], where: tuple[str, set[str]] | None = None,
              newest: tuple[str, int] | None = None, per: tuple[str, ...] = ()) -> list[dict]:
    """``columns`` of the rows whose string column ``where[0]`` holds one of ``where[1]`` (all
    rows without ``where``); a column the table lacks reads as None. With ``newest`` = (column,
    n), only the n rows with the largest ``column`` per ``where[0]`` value (and per value of the
    ``per`` columns the table has).

    DataFusion (inside delta-rs) opens only the files whose partition value or min/max statistics
    can hold the values (the decision table is partitioned by contract; its earlier layout keeps
    per-file ``contract_id`` statistics). The values may come from a contract: they are SQL string
    literals (a quote doubled; DataFusion has no backslash escapes), never SQL text."""
    known = {field.name for field in table.schema().fields}
    selected = [column for column in dict.fromkeys(columns) if column in known]
    if (where is not None and where[0] not in known) or not selected:
        return []
    names = ", ".join(map(_name, selected))
    if where is None:
        sql = f"SELECT {names} FROM t"
    else:
        key, values = where
        if not values:
            return []
        condition = f"{_name(key)} IN ({', '.join(map(_literal, sorted(values)))})"
        sql = f"SELECT {names} FROM t WHERE {condition}"
        if newest is not None:
            order, count = newest
            groups = ", ".join(_name(column) for column in (key, *per) if column in known)
            rank = f"ROW_NUMBER() OVER (PARTITION BY {groups} ORDER BY {_name(order)} DESC)"
            ranked = f"SELECT {names}, {rank} AS _rank FROM t WHERE {condition}"
            sql = f"SELECT {names} FROM ({ranked}) WHERE _rank <= {int(count)}"
    result = pa.RecordBatchReader.from_stream(QueryBuilder().register("t", table).execute(sql)).read_all()
    return [{column: row.get(column) for column in columns} for row in result.to_pylist()]


def written_since(root: str, since: int) -> list[str]:
    """The files that the commits after version ``since`` wrote to the local table at ``root``:
    their JSON log entries and checkpoints, ``_last_checkpoint``, and the data files they added
    (paths as the log gives them, under ``root``). Only those commits' entries are read, so the
    cost does not grow with the table."""
    log = os.path.join(root, "_delta_log")
    files = [os.path.join(log, "_last_checkpoint")]
    version = since + 1
    while os.path.isfile(entry := os.path.join(log, f"{version:020d}.json")):
        files += [entry, *glob.glob(os.path.join(log, f"{version:020d}.checkpoint*.parquet"))]
        with open(entry, encoding="utf-8") as commit:
            for line in commit:
                action = json.loads(line) if '"add"' in line else {}
                if "add" in action:
                    files.append(os.path.join(root, unquote(action["add"]["path"])))
        version += 1
    return files


def _column(files: pa.Table, name: str) -> list:
    """A statistics column, all None when no file has that statistic."""
    return files[name].to_pylist() if name in files.column_names else [None] * files.num_rows


def _max(values: list) -> Any | None:
    present = [value for value in values if value is not None]
    return max(present) if present else None


def _name(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
