"""The Airflow plugin (entry point ``airflow.plugins``): the gate's pages on the api-server.

* ``fastapi_apps``: :mod:`contract_gate.pages.app` mounted under ``/contract-gate``;
* ``external_views``: "Data contracts" in the UI's navigation (Browse menu), and a "Gate reports"
  tab on each DAG's page showing the contract whose gate DAG it is. Both are shown inside the
  Airflow UI (``url_route``), on the same origin, so the UI's session signs the reader in.

The gate tasks' extra link (:class:`contract_gate.pages.links.GateReportLink`) is declared on
the operators themselves; Airflow 3 needs no plugin for it.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from contract_gate.pages.app import create_app
from contract_gate.pages.urls import URL_PREFIX


class ContractGatePagesPlugin(AirflowPlugin):
    name = "contract_gate_pages"
    fastapi_apps = [{"app": create_app(URL_PREFIX), "url_prefix": URL_PREFIX, "name": "contract-gate pages"}]
    external_views = [
        {"name": "Data contracts", "href": f"{URL_PREFIX}/", "destination": "nav", "category": "browse",
         "url_route": "contract-gate"},
        {"name": "Gate reports", "href": f"{URL_PREFIX}/?dag_id={{DAG_ID}}", "destination": "dag",
         "url_route": "contract-gate-dag"},
    ]
