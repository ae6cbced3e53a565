"""The one client of a Databricks workspace: ``databricks-sdk``'s ``WorkspaceClient`` made from an
Airflow ``databricks`` connection.

Everything the gate asks of Databricks goes through :class:`DatabricksWorkspaceHook`: the jobs
(``runs/submit``, a run's state, the active one-time runs, ``runs/cancel``), the work files and
the Spark side's wheel in a Unity Catalog volume (the Files API, ``/Volumes/<catalog>/<schema>/<volume>/...``), the SQL
statements (GRANTs, catalog landings' history, the catalog decision log, freshness) on a SQL
warehouse through the Statement Execution API, and the tables API with its temporary
credentials (catalog landings read without a warehouse).

The connection is read as the databricks provider reads it (its ``_get_token``), for the kinds of
authentication the SDK has a credential of its own for:

* a personal access token: the password with no login, or ``token`` in the extra;
* an OAuth machine-to-machine service principal: ``service_principal_oauth: true`` in the extra,
  the client id as login and its secret as password;
* an Azure service principal: ``azure_tenant_id`` in the extra, the application id as login and
  its secret as password;
* an Azure managed identity: ``use_azure_managed_identity: true`` in the extra (``login`` may name a
  user-assigned identity's client id).

The host is ``host`` in the extra, else the connection's host (``https://`` unless the
connection's schema is ``http``, as the local emulation's is), with its port.
The gate's own settings live under ``contract_gate`` in the same extra (:meth:`settings`).
"""

from __future__ import annotations

import io
import json
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from functools import cached_property
from typing import Any

from airflow.sdk import BaseHook
from databricks.sdk import WorkspaceClient
from databricks.sdk.config import Config
from databricks.sdk.errors import NotFound, OperationFailed
from databricks.sdk.service import jobs, sql
from databricks.sdk.service.catalog import GenerateTemporaryTableCredentialResponse, TableInfo, TableOperation

from contract_gate.hooks.errors import StatementFailed

DEFAULT_CONN_ID = "databricks_default"
STATEMENT_WAIT = "30s"  # the Statement Execution API's longest wait in the call; slower statements are cancelled


class DatabricksWorkspaceHook(BaseHook):
    """A Databricks workspace through ``databricks-sdk``.

    :param databricks_conn_id: the Airflow connection (type ``databricks``).
    """

    conn_name_attr = "databricks_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = "databricks"
    hook_name = "Databricks workspace (contract-gate)"

    def __init__(self, databricks_conn_id: str = DEFAULT_CONN_ID) -> None:
        super().__init__()
        self.databricks_conn_id = databricks_conn_id

    @cached_property
    def connection(self):
        return self.get_connection(self.databricks_conn_id)

    @cached_property
    def client(self) -> WorkspaceClient:
        return WorkspaceClient(config=workspace_config(self.connection))

    def settings(self) -> dict[str, Any]:
        """The ``contract_gate`` settings in the connection's extra."""
        return dict(self.connection.extra_dejson.get("contract_gate") or {})

    # -- the Files API: a Unity Catalog volume ----------------------------------------------
    def upload(self, path: str, data: bytes) -> None:
        self.client.files.upload(path, io.BytesIO(data), overwrite=True)

    def download(self, path: str) -> bytes:
        """The file's bytes; :class:`FileNotFoundError` when there is none."""
        try:
            contents = self.client.files.download(path).contents
        except NotFound as exc:
            raise FileNotFoundError(path) from exc
        if contents is None:
            return b""
        with contents:
            return contents.read()

    def remove_folder(self, path: str) -> None:
        """Delete the volume folder ``path`` and everything in it (the Files API deletes only an
        empty folder: its files and sub-folders go first); nothing when it is not there."""
        try:
            entries = list(self.client.files.list_directory_contents(path))
            for entry in entries:
                if entry.path is None:
                    continue
                if entry.is_directory:
                    self.remove_folder(entry.path)
                else:
                    self.client.files.delete(entry.path)
            self.client.files.delete_directory(path)
        except NotFound:
            return

    def last_change(self, path: str) -> datetime | None:
        """When a file in the volume folder ``path`` or below was last written; None when it holds
        no file (the Files API gives a folder no time of its own) or is not there."""
        newest = self._newest_write(path)
        return None if newest is None else datetime.fromtimestamp(newest / 1000, timezone.utc)

    def _newest_write(self, path: str) -> int | None:
        """The newest ``last_modified`` (milliseconds since the epoch) of the files in ``path`` and below."""
        try:
            times = [self._newest_write(entry.path) if entry.is_directory else entry.last_modified
                     for entry in self.client.files.list_directory_contents(path) if entry.path is not None]
        except NotFound:
            return None
        return max((written for written in times if written is not None), default=None)

    def folders(self, path: str) -> list[str]:
        """The paths of the folders in the volume folder ``path``; none when it is not there."""
        try:
            return [entry.path for entry in self.client.files.list_directory_contents(path)
                    if entry.is_directory and entry.path is not None]
        except NotFound:
            return []

    def exists(self, path: str) -> bool:
        try:
            self.client.files.get_metadata(path)
        except NotFound:
            return False
        return True

    # -- jobs ------------------------------------------------------------------------------
    def submit_run(self, *, run_name: str, tasks: list[jobs.SubmitTask],
                   environments: list[jobs.JobEnvironment] | None = None,
                   timeout_seconds: int | None = None) -> int:
        """Submit a one-time run (``runs/submit``; tasks and environments in the SDK's models); its run id."""
        waiter = self.client.jobs.submit(run_name=run_name, tasks=tasks, environments=environments,
                                         timeout_seconds=timeout_seconds)
        return int(waiter.run_id)

    def get_run(self, run_id: int) -> jobs.Run:
        return self.client.jobs.get_run(run_id)

    def cancel_run(self, run_id: int) -> None:
        self.client.jobs.cancel_run(run_id)

    def active_runs(self) -> list[jobs.BaseRun]:
        """The workspace's one-time runs (``runs/submit``) not yet ended: pending, running or terminating."""
        return list(self.client.jobs.list_runs(active_only=True, run_type=jobs.RunType.SUBMIT_RUN))

    def end_run(self, run_id: int, timeout: timedelta) -> None:
        """Cancel ``run_id`` and wait until it has ended (the SDK's waiter); a ``TimeoutError`` when it
        still goes after ``timeout``."""
        try:
            self.client.jobs.cancel_run(run_id).result(timeout=timeout)
        except OperationFailed:  # it ended in INTERNAL_ERROR, which is an end as well
            pass

    def run_error(self, run: jobs.Run) -> str:
        """The error of the run's failed task (its output), or "" when it tells none."""
        for task in run.tasks or []:
            if task.run_id is None or task.state is None or task.state.result_state == jobs.RunResultState.SUCCESS:
                continue
            try:
                output = self.client.jobs.get_run_output(task.run_id)
            except NotFound:
                continue
            if output.error:
                return output.error
        return ""

    # -- SQL statements on a warehouse -----------------------------------------------------
    def run_statement(self, statement: str, warehouse_id: str) -> list[dict[str, Any]]:
        """Run one statement on the SQL warehouse, waiting for it in the call; its rows as dicts
        keyed by column name, values typed by the result's schema.

        :raises StatementFailed: the warehouse did not run it (the error code is in the message)."""
        response = self.client.statement_execution.execute_statement(
            statement=statement, warehouse_id=warehouse_id, wait_timeout=STATEMENT_WAIT,
            on_wait_timeout=sql.ExecuteStatementRequestOnWaitTimeout.CANCEL,
            disposition=sql.Disposition.INLINE, format=sql.Format.JSON_ARRAY)
        status = response.status
        if status is None or status.state != sql.StatementState.SUCCEEDED:
            error = status.error if status is not None else None
            state = status.state.value if status is not None and status.state is not None else "UNKNOWN"
            code = error.error_code.value if error is not None and error.error_code is not None else state
            raise StatementFailed(f"{code}: {error.message if error is not None else ''}")
        columns = response.manifest.schema.columns if response.manifest and response.manifest.schema else None
        columns = columns or []
        data = list(response.result.data_array or []) if response.result else []
        chunk = response.result.next_chunk_index if response.result else None
        while chunk is not None:  # a result over one inline chunk
            part = self.client.statement_execution.get_statement_result_chunk_n(str(response.statement_id), chunk)
            data += part.data_array or []
            chunk = part.next_chunk_index
        names = [column.name or "" for column in columns]
        kinds = [column.type_name for column in columns]
        return [{name: typed(value, kind) for name, value, kind in zip(names, row, kinds)} for row in data]

    # -- Unity Catalog tables --------------------------------------------------------------
    def table(self, full_name: str) -> TableInfo | None:
        """The catalog's record of a table; None when it has none."""
        try:
            return self.client.tables.get(full_name)
        except NotFound:
            return None

    def read_credentials(self, table_id: str) -> GenerateTemporaryTableCredentialResponse:
        """Short-lived storage credentials to read the table's files."""
        return self.client.temporary_table_credentials.generate_temporary_table_credentials(
            table_id=table_id, operation=TableOperation.READ)


def workspace_config(connection: Any) -> Config:
    """The SDK's configuration for an Airflow ``databricks`` connection (see the module doc)."""
    return Config(**config_settings(connection))


def config_settings(connection: Any) -> dict[str, Any]:
    """The SDK ``Config`` settings of an Airflow ``databricks`` connection: its host and one kind
    of authentication, chosen in the order the databricks provider chooses."""
    extra = connection.extra_dejson
    host = str(extra.get("host") or connection.host or "")
    if not host:
        raise ValueError(f"connection {connection.conn_id!r} names no Databricks host")
    if "://" not in host:
        scheme = "http" if connection.schema == "http" else "https"
        host = f"{scheme}://{host}" + (f":{connection.port}" if connection.port else "")
    login, password = connection.login or None, connection.password or None
    if "token" in extra:
        return {"host": host, "token": extra["token"], "auth_type": "pat"}
    if password and not login:
        return {"host": host, "token": password, "auth_type": "pat"}
    if "azure_tenant_id" in extra:
        return {"host": host, "azure_client_id": login, "azure_client_secret": password,
                "azure_tenant_id": extra["azure_tenant_id"], "auth_type": "azure-client-secret"}
    if extra.get("use_azure_managed_identity"):
        return {"host": host, "azure_client_id": login, "azure_use_msi": True, "auth_type": "azure-msi"}
    if extra.get("service_principal_oauth"):
        return {"host": host, "client_id": login, "client_secret": password, "auth_type": "oauth-m2m"}
    raise ValueError(f"connection {connection.conn_id!r}: give a personal access token (the password, no login), "
                     "an OAuth service principal (service_principal_oauth), an Azure service principal "
                     "(azure_tenant_id) or an Azure managed identity (use_azure_managed_identity)")


def typed(value: str | None, kind: sql.ColumnInfoTypeName | None) -> Any:
    """A ``JSON_ARRAY`` result value (always text) as the Python value of its column type."""
    if value is None:
        return None
    if kind in (sql.ColumnInfoTypeName.LONG, sql.ColumnInfoTypeName.INT, sql.ColumnInfoTypeName.SHORT,
                sql.ColumnInfoTypeName.BYTE):
        return int(value)
    if kind == sql.ColumnInfoTypeName.BOOLEAN:
        return value.lower() == "true"
    if kind in (sql.ColumnInfoTypeName.DOUBLE, sql.ColumnInfoTypeName.FLOAT):
        return float(value)
    if kind == sql.ColumnInfoTypeName.DECIMAL:
        return Decimal(value)
    if kind == sql.ColumnInfoTypeName.TIMESTAMP:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    if kind == sql.ColumnInfoTypeName.DATE:
        return date.fromisoformat(value)
    if kind in (sql.ColumnInfoTypeName.ARRAY, sql.ColumnInfoTypeName.MAP, sql.ColumnInfoTypeName.STRUCT):
        return json.loads(value)
    return value



def run_event(hook: DatabricksWorkspaceHook, run_id: int) -> dict[str, Any] | None:
    """The ended run ``run_id`` as an event (run id, life-cycle and result states, message, the
    failed task's error); None while it is not terminal."""
    run = hook.get_run(run_id)
    state = run.state or jobs.RunState()
    life_cycle = state.life_cycle_state
    if life_cycle not in (jobs.RunLifeCycleState.TERMINATED, jobs.RunLifeCycleState.SKIPPED,
                          jobs.RunLifeCycleState.INTERNAL_ERROR):
        return None
    result = state.result_state
    return {"run_id": run_id, "life_cycle_state": life_cycle.value if life_cycle else None,
            "result_state": result.value if result else None, "state_message": state.state_message or "",
            "error": "" if result == jobs.RunResultState.SUCCESS else hook.run_error(run)}
