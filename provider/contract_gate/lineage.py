"""OpenLineage facets of the gate tasks, built from the plan and the task's own results.

The OpenLineage provider calls ``get_openlineage_facets_on_start`` / ``_on_complete`` on each
gate operator (:class:`GateLineageMixin`); this module says what the datasets are:

* ``stage_validate``: the landing in, the candidate (the frozen batch, at its Delta version) out;
* ``publish`` / ``quarantine`` / ``split``: the candidate in, with the contract's schema and a
  data-quality assertions facet (each rule id and whether it passed); the target and/or the
  quarantine table out, the target with its new Delta version.

Every dataset and run carries tags naming the contract id, version and plan fingerprint, so a
lineage tool shows which contract version let a table version through. Nothing here holds a
data value: rule ids, kinds, columns, severities and pass/fail only (a rule's measured value is
left out on purpose: a ``type: sql`` rule may measure a data value), and row counts nowhere.

The operators import this module at DAG parse time, so each function imports the OpenLineage
classes it builds: they load only when the listener asks for facets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from airflow.sdk import BaseHook

from contract_gate.airflow_compat import AirflowNotFoundException
from contract_gate_plan.addresses import Address
from contract_gate_plan.model import Plan

SOURCE = "contract-gate"
DATABRICKS_CONNECTION = "databricks_default"  # the catalog's connection when neither the table nor the gate names one


def dataset_id(address: Address | dict, connection_id: str | None = None) -> tuple[str, str]:
    """(namespace, name) of a table address (a plan's, or a step result's document), after
    OpenLineage's naming spec: ``file`` and the absolute path for a local path, ``scheme://authority``
    and the path for a URI, and for a catalog (Unity Catalog) table ``databricks://{workspace host}``
    and its ``catalog.schema.table`` name. The workspace is the host of the table's own
    connection, else ``connection_id`` (the gate's Databricks connection), else
    ``databricks_default``: the connection the gate reaches the table through."""
    address = Address.of(address)
    if not address.is_path:
        return catalog_namespace(address.connection or connection_id or DATABRICKS_CONNECTION), address.location
    path = address.location
    parts = urlsplit(path)
    if parts.scheme and parts.scheme != "file" and len(parts.scheme) > 1:
        return f"{parts.scheme}://{parts.netloc}", parts.path
    return "file", parts.path if parts.scheme == "file" else str(Path(path))


def catalog_namespace(connection_id: str) -> str:
    """``databricks://{workspace host}`` of the Databricks connection ``connection_id``; ``databricks``
    (as Airflow's Databricks provider names a workspace it does not know) when there is no such
    connection or it names no host."""
    try:
        connection = BaseHook.get_connection(connection_id)
    except AirflowNotFoundException:
        return "databricks"
    host = str(connection.extra_dejson.get("host") or connection.host or "")
    host = urlsplit(host if "://" in host else f"https://{host}").hostname or ""
    return f"databricks://{host}" if host else "databricks"


def gate_connection(plan: Plan) -> str | None:
    """The contract's Databricks connection (``execution.connectionId`` of a ``databricks`` gate)."""
    execution = plan.execution
    return execution.get("connectionId") if execution.get("mode") == "databricks" else None


def contract_tags(plan: Plan) -> list[tuple[str, str]]:
    return [("contract", plan.contract_id), ("contract_version", plan.contract_version),
            ("plan_fingerprint", plan.fingerprint)]


def schema_facet(plan: Plan):
    from openlineage.client.facet_v2 import schema_dataset  # at facet time (module doc)

    return schema_dataset.SchemaDatasetFacet(fields=[
        schema_dataset.SchemaDatasetFacetFields(name=c.name, type=c.type, description=c.description,
                                                ordinal_position=position)
        for position, c in enumerate(plan.columns, start=1)
    ])


def assertions_facet(report: dict):
    """Each evaluated rule of the report: id, kind, column (for a one-column rule), severity,
    passed. Rules that were not evaluated (e.g. skipped after a schema failure) are left out."""
    from openlineage.client.facet_v2 import data_quality_assertions_dataset as dq  # at facet time (module doc)

    return dq.DataQualityAssertionsDatasetFacet(assertions=[
        dq.Assertion(assertion=rule["kind"], success=bool(rule["passed"]), name=rule["id"],
                     column=rule["columns"][0] if len(rule.get("columns") or []) == 1 else None,
                     severity=rule["severity"])
        for rule in report["rules"] if rule.get("passed") is not None
    ])


def _dataset_facets(plan: Plan, *, schema: bool, version: int | None = None) -> dict[str, Any]:
    from openlineage.client.facet_v2 import dataset_version_dataset, tags_dataset  # at facet time (module doc)

    facets: dict[str, Any] = {"tags": tags_dataset.TagsDatasetFacet(tags=[
        tags_dataset.TagsDatasetFacetFields(key=key, value=value, source=SOURCE) for key, value in contract_tags(plan)
    ])}
    if schema:
        facets["schema"] = schema_facet(plan)
    if version is not None:
        facets["version"] = dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(version))
    return facets


def input_dataset(plan: Plan, address: Address | dict, *, schema: bool = False, version: int | None = None,
                  report: dict | None = None):
    from openlineage.client.event_v2 import InputDataset  # at facet time (module doc)

    namespace, name = dataset_id(address, gate_connection(plan))
    input_facets = {"dataQualityAssertions": assertions_facet(report)} if report is not None else {}
    return InputDataset(namespace=namespace, name=name, facets=_dataset_facets(plan, schema=schema, version=version),
                        inputFacets=input_facets)


def output_dataset(plan: Plan, address: Address | dict, *, schema: bool = False, version: int | None = None):
    from openlineage.client.event_v2 import OutputDataset  # at facet time (module doc)

    namespace, name = dataset_id(address, gate_connection(plan))
    return OutputDataset(namespace=namespace, name=name, facets=_dataset_facets(plan, schema=schema, version=version))


def run_facets(plan: Plan, submission_id: str | None, outcome: str | None) -> dict[str, Any]:
    from openlineage.client.facet_v2 import tags_run  # at facet time (module doc)

    tags = [*contract_tags(plan), *((("submission_id", submission_id),) if submission_id else ()),
            *((("gate_outcome", outcome),) if outcome else ())]
    return {"tags": tags_run.TagsRunFacet(tags=[tags_run.TagsRunFacetFields(key=k, value=v, source=SOURCE)
                                                for k, v in tags])}


def read_report(summary: dict | None) -> dict | None:
    """The validation report the summary points at (owner-only work file), or None."""
    path = (summary or {}).get("report_path")
    if not path or not Path(path).is_file():
        return None
    return json.loads(Path(path).read_text(encoding="utf-8"))


def validation_lineage(plan: Plan, submission: dict | None, summary: dict | None):
    """``stage_validate``: landing in, candidate out (at its version once staged)."""
    from airflow.providers.openlineage.extractors import OperatorLineage  # at facet time (module doc)

    landing = (submission or {}).get("landing") or plan.require_tables().landing
    candidate = (summary or {}).get("candidate") or {}
    outputs = [output_dataset(plan, candidate["candidate"], schema=True, version=candidate.get("version"))] \
        if candidate.get("candidate") else []
    inputs = [input_dataset(plan, landing)] if landing is not None else []  # a run that failed before knowing it
    return OperatorLineage(inputs=inputs, outputs=outputs,
                           run_facets=run_facets(plan, (summary or submission or {}).get("submission_id"),
                                                 (summary or {}).get("outcome")))


def outcome_lineage(plan: Plan, steps: str, summary: dict | None, result: dict | None):
    """``publish`` / ``quarantine`` / ``split``: the validated candidate in (schema, assertions),
    the tables the step wrote out (before it ran: the tables it will write)."""
    from airflow.providers.openlineage.extractors import OperatorLineage  # at facet time (module doc)

    candidate = (summary or {}).get("candidate") or {}
    inputs = [input_dataset(plan, candidate["candidate"], schema=True, version=candidate.get("version"),
                            report=read_report(summary))] if candidate.get("candidate") else []
    writes = {"publish": ("target",), "quarantine": ("quarantine",), "split": ("target", "quarantine")}[steps]
    outputs, outcome = [], None
    for role in writes:
        step = {"target": "publish", "quarantine": "quarantine"}[role]
        done = (result or {}).get(step)
        if result is not None and not done:
            continue  # a split that had nothing to quarantine, or to publish
        version = (done or {}).get("target_version_after" if role == "target" else "version")
        tables = plan.require_tables()
        address = tables.require_target() if role == "target" else tables.require_quarantine()
        outputs.append(output_dataset(plan, address, schema=role == "target", version=version))
        outcome = (done or {}).get("status") or outcome
    if (result or {}).get("publish") and (result or {}).get("quarantine"):
        outcome = "split"  # one step that published some rows and quarantined the others
    return OperatorLineage(inputs=inputs, outputs=outputs,
                           run_facets=run_facets(plan, (summary or {}).get("submission_id"), outcome))


class GateLineageMixin:
    """The OpenLineage provider's facet methods for a gate operator: the operator keeps the
    result of its ``execute`` in ``lineage_result``, and says which datasets it touches in
    ``lineage_of(plan, result)``."""

    lineage_result: Any = None

    def lineage_of(self, plan: Plan, result: Any):
        raise NotImplementedError

    def get_openlineage_facets_on_start(self):
        return self.lineage_of(self.load_plan(), None)

    def get_openlineage_facets_on_complete(self, task_instance):
        return self.lineage_of(self.load_plan(), self.lineage_result)

    def get_openlineage_facets_on_failure(self, task_instance):
        return self.lineage_of(self.load_plan(), self.lineage_result)
