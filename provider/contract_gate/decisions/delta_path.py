"""The decision store for path-based Delta tables, written and read with ``deltalake``
(delta-rs): no JVM, so recording a decision costs milliseconds and works after Spark died.

Layout: the table is partitioned by ``contract_id`` and keeps statistics on
``submission_id`` only. A record is one MERGE whose condition names its contract and submission
as literals (``store.SCOPE``); delta-rs (1.6) turns it into the commit's read predicate
(``contract_id = 'c' AND submission_id = 's' AND final``) and uses it twice: the MERGE skips
every file outside the partition or outside the file statistics, and the conflict check only
looks at the files a concurrent commit added that match it (partition value, then the
``submission_id`` min/max of each added file). Concurrent gates recording different
submissions therefore never conflict; two writers of the *same* submission do, and the loser's
retry finds the winner's final record. Chosen over the other candidate, an append-only log
with a read-side rule: blind appends never conflict either, but N racing writers leave N
"final" rows, so the one-final-record promise would live in every reader (status, recovery,
auditors' own queries) instead of in the table (benchmarks/decisions/README.md).

A record is written in its own commit; a checkpoint follows every ``checkpointInterval`` commits
(the post-commit hook of the writer that reaches it). Log cleanup and compaction are the retention
DAG's job (``upkeep``), so a gate's record never pays for them.

A table from before the ``object`` column gets the column (``alter.add_columns``, a schema-only
commit) from the first record written to it; its older rows read back with ``object`` NULL.

A table of the earlier, unpartitioned layout keeps working unchanged: the same literal MERGE
condition is pruned by the ``contract_id``/``submission_id`` statistics its files carry.
``migrate_layout`` rewrites it partitioned, in one commit (docs/operations.md, "Operations:
keeping the decision log small").

Also reads gated path tables' commit history and file statistics for recovery, through
:mod:`contract_gate.delta_tables`.
"""

from __future__ import annotations

import logging
import os
from datetime import date, datetime, timezone
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError
from deltalake.schema import Field, MapType, PrimitiveType
from deltalake.transaction import PostCommitHookProperties
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from contract_gate import delta_tables
from contract_gate.decisions.record import COLUMNS, Decision, ObjectScope
from contract_gate.decisions.store import (
    ACCEPTED,
    LAYOUT_COLUMN,
    MAX_ATTEMPTS,
    RETENTION_WINDOW,
    DecisionStore,
    TableHistory,
)
from contract_gate_plan.addresses import Address
from contract_gate_plan.migration import HistoryEntry
from contract_gate_plan.ownership import CONTRACT, ROLE, check_owner, owner_properties
from contract_gate_plan.restricted import FILE_MODE, FOLDER_MODE, local_path, make_private_folder, restrict_tree
from contract_gate_plan.tagged_commit import TaggedCommit

ARROW_TYPES = {
    "STRING": pa.string(),
    "BOOLEAN": pa.bool_(),
    "BIGINT": pa.int64(),
    "INT": pa.int32(),
    "TIMESTAMP": pa.timestamp("us", tz="UTC"),
    "MAP<STRING,BIGINT>": pa.map_(pa.string(), pa.int64()),
    "ARRAY<STRING>": pa.list_(pa.string()),
}
# Delta's names of the primitive types a column added later may have (``_with_all_columns``).
DELTA_TYPES = {pa.string(): "string", pa.bool_(): "boolean", pa.int64(): "long", pa.int32(): "integer"}
SCHEMA = pa.schema([pa.field(name, ARROW_TYPES[type_], nullable) for name, type_, nullable in COLUMNS])
LAYOUT_PROPERTIES = {
    # a checkpoint every 100 commits: a writer replays at most 100 small JSON commits
    "delta.checkpointInterval": "100",
    # time travel over the window; older log entries and removed files may go
    "delta.logRetentionDuration": RETENTION_WINDOW,
    "delta.deletedFileRetentionDuration": RETENTION_WINDOW,
    # the one column the MERGE and the readers prune on besides the partition: small checkpoints
    "delta.dataSkippingStatsColumns": "submission_id",
}
# Writers checkpoint when due but leave log cleanup to the retention DAG's upkeep.
WRITER_HOOKS = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=False)
LOGGER = logging.getLogger("contract_gate.decisions")


class DeltaPathDecisionStore(DecisionStore):
    """Decisions in a path-based Delta table (plan ``tables.decisions`` of kind ``path``;
    relative paths resolve like every other address, see ``contract_gate_plan.addresses``).

    ``properties``: extra table properties set when this store creates the table (e.g. the
    ownership properties every gate table carries), on top of ``LAYOUT_PROPERTIES``."""

    def __init__(self, address: Address | dict[str, Any], storage_options: dict[str, str] | None = None,
                 properties: dict[str, str] | None = None):
        self.uri = Address.of(address).deltalake_uri
        self.storage_options = storage_options
        self.properties = {**LAYOUT_PROPERTIES, **(properties or {})}
        self._loaded: DeltaTable | None = None
        self.local_folder = local_path(self.uri)  # owner-only on a local filesystem (contract_gate_plan.restricted)

    def string_literal(self, value: str) -> str:
        """DataFusion (delta-rs) SQL: a quote is doubled; a backslash is an ordinary character."""
        return "'" + value.replace("'", "''") + "'"

    def records(
        self, submission_id: str | None = None, contract_id: str | None = None, scope: ObjectScope | None = None
    ) -> list[Decision]:
        table = self._current()
        if table is None:
            return []
        conditions = [f"{column} = {self.string_literal(value)}" for column, value in
                      ((LAYOUT_COLUMN, contract_id), ("submission_id", submission_id)) if value is not None]
        if scope is not None:
            if "object" in _column_names(table):
                conditions.append(scope.condition("object", self.string_literal))
            elif not scope.sole:  # a table older than the column holds only one-object contracts' records
                return []
        # DataFusion (in delta-rs) picks the files by partition value and statistics, then the
        # rows. (Not pyarrow.dataset: its scan threads call back into delta-rs' Python file
        # system and now and then abort the process at interpreter exit.)
        rows = _select(table, " AND ".join(conditions)).to_pylist()
        return sorted(map(Decision.from_row, rows), key=lambda d: d.decided_at, reverse=True)

    def accepted_batches(self, contract_id: str, scope: ObjectScope, limit: int) -> list[Decision]:
        table = self._current()
        if table is None:
            return []
        conditions = [f"{LAYOUT_COLUMN} = {self.string_literal(contract_id)}", ACCEPTED]
        if "object" in _column_names(table):
            conditions.append(scope.condition("object", self.string_literal))
        elif not scope.sole:  # a table older than the column holds only one-object contracts' records
            return []
        rows = _select(table, " AND ".join(conditions), f" ORDER BY decided_at DESC LIMIT {int(limit)}").to_pylist()
        return [Decision.from_row(row) for row in rows]

    def _merge(self, decision: Decision, match: str, replace_when: str | None) -> bool:
        source = pa.Table.from_pylist([_arrow_row(decision)], schema=SCHEMA)
        if self.local_folder:
            make_private_folder(self.local_folder)
        loaded = self._current()
        before = loaded.version() if loaded is not None else -1

        def merge() -> dict[str, Any]:
            merger = self._table().merge(source, match, source_alias="s", target_alias="t",
                                         post_commithook_properties=WRITER_HOOKS)
            if replace_when is not None:
                merger = merger.when_matched_update_all(predicate=replace_when)
            return merger.when_not_matched_insert_all().execute()

        metrics = _retrying_lost_commits()(merge)  # a concurrent record of this submission won: the retry sees it
        self.keep_private(since=before)
        return metrics["num_target_rows_inserted"] + metrics["num_target_rows_updated"] > 0

    def _current(self) -> DeltaTable | None:
        """The table at its newest version (None: not created yet). Loaded once per store and
        then brought up to date by reading only the commits since, so recording a decision and
        reading the submission's final record back load the log once."""
        if self._loaded is None:
            try:
                self._loaded = DeltaTable(self.uri, storage_options=self.storage_options)
            except TableNotFoundError:
                return None
        else:
            self._loaded.update_incremental()
        return self._loaded

    def _table(self) -> DeltaTable:
        """The table, created on first use; a concurrent creation is fine either way. Only a
        table whose ownership properties say it is the decision table is written, and only once
        it has every column of ``COLUMNS``."""
        table = self._current()
        if table is not None:
            return self._with_all_columns(_owned(table, self.uri, self.storage_options))
        try:
            table = DeltaTable.create(self.uri, SCHEMA, mode="ignore", partition_by=[LAYOUT_COLUMN],
                                      name="contract_gate_decisions", configuration=self.properties,
                                      storage_options=self.storage_options)
        except DeltaError:
            if not DeltaTable.is_deltatable(self.uri, self.storage_options):
                raise
            table = DeltaTable(self.uri, storage_options=self.storage_options)
        return self._with_all_columns(_owned(table, self.uri, self.storage_options))

    def _with_all_columns(self, table: DeltaTable) -> DeltaTable:
        """``table`` with the columns added since it was created (nullable, so its rows read them
        as NULL). Adding a column the table has already is a no-op in delta-rs, so two writers
        that both found it missing both succeed; a commit conflict is retried like a record."""
        missing = [field for field in SCHEMA if field.name not in _column_names(table)]
        if not missing:
            return table
        before = table.version()
        columns = [Field(field.name, _delta_type(field.type), nullable=True) for field in missing]
        _retrying_lost_commits()(lambda: DeltaTable(self.uri, storage_options=self.storage_options).alter.add_columns(
            columns, post_commithook_properties=WRITER_HOOKS))
        LOGGER.info("decision table %s: added column(s) %s", self.uri, ", ".join(field.name for field in missing))
        self.keep_private(since=before)
        self._loaded = DeltaTable(self.uri, storage_options=self.storage_options)
        return self._loaded

    def keep_private(self, since: int | None = None) -> None:
        """deltalake writes files with the process umask: make them owner-only again. With
        ``since``, what the commits after that version wrote (see ``_restrict_commits``): a
        record then costs a few ``chmod`` calls instead of a walk over every file of the table,
        which grows with every decision; without, the whole tree."""
        if not self.local_folder:
            return
        if since is None:
            restrict_tree(self.local_folder)
        else:
            _restrict_commits(self.local_folder, since)

    def upkeep(self, contract_id: str) -> dict:
        """Compact ``contract_id``'s partition (the whole table when it has the earlier,
        unpartitioned layout), delete the files and log entries older than the retention window.

        Compaction rewrites the partition's small files into one in a ``dataChange: false``
        commit: concurrent records do not conflict with it unless they read a file it rewrites,
        and then the record retries. Checkpoints stay with the ``checkpointInterval`` post-commit
        hook (the compaction's commit included): one per contract and day on top would add 200
        full checkpoints a day to a log that keeps every checkpoint of its window. Cleanup deletes
        the JSON commits and checkpoints older than ``delta.logRetentionDuration`` that precede a
        newer checkpoint, so every version of the window can still be read; the vacuum deletes
        data files removed longer ago than ``delta.deletedFileRetentionDuration`` (the same
        window: files a version of the window reads stay), so the folder holds about one window
        of small files rather than every decision ever written (it commits only when it deletes,
        so of the 200 daily runs the first does the work). Older tables get any missing layout
        property first (never overriding one an operator set)."""
        if not DeltaTable.is_deltatable(self.uri, self.storage_options):
            return {"table": self.uri, "exists": False}
        table = _owned(DeltaTable(self.uri, storage_options=self.storage_options), self.uri, self.storage_options)
        start = table.version()
        missing = {k: v for k, v in self.properties.items() if k not in table.metadata().configuration}
        if missing:
            table.alter.set_table_properties(missing, raise_if_not_exists=False)
        partitioned = LAYOUT_COLUMN in table.metadata().partition_columns
        scope = [(LAYOUT_COLUMN, "=", contract_id)] if partitioned else None
        metrics = _retrying_lost_commits()(lambda: DeltaTable(self.uri, storage_options=self.storage_options)
                                           .optimize.compact(partition_filters=scope,
                                                             post_commithook_properties=WRITER_HOOKS))
        table = DeltaTable(self.uri, storage_options=self.storage_options)
        vacuumed = table.vacuum(dry_run=False, full=True, post_commithook_properties=WRITER_HOOKS)
        table = DeltaTable(self.uri, storage_options=self.storage_options)
        table.cleanup_metadata()
        self.keep_private(since=start)
        return {"table": self.uri, "exists": True, "partitioned": partitioned, "version": table.version(),
                "files_removed": metrics["numFilesRemoved"], "files_added": metrics["numFilesAdded"],
                "files_vacuumed": len(vacuumed), "properties_set": sorted(missing)}


def migrate_layout(address: Address | dict[str, Any], storage_options: dict[str, str] | None = None,
                   properties: dict[str, str] | None = None) -> dict:
    """Rewrite a decision table of the earlier, unpartitioned layout partitioned by
    ``contract_id``, in one overwrite commit (the previous version stays readable by time travel
    for the retention window). Run it once with the gates paused: a record committed after the
    read would not be carried over. Returns ``{rows, version}``; a table already partitioned
    is left alone."""
    store = DeltaPathDecisionStore(address, storage_options, properties)
    table = DeltaTable(store.uri, storage_options=storage_options)
    if LAYOUT_COLUMN in table.metadata().partition_columns:
        return {"rows": None, "version": table.version(), "migrated": False}
    rows = _select(table)
    for field in SCHEMA:  # a column added since the table was created reads as NULL
        if field.name not in rows.column_names:
            rows = rows.append_column(field, pa.nulls(rows.num_rows, field.type))
    rows = rows.select(SCHEMA.names).cast(SCHEMA)
    write_deltalake(store.uri, rows, mode="overwrite", schema_mode="overwrite", partition_by=[LAYOUT_COLUMN],
                    configuration=store.properties, storage_options=storage_options)
    table = DeltaTable(store.uri, storage_options=storage_options)
    table.create_checkpoint()
    store.keep_private()
    LOGGER.info("decision table %s: %d records rewritten partitioned by %s (version %d)",
                store.uri, rows.num_rows, LAYOUT_COLUMN, table.version())
    return {"rows": rows.num_rows, "version": table.version(), "migrated": True}


def _owned(table: DeltaTable, uri: str, storage_options: dict[str, str] | None) -> DeltaTable:
    """``table`` once it carries the decision table's ownership properties (``contract_gate_plan.ownership``).

    delta-rs (1.6) refuses properties outside ``delta.*`` at creation, so they are set by a
    second commit. An empty table without them is a creation that did not get that far (this
    one, an interrupted one, or two racing ``create(mode="ignore")``, which delta-rs may commit
    twice): it is completed; an empty table holds nothing to lose. Any other table is checked."""
    properties = dict(table.metadata().configuration)
    if not any(key in properties for key in (CONTRACT, ROLE)) and not table.file_uris():
        table.alter.set_table_properties(owner_properties(None, "decisions"), raise_if_not_exists=False)
        return DeltaTable(uri, storage_options=storage_options)
    check_owner(properties, Address(kind="path", path=uri), None, "decisions")
    return table


def _column_names(table: DeltaTable) -> set[str]:
    return {field.name for field in table.schema().fields}


def _select(table: DeltaTable, where: str = "", order: str = "") -> pa.Table:
    """The rows of ``table`` where ``where`` (SQL) holds, in ``order`` (SQL: ORDER BY, LIMIT),
    read by DataFusion inside delta-rs."""
    sql = "SELECT * FROM decisions" + (f" WHERE {where}" if where else "") + order
    return pa.RecordBatchReader.from_stream(QueryBuilder().register("decisions", table).execute(sql)).read_all()


def _restrict_commits(root: str, since: int) -> None:
    """Owner-only modes for what the commits after version ``since`` wrote: their log entries
    and checkpoints, ``_last_checkpoint``, the files they added and the folders holding those.
    Everything older was restricted by the write that made it, and the table folder itself is
    owner-only before anything is written into it (``make_private_folder``)."""
    files = delta_tables.written_since(root, since)
    folders = {root}
    for written in files:
        folder = os.path.dirname(written)
        while len(folder) > len(root):
            folders.add(folder)
            folder = os.path.dirname(folder)
    for path, mode in [*((f, FOLDER_MODE) for f in folders), *((f, FILE_MODE) for f in files)]:
        if os.path.exists(path) and not os.path.islink(path):
            os.chmod(path, mode)


def _retrying_lost_commits() -> Retrying:
    """Retries of a commit a concurrent writer won (delta-rs' ``CommitFailedError``), each on the
    table as it is then, up to ``MAX_ATTEMPTS``; the last error is raised. The waits are random
    (growing, under half a second) so that writers that collided do not collide again in step."""
    return Retrying(retry=retry_if_exception_type(CommitFailedError), stop=stop_after_attempt(MAX_ATTEMPTS),
                    wait=wait_random_exponential(multiplier=0.01, max=0.5), reraise=True)


def _arrow_row(decision: Decision) -> dict[str, Any]:
    row = decision.as_row()
    for counts in ("rule_failures", "null_counts"):
        row[counts] = list(row[counts].items())
    return row


def _delta_type(arrow_type: pa.DataType) -> PrimitiveType | MapType:
    """Delta's type of a column added later: a primitive, or a map of counts (``null_counts``)."""
    if isinstance(arrow_type, pa.MapType):
        return MapType(PrimitiveType(DELTA_TYPES[arrow_type.key_type]), PrimitiveType(DELTA_TYPES[arrow_type.item_type]),
                       value_contains_null=True)
    return PrimitiveType(DELTA_TYPES[arrow_type])


class DeltaPathHistory(TableHistory):
    """Commit history and statistics of path-based Delta tables, read through
    :mod:`contract_gate.delta_tables` (``deltalake``)."""

    def __init__(self, storage_options: Callable[[Address], dict[str, str] | None] | None = None):
        self.storage_options = storage_options or (lambda address: None)  # an address's, by its bucket

    def tagged_commits(self, address: Address | dict) -> list[TaggedCommit]:
        address = Address.of(address)
        table = delta_tables.open_table(address.deltalake_uri, storage_options=self.storage_options(address))
        if table is None:
            return []
        return [
            TaggedCommit(
                version=entry["version"],
                timestamp=datetime.fromtimestamp(entry["timestamp"] / 1000, tz=timezone.utc),
                operation=entry.get("operation", ""),
                submission_id=entry["userMetadata"],
                metrics={k: str(v) for k, v in (entry.get("operationMetrics") or {}).items()},
            )
            for entry in delta_tables.tagged_commits(table)
        ]

    def commits(self, address: Address | dict) -> list[HistoryEntry]:
        address = Address.of(address)
        table = delta_tables.open_table(address.deltalake_uri, storage_options=self.storage_options(address))
        if table is None:
            return []
        return sorted((HistoryEntry(version=entry["version"],
                                    timestamp=datetime.fromtimestamp(entry["timestamp"] / 1000, tz=timezone.utc),
                                    operation=entry.get("operation", ""),
                                    parameters={k: str(v) for k, v in (entry.get("operationParameters") or {}).items()})
                       for entry in table.history()), key=lambda entry: entry.version)

    def max_value(self, address: Address | dict, version: int, column: str) -> str | None:
        """From the per-file ``maxValues`` statistics of the snapshot at ``version``."""
        address = Address.of(address)
        table = delta_tables.open_table(address.deltalake_uri, version=version,
                                        storage_options=self.storage_options(address))
        files = delta_tables.live_files(table) if table is not None else None
        name = f"max.{delta_tables.stored_name(table, column)}" if table is not None else None
        if files is None or name not in files.column_names or files.num_rows == 0:
            return None
        values = [v for v in files[name].to_pylist() if v is not None]
        return _iso(max(values)) if values else None

    def properties(self, address: Address | dict) -> dict[str, str] | None:
        """From the table's metadata ({} without a table)."""
        address = Address.of(address)
        table = delta_tables.open_table(address.deltalake_uri, storage_options=self.storage_options(address))
        return {} if table is None else dict(table.metadata().configuration)

    def row_count(self, address: Address | dict, version: int) -> int | None:
        """From the per-file ``numRecords`` statistics: no data file is read."""
        address = Address.of(address)
        try:
            table = delta_tables.open_table(address.deltalake_uri, version=version,
                                            storage_options=self.storage_options(address))
        except delta_tables.UnreadableTable:  # e.g. a version already vacuumed
            return None
        return delta_tables.row_count(table) if table is not None else None


def _iso(value: date | datetime) -> str:
    if isinstance(value, datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.isoformat()
