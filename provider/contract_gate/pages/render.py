"""HTML of the two pages: one Jinja environment with autoescaping on, so every text that comes
from a contract (names, rule ids, descriptions) or a batch (unexpected column names) is escaped.

The same rendering serves the Airflow plugin and the CLI's ``--html`` files; only the links
differ: in Airflow a submission links to its report page, in a single file it is plain text.
Each page is one self-contained document: inline CSS and SVG, no script, nothing fetched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cache
from importlib.metadata import PackageNotFoundError, version
import jinja2

from contract_gate.pages.urls import report_path


@dataclass(frozen=True)
class Links:
    """Where a page links to: ``report(contract_id, submission_id, object_name)`` gives the report
    page's URL (or None: plain text), ``contracts`` the contracts page's (or None)."""

    report: Callable[[str, str, str | None], str | None]
    contracts: str | None = None


def _no_report_link(contract_id: str, submission_id: str, object_name: str | None = None) -> str | None:
    return None


NO_LINKS = Links(report=_no_report_link)


def served_links(prefix: str) -> Links:
    """The links of pages served under ``prefix`` (e.g. ``/contract-gate``)."""

    def report(contract_id: str, submission_id: str, object_name: str | None = None) -> str | None:
        return report_path(prefix, contract_id, submission_id, object_name)

    return Links(report=report, contracts=f"{prefix}/")


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("contract_gate.pages", "templates"),
        autoescape=True,  # every template, whatever its file name
        undefined=jinja2.StrictUndefined,  # a misspelt field is an error, not an empty cell
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_report(view: dict, links: Links = NO_LINKS) -> str:
    return _render("report.html", r=view, links=links)


def render_contracts(view: dict, links: Links = NO_LINKS, restricted: bool = False) -> str:
    """``restricted``: the list holds only the contracts the reader may see."""
    return _render("contracts.html", page=view, links=links, restricted=restricted)


def _render(template: str, **context) -> str:
    try:
        installed = version("airflow-provider-contract-gate")
    except PackageNotFoundError:
        installed = "(not installed)"
    rendered_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return environment().get_template(template).render(version=installed, rendered_at=rendered_at, **context)
