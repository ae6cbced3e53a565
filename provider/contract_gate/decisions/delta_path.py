"""The decision store for path-based Delta tables, written and read with ``deltalake``
(delta-rs): no JVM, so recording a decision costs milliseconds and works after Spark died.

Also reads gated path tables' commit history and file statistics for recovery.
"""

from __future__ import annotations

import time
from datetime import date, datetime, timezone
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError, DeltaError

from contract_gate.decisions.record import COLUMNS, Decision
from contract_gate.decisions.store import (
    MAX_ATTEMPTS,
    DecisionStore,
    TableHistory,
)
from spark_jobs.address import location, resolve
from spark_jobs.ownership import CONTRACT, ROLE, check_owner, owner_properties
from spark_jobs.tagged_commit import TaggedCommit

ARROW_TYPES = {
    "STRING": pa.string(),
    "BOOLEAN": pa.bool_(),
    "BIGINT": pa.int64(),
    "INT": pa.int32(),
    "TIMESTAMP": pa.timestamp("us", tz="UTC"),
    "MAP<STRING,BIGINT>": pa.map_(pa.string(), pa.int64()),
    "ARRAY<STRING>": pa.list_(pa.string()),
}
SCHEMA = pa.schema([pa.field(name, ARROW_TYPES[type_], nullable) for name, type_, nullable in COLUMNS])


class DeltaPathDecisionStore(DecisionStore):
    """Decisions in a path-based Delta table (plan ``tables.decisions`` of kind ``path``;
    relative paths resolve like every other address, see ``spark_jobs.address``)."""

    def __init__(self, address: dict[str, Any], storage_options: dict[str, str] | None = None):
        self.uri = location(resolve(address))
        self.storage_options = storage_options

    def records(
        self, submission_id: str | None = None, contract_id: str | None = None
    ) -> list[Decision]:
        if not DeltaTable.is_deltatable(self.uri, self.storage_options):
            return []
        filters = [(column, "=", value) for column, value in
                   (("submission_id", submission_id), ("contract_id", contract_id)) if value is not None]
        table = DeltaTable(self.uri, storage_options=self.storage_options)
        rows = table.to_pyarrow_table(filters=filters or None).to_pylist()
        return sorted(map(Decision.from_row, rows), key=lambda d: d.decided_at, reverse=True)

    def _merge(self, decision: Decision, match: str, replace_when: str | None) -> None:
        source = pa.Table.from_pylist([_arrow_row(decision)], schema=SCHEMA)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                merger = self._table().merge(source, match, source_alias="s", target_alias="t")
                if replace_when is not None:
                    merger = merger.when_matched_update_all(predicate=replace_when)
                merger.when_not_matched_insert_all().execute()
                return
            except CommitFailedError:  # a concurrent record won; the retry sees it
                if attempt == MAX_ATTEMPTS:
                    raise
                time.sleep(0.05 * attempt)

    def _table(self) -> DeltaTable:
        """The table, created on first use; a concurrent creation is fine either way. Only a
        table whose ownership properties say it is the decision table is written."""
        try:
            table = DeltaTable.create(self.uri, SCHEMA, mode="ignore", name="contract_gate_decisions",
                                      storage_options=self.storage_options)
        except DeltaError:
            if not DeltaTable.is_deltatable(self.uri, self.storage_options):
                raise
            table = DeltaTable(self.uri, storage_options=self.storage_options)
        return _owned(table, self.uri, self.storage_options)


def _owned(table: DeltaTable, uri: str, storage_options: dict[str, str] | None) -> DeltaTable:
    """``table`` once it carries the decision table's ownership properties (``spark_jobs.ownership``).

    delta-rs (1.6) refuses properties outside ``delta.*`` at creation, so they are set by a
    second commit. An empty table without them is a creation that did not get that far (this
    one, an interrupted one, or two racing ``create(mode="ignore")``, which delta-rs may commit
    twice): it is completed; an empty table holds nothing to lose. Any other table is checked."""
    properties = dict(table.metadata().configuration)
    if not any(key in properties for key in (CONTRACT, ROLE)) and not table.file_uris():
        table.alter.set_table_properties(owner_properties(None, "decisions"), raise_if_not_exists=False)
        return DeltaTable(uri, storage_options=storage_options)
    check_owner(properties, {"kind": "path", "path": uri}, None, "decisions")
    return table


def _arrow_row(decision: Decision) -> dict[str, Any]:
    row = decision.as_row()
    row["rule_failures"] = list(row["rule_failures"].items())
    return row


class DeltaPathHistory(TableHistory):
    """Commit history and statistics of path-based Delta tables through ``deltalake``."""

    def __init__(self, storage_options: dict[str, str] | None = None):
        self.storage_options = storage_options

    def tagged_commits(self, address: dict) -> list[TaggedCommit]:
        uri = location(resolve(address))
        if not DeltaTable.is_deltatable(uri, self.storage_options):
            return []
        commits = [
            TaggedCommit(
                version=entry["version"],
                timestamp=datetime.fromtimestamp(entry["timestamp"] / 1000, tz=timezone.utc),
                operation=entry.get("operation", ""),
                submission_id=entry["userMetadata"],
                metrics={k: str(v) for k, v in (entry.get("operationMetrics") or {}).items()},
            )
            for entry in DeltaTable(uri, storage_options=self.storage_options).history()
            if entry.get("userMetadata")
        ]
        return sorted(commits, key=lambda commit: commit.version)

    def max_value(self, address: dict, version: int, column: str) -> str | None:
        """From the per-file ``maxValues`` statistics of the snapshot at ``version``."""
        table = DeltaTable(location(resolve(address)), version=version, storage_options=self.storage_options)
        files = pa.table(table.get_add_actions(flatten=True))
        name = f"max.{column}"
        if name not in files.column_names or files.num_rows == 0:
            return None
        values = [v for v in files[name].to_pylist() if v is not None]
        return _iso(max(values)) if values else None

    def row_count(self, address: dict, version: int) -> int | None:
        """From the per-file ``numRecords`` statistics: no data file is read."""
        uri = location(resolve(address))
        if not DeltaTable.is_deltatable(uri, self.storage_options):
            return None
        try:
            table = DeltaTable(uri, version=version, storage_options=self.storage_options)
        except Exception:  # noqa: BLE001 - deltalake raises its own error types for a vacuumed version
            return None
        counts = pa.table(table.get_add_actions(flatten=True))["num_records"].to_pylist()
        return None if None in counts else sum(counts)


def _iso(value: date | datetime) -> str:
    if isinstance(value, datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.isoformat()
