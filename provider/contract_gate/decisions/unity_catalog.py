"""The decision store for catalog tables (Unity Catalog), through a Databricks SQL warehouse.

Every statement is plain Databricks SQL built here as text: ``CREATE TABLE IF NOT EXISTS``,
one ``MERGE INTO`` per record (the match conditions of ``store``), ``SELECT`` and ``DESCRIBE
HISTORY`` for reading, ``OPTIMIZE`` for the retention DAG's upkeep. Values are rendered as
escaped literals (``contract_gate_plan.sql_text``), so a submission id or rule id cannot change a
statement.

Layout: ``CLUSTER BY (contract_id)`` with deletion vectors, and every MERGE names its
contract and submission as literals. On Databricks that gives row-level concurrency: two MERGEs
conflict only when they touch the same rows, i.e. the same submission (a partitioned table
would still conflict on two submissions of one contract). A ``WHERE contract_id = ...`` read
skips other contracts' files by their clustering statistics. Databricks writes checkpoints and
cleans the log by itself, following the table's ``delta.logRetentionDuration``; the daily upkeep
runs ``OPTIMIZE``, which compacts and clusters the files written since the last one. A table
created before this layout keeps working (same statements); ``ALTER TABLE <name> CLUSTER BY
(contract_id)`` moves it to the new one (docs/operations.md, "Operations: keeping the decision
log small"). A table from before the ``object`` column gets it by ``ALTER TABLE ... ADD COLUMNS``
the first time a store uses it; its older rows read back with ``object`` NULL.

Tested without a workspace: the unit tests check the SQL text, and run the very same
statements through local Spark SQL against a local Delta table (Spark SQL is the dialect
Databricks SQL extends); they have not been run against a real Databricks SQL warehouse.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_incrementing

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
from contract_gate_plan.ownership import check_owner, owner_properties, properties_clause
from contract_gate_plan.sql_text import quote_identifier, quote_qualified, string_literal
from contract_gate_plan.tagged_commit import TaggedCommit

NAMES = [name for name, _, _ in COLUMNS]
TYPES = {name: type_ for name, type_, _ in COLUMNS}
LAYOUT_PROPERTIES = {
    "delta.enableDeletionVectors": "true",  # with clustering: row-level concurrency on Databricks
    "delta.logRetentionDuration": RETENTION_WINDOW,
    "delta.deletedFileRetentionDuration": RETENTION_WINDOW,
}


class SqlRunner:
    """Runs statements on a Databricks SQL warehouse through the Statement Execution API
    (:meth:`~contract_gate.hooks.databricks.DatabricksWorkspaceHook.run_statement`, the hook made on
    first use, in the task) and returns rows as dicts keyed by the result's column names.

    :param warehouse_id: the warehouse; by default ``warehouse_id`` in the ``contract_gate`` extra
        of the connection."""

    def __init__(self, hook: Any = None, databricks_conn_id: str = "databricks_default",
                 warehouse_id: str | None = None):
        self._hook = hook
        self.databricks_conn_id = databricks_conn_id
        self._warehouse_id = warehouse_id

    @property
    def hook(self) -> Any:
        if self._hook is None:
            # the SDK loads in the task that runs SQL: the decisions package is read without it
            # (`contract-gate status`, the pages)
            from contract_gate.hooks.databricks import DatabricksWorkspaceHook

            self._hook = DatabricksWorkspaceHook(self.databricks_conn_id)
        return self._hook

    @property
    def warehouse_id(self) -> str:
        if self._warehouse_id is None:
            self._warehouse_id = self.hook.settings().get("warehouse_id")
            if not self._warehouse_id:
                raise ValueError("catalog tables are read and written through a SQL warehouse: set warehouse_id "
                                 f"in the contract_gate extra of connection {self.databricks_conn_id!r}")
        return self._warehouse_id

    def execute(self, sql: str) -> None:
        self.hook.run_statement(sql, self.warehouse_id)

    def query(self, sql: str) -> list[dict[str, Any]]:
        return self.hook.run_statement(sql, self.warehouse_id)


class UnityCatalogDecisionStore(DecisionStore):
    """Decisions in the catalog table ``name`` (``catalog.schema.table``)."""

    def __init__(self, name: str, runner: SqlRunner | None = None, properties: dict[str, str] | None = None):
        self.name = name
        self.table = quote_qualified(name)
        self.runner = runner or SqlRunner()
        self.properties = {**LAYOUT_PROPERTIES, **(properties or {})}  # on top of the ownership ones
        self._created = False

    def string_literal(self, value: str) -> str:
        return string_literal(value)

    def create_sql(self) -> str:
        columns = ",\n  ".join(
            f"{quote_identifier(name)} {type_}{'' if nullable else ' NOT NULL'}"
            for name, type_, nullable in COLUMNS
        )
        properties = {**self.properties, **owner_properties(None, 'decisions')}
        return (f"CREATE TABLE IF NOT EXISTS {self.table} (\n  {columns}\n) USING DELTA\n"
                f"CLUSTER BY ({quote_identifier(LAYOUT_COLUMN)})\n"
                f"TBLPROPERTIES ({properties_clause(properties)})")

    def upkeep_sql(self) -> str:
        return f"OPTIMIZE {self.table}"

    def upkeep(self, contract_id: str) -> dict:
        """``OPTIMIZE`` the table: the files written since the last run are compacted and
        clustered, every contract's at once (a clustered table's OPTIMIZE takes no WHERE).
        Databricks writes the checkpoints and deletes expired log entries itself."""
        self._ensure_table()
        statement = self.upkeep_sql()
        self.runner.execute(statement)
        return {"table": self.name, "exists": True, "statements": [statement]}

    def merge_sql(self, decision: Decision, match: str, replace_when: str | None) -> str:
        row = decision.as_row()
        values = ",\n    ".join(
            f"{literal(row[name], TYPES[name])} AS {quote_identifier(name)}" for name in NAMES
        )
        statement = f"MERGE INTO {self.table} AS t\nUSING (SELECT\n    {values}) AS s\nON {match}\n"
        if replace_when is not None:
            statement += f"WHEN MATCHED AND {replace_when} THEN UPDATE SET *\n"
        return statement + "WHEN NOT MATCHED THEN INSERT *"

    def add_columns_sql(self, names: list[str]) -> str:
        columns = ", ".join(f"{quote_identifier(name)} {TYPES[name]}" for name in names)
        return f"ALTER TABLE {self.table} ADD COLUMNS ({columns})"

    def select_sql(self, submission_id: str | None = None, contract_id: str | None = None,
                   scope: ObjectScope | None = None) -> str:
        conditions = [f"{quote_identifier(column)} = {string_literal(value)}" for column, value in
                      (("submission_id", submission_id), ("contract_id", contract_id)) if value is not None]
        if scope is not None:
            conditions.append(scope.condition(quote_identifier("object"), string_literal))
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        columns = ", ".join(map(quote_identifier, NAMES))
        return f"SELECT {columns} FROM {self.table}{where} ORDER BY `decided_at` DESC"

    def records(
        self, submission_id: str | None = None, contract_id: str | None = None, scope: ObjectScope | None = None
    ) -> list[Decision]:
        self._ensure_table()
        return [Decision.from_row(row) for row in self.runner.query(self.select_sql(submission_id, contract_id, scope))]

    def accepted_sql(self, contract_id: str, scope: ObjectScope, limit: int) -> str:
        columns = ", ".join(map(quote_identifier, NAMES))
        return (f"SELECT {columns} FROM {self.table} WHERE {quote_identifier('contract_id')} = "
                f"{string_literal(contract_id)} AND {ACCEPTED} AND "
                f"{scope.condition(quote_identifier('object'), string_literal)} "
                f"ORDER BY `decided_at` DESC LIMIT {int(limit)}")

    def accepted_batches(self, contract_id: str, scope: ObjectScope, limit: int) -> list[Decision]:
        self._ensure_table()
        return [Decision.from_row(row) for row in self.runner.query(self.accepted_sql(contract_id, scope, limit))]

    def _merge(self, decision: Decision, match: str, replace_when: str | None) -> None:
        self._ensure_table()
        statement = self.merge_sql(decision, match, replace_when)
        self._retrying_concurrent_writes()(self.runner.execute, statement)

    @staticmethod
    def _retrying_concurrent_writes() -> Retrying:
        """Retries of a MERGE that lost to a concurrent write (the warehouse names it
        ``CONCURRENT...`` in the message, whatever exception type the client raises), up to
        ``MAX_ATTEMPTS``, waiting a little longer each time; the last error is raised."""
        return Retrying(retry=retry_if_exception(lambda exc: "CONCURRENT" in str(exc).upper()),
                        stop=stop_after_attempt(MAX_ATTEMPTS), wait=wait_incrementing(start=0.2, increment=0.2),
                        reraise=True)

    def _ensure_table(self) -> None:
        """Create the table when missing, check once that it is the decision table
        (``contract_gate_plan.ownership``) before any record is written to it, and add the columns
        added to ``COLUMNS`` since it was created."""
        if not self._created:
            self.runner.execute(self.create_sql())
            rows = self.runner.query(f"SHOW TBLPROPERTIES {self.table}")
            check_owner({row["key"]: row["value"] for row in rows}, Address(kind="table", name=self.name),
                        None, "decisions")
            self._add_missing_columns()
            self._created = True

    def _add_missing_columns(self) -> None:
        missing = self._missing_columns()
        if not missing:
            return
        try:
            self.runner.execute(self.add_columns_sql(missing))
        except Exception:  # noqa: BLE001 - a concurrent store may have added them first: then all is well
            if self._missing_columns():
                raise

    def _missing_columns(self) -> list[str]:
        present = {str(row["col_name"]).strip("`") for row in self.runner.query(f"SHOW COLUMNS IN {self.table}")}
        return [name for name in NAMES if name not in present]


def literal(value: Any, type_: str) -> str:
    """``value`` as a typed Databricks SQL literal; NULL keeps its column type."""
    if value is None:
        return f"CAST(NULL AS {type_})"
    if type_ == "STRING":
        return string_literal(str(value))
    if type_ == "BOOLEAN":
        return "TRUE" if value else "FALSE"
    if type_ in ("BIGINT", "INT"):
        return f"CAST({int(value)} AS {type_})"
    if type_ == "TIMESTAMP":
        micros = int(value.astimezone(timezone.utc).timestamp() * 1_000_000)
        return f"TIMESTAMP_MICROS({micros})"
    if type_ == "ARRAY<STRING>":
        return f"CAST(ARRAY({', '.join(string_literal(v) for v in value)}) AS ARRAY<STRING>)"
    if type_ == "MAP<STRING,BIGINT>":
        pairs = ", ".join(f"{string_literal(k)}, CAST({int(v)} AS BIGINT)" for k, v in value.items())
        return f"CAST(MAP({pairs}) AS MAP<STRING,BIGINT>)"
    raise ValueError(f"no literal for type {type_}")


class UnityCatalogHistory(TableHistory):
    """Commit history and values of catalog tables through the same SQL runner."""

    def __init__(self, runner: SqlRunner | None = None):
        self.runner = runner or SqlRunner()

    def history_rows(self, address: Address | dict) -> list[dict[str, Any]]:
        """The table's ``DESCRIBE HISTORY`` rows; [] when the table does not exist yet."""
        table = quote_qualified(Address.of(address).location)
        try:
            return self.runner.query(f"DESCRIBE HISTORY {table}")
        except Exception as exc:  # noqa: BLE001 - the error class is in the message, whatever the runner raises
            if "TABLE_OR_VIEW_NOT_FOUND" in str(exc):
                return []
            raise

    def tagged_commits(self, address: Address | dict) -> list[TaggedCommit]:
        rows = self.history_rows(address)
        commits = [
            TaggedCommit(
                version=int(row["version"]),
                timestamp=_aware(row["timestamp"]),
                operation=row["operation"],
                submission_id=row["userMetadata"],
                metrics={k: str(v) for k, v in dict(row.get("operationMetrics") or {}).items()},
            )
            for row in rows
            if row.get("userMetadata")
        ]
        return sorted(commits, key=lambda commit: commit.version)

    def commits(self, address: Address | dict) -> list[HistoryEntry]:
        rows = self.history_rows(address)
        return sorted((HistoryEntry(version=int(row["version"]), timestamp=_aware(row["timestamp"]),
                                    operation=row["operation"],
                                    parameters={k: str(v) for k, v in dict(row.get("operationParameters") or {}).items()})
                       for row in rows), key=lambda entry: entry.version)

    def max_value(self, address: Address | dict, version: int, column: str) -> str | None:
        table = quote_qualified(Address.of(address).location)
        rows = self.runner.query(
            f"SELECT CAST(max({quote_identifier(column)}) AS STRING) AS `value` FROM {table} VERSION AS OF {int(version)}"
        )
        return rows[0]["value"] if rows else None

    def row_count(self, address: Address | dict, version: int) -> int | None:
        table = quote_qualified(Address.of(address).location)
        try:
            rows = self.runner.query(f"SELECT count(*) AS `rows` FROM {table} VERSION AS OF {int(version)}")
        except Exception as exc:  # noqa: BLE001 - the error class is in the message, whatever the runner raises
            if "TABLE_OR_VIEW_NOT_FOUND" in str(exc):
                return None
            raise
        return int(rows[0]["rows"]) if rows else None


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
