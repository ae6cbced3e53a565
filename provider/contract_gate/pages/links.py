"""The gate tasks' operator extra link: "Gate report", to the submission's report page.

Airflow 3 computes an extra link on the worker when the task ends and keeps it as an XCom, which
the UI shows as a button on the task instance. The link is built from the task's own return
value (the validate task's summary or the record task's decision: both name the contract and
the submission); a task that returned nothing gets no link. The URL is the plugin's page on the
api-server: ``[api] base_url`` when it is set (so the link works behind a proxy path), else a
path on the UI's own origin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from airflow.sdk import BaseOperatorLink
from airflow.sdk.execution_time.xcom import XCom  # the configured XCom backend, as tasks read it

from contract_gate.airflow_compat import conf
from contract_gate.pages.urls import URL_PREFIX, report_path

if TYPE_CHECKING:
    from airflow.sdk import BaseOperator
    from airflow.sdk.types import TaskInstanceKey


class GateReportLink(BaseOperatorLink):
    """Opens the report page of the submission the task worked on."""

    name = "Gate report"

    def get_link(self, operator: BaseOperator, *, ti_key: TaskInstanceKey) -> str:
        returned = XCom.get_value(ti_key=ti_key, key="return_value")
        ids = submission_of(returned)
        if ids is None:
            return ""
        return base_url() + report_path(URL_PREFIX, *ids)


def submission_of(returned: object) -> tuple[str, str, str | None] | None:
    """(contract id, submission id, schema object or None) from a validate summary or a decision record."""
    if not isinstance(returned, dict) or not returned.get("submission_id"):
        return None
    contract_id = returned.get("contract_id") or (returned.get("contract") or {}).get("id")
    return (contract_id, returned["submission_id"], returned.get("object")) if contract_id else None


def base_url() -> str:
    """The path (or origin and path) the UI is served under, without a trailing slash."""
    return (conf.get("api", "base_url", fallback="") or "").rstrip("/")
