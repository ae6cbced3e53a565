"""The version of a landing given as a catalog table (Unity Catalog, a Hive metastore), without Spark.

A catalog table whose storage location the catalog gives is read through its own Delta log with
``deltalake``, like a path landing: Unity Catalog's tables API (through
:class:`~contract_gate.hooks.databricks.DatabricksWorkspaceHook`, ``databricks-sdk``) names the
location, and its temporary table credentials (``READ``) are the short-lived storage access
delta-rs needs, held in memory for that one read. No SQL warehouse starts for it.

A table without a location the catalog gives (a view, a table of ``hive_metastore``, a name without
its catalog), or in storage whose credentials delta-rs cannot take (GCS's OAuth token, R2), is
asked of the connection's SQL warehouse through the Statement Execution API (``DESCRIBE
HISTORY``, the newest commit only; :class:`~contract_gate.decisions.unity_catalog.SqlRunner`). The connection is the landing's ``connection``, else the gate's execution
connection, else ``databricks_default``. A landing given by path (also a table name that the
server maps to a path) is read through its Delta log directly
(:func:`contract_gate.submission.delta_version`).

The batch is that version: the submission id derives from it, and a new version is a new batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from contract_gate_plan.addresses import Address

_MISSING = ("TABLE_OR_VIEW_NOT_FOUND", "DELTA_TABLE_NOT_FOUND", "DELTA_MISSING_DELTA_TABLE", "TABLE_DOES_NOT_EXIST")


class TableNotFound(LookupError):
    """The catalog has no such table: nothing has landed."""


@dataclass(frozen=True)
class TableStorage:
    """Where a catalog table's Delta log is, and the short-lived access delta-rs reads it with."""

    location: str
    storage_options: dict[str, str] | None = field(default=None, repr=False)  # never printed


def catalog_version(landing: Address | dict, runner: Any = None, connection_id: str | None = None,
                    hook: Any = None) -> int | None:
    """The newest Delta version of the catalog table ``landing``, or None when it does not exist.

    :param runner: what runs the SQL (``query(sql) -> rows``); given, the warehouse is asked
        directly. By default a :class:`~contract_gate.decisions.unity_catalog.SqlRunner` on the
        Databricks connection, for a table without a location the catalog gives.
    :param hook: the ``DatabricksWorkspaceHook`` of the catalog's API; by default one on that connection."""
    from contract_gate.delta_tables import newest_version  # deltalake and pyarrow: on first use

    landing = Address.of(landing)
    conn_id = landing.connection or connection_id or "databricks_default"
    if runner is None:
        try:
            storage = table_storage(landing, hook or _databricks_hook(conn_id))
        except TableNotFound:
            return None
        if storage is not None:
            return newest_version(storage.location, storage.storage_options)
        from contract_gate.decisions.unity_catalog import SqlRunner  # the warehouse's client, at run time only

        runner = SqlRunner(databricks_conn_id=conn_id)
    try:
        rows = runner.query(f"DESCRIBE HISTORY {landing.sql_name} LIMIT 1")
    except Exception as exc:  # the engines name a missing table by error class, whatever the exception type
        if any(code in str(exc) for code in _MISSING):
            return None
        raise
    return int(rows[0]["version"]) if rows else None


def table_storage(landing: Address, hook: Any) -> TableStorage | None:
    """The storage of the Unity Catalog table ``landing`` as delta-rs reads it; None when the
    warehouse must be asked instead (see the module doc).

    :raises TableNotFound: the catalog has no such table."""
    name = landing.name or ""
    parts = name.split(".")
    if len(parts) != 3 or parts[0].lower() == "hive_metastore":
        return None
    table = hook.table(name)
    if table is None:
        raise TableNotFound(name)
    location = table.storage_location
    kind = table.data_source_format.value if table.data_source_format is not None else "DELTA"
    if not location or kind.upper() != "DELTA":
        return None
    if urlsplit(location).scheme in ("", "file"):  # a local metastore's table: no credentials to ask for
        return TableStorage(location)
    options = delta_rs_options(hook.read_credentials(str(table.table_id)).as_dict())
    return TableStorage(location, options) if options is not None else None


def delta_rs_options(granted: dict[str, Any]) -> dict[str, str] | None:
    """delta-rs ``storage_options`` of Unity Catalog's temporary credentials; None for a kind
    delta-rs takes no short-lived token of."""
    if aws := granted.get("aws_temp_credentials"):
        options = {"AWS_ACCESS_KEY_ID": aws.get("access_key_id"), "AWS_SECRET_ACCESS_KEY": aws.get("secret_access_key"),
                   "AWS_SESSION_TOKEN": aws.get("session_token")}
        return {key: value for key, value in options.items() if value}
    if sas := granted.get("azure_user_delegation_sas"):
        return {"AZURE_STORAGE_SAS_TOKEN": sas["sas_token"]}
    if aad := granted.get("azure_aad"):
        return {"AZURE_STORAGE_TOKEN": aad["aad_token"]}
    return None


def _databricks_hook(conn_id: str) -> Any:
    from contract_gate.hooks.databricks import DatabricksWorkspaceHook  # the SDK, at run time only

    return DatabricksWorkspaceHook(conn_id)
