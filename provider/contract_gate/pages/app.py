"""The FastAPI app that the Airflow plugin mounts on the api-server under ``/contract-gate``.

Routes (HTML):

* ``/contract-gate/``: the contracts page, a card per schema object (``?last=N`` decisions per
  object for the counts and the chart, default 50; ``?dag_id=`` only the contract whose gate DAG
  that is);
* ``/contract-gate/contracts/<contract id>/submissions/<submission id>[?object=<name>]``: a report
  page (the object is needed when the contract gates several).

Access goes through Airflow's own authentication and auth manager: the reader is the user of
the request's Airflow session (the UI's cookie, or a bearer token), and a contract is shown only
to a user who may read its gate DAG (``is_authorized_dag``, method GET; the DAG's id is derived
from the contract's id, the plan's ``names.dag_id``). A report also needs read access to every DAG whose runs decided the submission
(its records' ``dag_id``). Anyone else gets 401 (not signed in) or 403, and the page's data is not
even read. Airflow is imported when a request arrives, not when the plugin is loaded, so loading
plugins in a worker or the scheduler costs nothing.

The contracts are the DAG factory's folder (``[contract_gate] contracts_dir``) compiled for
``[contract_gate] env``; tables resolve against ``CONTRACT_GATE_HOME``: the api-server needs the
same settings as the DAG processor.
"""

from __future__ import annotations

from html import escape
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from contract_gate import config
from contract_gate.pages import build, data
from contract_gate.pages.render import served_links
from contract_gate.pages.urls import URL_PREFIX
# No script, nothing fetched, framed only by the Airflow UI of the same origin.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


async def airflow_user(request: Request) -> Any:
    """The signed-in Airflow user, resolved exactly as the core API resolves it (bearer token,
    else the UI's session cookie); raises 401 without one."""
    from airflow.api_fastapi.core_api.security import bearer_scheme, get_user  # Airflow: per request (module doc)

    return await get_user(request, None, await bearer_scheme(request))


User = Annotated[Any, Depends(airflow_user)]


def readable_dags(user: Any) -> set[str]:
    """The DAG ids ``user`` may read, from the auth manager (one query for the whole page)."""
    from airflow.api_fastapi.app import get_auth_manager  # Airflow: per request (module doc)

    return get_auth_manager().get_authorized_dag_ids(user=user, method="GET")


def may_read_dag(user: Any, dag_id: str) -> bool:
    # Airflow: per request (module doc)
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagDetails
    from airflow.models.dag import DagModel

    details = DagDetails(id=dag_id, team_name=DagModel.get_team_name(dag_id))
    return get_auth_manager().is_authorized_dag(method="GET", details=details, user=user)


def contract_entries() -> list[data.ContractEntry]:
    return data.load_contracts(config.contracts_dir(), config.get("env"))


def html(text: str, status_code: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status_code)


def create_app(prefix: str = URL_PREFIX) -> FastAPI:
    app = FastAPI(title="contract-gate pages", docs_url=None, redoc_url=None, openapi_url=None)
    links = served_links(prefix)

    @app.exception_handler(HTTPException)
    async def refused(request: Request, exc: HTTPException) -> HTMLResponse:
        # Airflow's dependencies raise 401/403 with a short detail; a reader gets a small page.
        sign_in = ""
        if exc.status_code == 401:  # not signed in: point at Airflow's own sign-in page
            from airflow.api_fastapi.app import get_auth_manager  # Airflow: per request (module doc)

            sign_in = f'<p><a href="{escape(get_auth_manager().get_url_login())}">Sign in to Airflow</a></p>'
        return html(f"<!doctype html><title>{exc.status_code}</title><h1>{exc.status_code}</h1>"
                    f"<p>{escape(str(exc.detail))}</p>{sign_in}", exc.status_code)

    @app.get("/", response_class=HTMLResponse)
    def contracts(user: User, last: Annotated[int, Query(ge=1, le=10_000)] = build.DEFAULT_LAST,
                  dag_id: str | None = None) -> HTMLResponse:
        allowed = readable_dags(user)
        entries = [entry for entry in contract_entries() if dag_id is None or entry.dag_id == dag_id]
        return html(build.contracts_page(entries, last=last, links=links,
                                         visible=lambda entry: entry.dag_id in allowed))

    @app.get("/contracts/{contract_id}/submissions/{submission_id}", response_class=HTMLResponse)
    def report(user: User, contract_id: str, submission_id: str,
               object_name: Annotated[str | None, Query(alias="object")] = None) -> HTMLResponse:
        entry = data.find_contract(contract_entries(), contract_id, object_name)
        if entry is None:
            which = f" object {object_name!r}" if object_name else " (name its object: ?object=)"
            raise HTTPException(404, f"no gated contract {contract_id!r}{which} here")
        plan = entry.require_plan()  # a found contract is a gated one: it compiled
        if not may_read_dag(user, plan.names.dag_id):
            raise HTTPException(403, f"you may not read the DAG {plan.names.dag_id}, so not its reports")
        try:
            records = data.submission_decisions(plan, submission_id)
        except ValueError:  # not a submission id (check_submission_id): nothing can match it
            raise HTTPException(404, "no such submission") from None
        refused_dags = sorted(dag for dag in build.deciding_dags(entry, records) if not may_read_dag(user, dag))
        if refused_dags:
            raise HTTPException(403, f"you may not read the DAG(s) that decided this submission: {', '.join(refused_dags)}")
        try:
            return html(build.report_page(entry, submission_id, links=links, records=records))
        except build.UnknownSubmission as exc:
            raise HTTPException(404, str(exc)) from None

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # on every response, errors included
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    return app
