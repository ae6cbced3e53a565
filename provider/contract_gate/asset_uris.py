"""The provider's Asset URI scheme, ``table://<catalog table name>``: the URI of a gate's target or
landing Asset when that table is a catalog (Unity Catalog) table; a path table's Asset has its
``file://`` or object-store URI.

Registered in the provider info (``asset-uris``), so Airflow checks such a URI wherever a DAG
names one, and the OpenLineage provider names the Asset's dataset as the gate's own facets name
the table (:func:`contract_gate.lineage.dataset_id`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

from contract_gate.lineage import dataset_id

SCHEME = "table"


def table_uri(name: str) -> str:
    """The Asset URI of the catalog table ``name`` (``catalog.schema.table``)."""
    return f"{SCHEME}://{name}"


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """Airflow's check of a ``table://`` URI: a table name of one to three non-empty parts, and
    nothing else (no path, query, user or port). Raises ``ValueError``, which Airflow reports as
    the DAG's import error."""
    parts = uri.netloc.split(".")
    if uri.path not in ("", "/") or uri.query or "@" in uri.netloc or ":" in uri.netloc \
            or not 1 <= len(parts) <= 3 or not all(parts):
        raise ValueError(f"a {SCHEME}:// Asset URI names a catalog table (catalog.schema.table) and nothing else, "
                         f"not {urlunsplit(uri)!r}")
    return uri


def convert_asset_to_openlineage(asset: Any, lineage_context: Any) -> Any:
    """The OpenLineage dataset of a ``table://`` Asset: the table in its Databricks workspace."""
    from openlineage.client.event_v2 import Dataset  # the listener's classes, only when it asks (as lineage's facets)

    namespace, name = dataset_id({"kind": "table", "name": urlsplit(asset.uri).netloc})
    return Dataset(namespace=namespace, name=name)
