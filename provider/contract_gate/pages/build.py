"""Build a page from the contracts folder: read, shape, render. What the Airflow plugin serves
and what ``contract-gate report --html`` / ``status --html`` write, by the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from contract_gate.decisions.record import Decision
from contract_gate.pages import data
from contract_gate.pages.contracts_view import contracts_view
from contract_gate.pages.render import NO_LINKS, Links, render_contracts, render_report
from contract_gate.pages.report_view import report_view

DEFAULT_LAST = 50  # decisions per contract that the counts and the chart cover


class UnknownSubmission(LookupError):
    """No contract of that id in the folder, or no record or report of that submission."""


def contracts_page(entries: list[data.ContractEntry], *, last: int = DEFAULT_LAST, links: Links = NO_LINKS,
                   visible: Callable[[data.ContractEntry], bool] | None = None) -> str:
    """The contracts page of ``entries`` (those ``visible`` says the reader may see)."""
    shown = [entry for entry in entries if visible is None or visible(entry)]
    now = datetime.now(timezone.utc).replace(microsecond=0)
    decisions = data.recent_decisions([entry.require_plan() for entry in shown if entry.gated], last)
    view = contracts_view(shown, decisions, now, last)
    return render_contracts(view, links, restricted=visible is not None and len(shown) < len(entries))


def report_page(entry: data.ContractEntry, submission_id: str, *, links: Links = NO_LINKS,
                contract_file: Path | None = None, records: list[Decision] | None = None) -> str:
    """The report page of one submission of ``entry``'s contract. Raises ``UnknownSubmission``
    when the gate has neither a decision nor a report of it."""
    return render_report(report_model(entry, submission_id, contract_file, records), links)


def report_model(entry: data.ContractEntry, submission_id: str, contract_file: Path | None = None,
                 records: list[Decision] | None = None) -> dict:
    """The data of the report page (``contract-gate report`` prints it as JSON); ``records``:
    the submission's decision records when the caller has read them already."""
    plan = entry.require_plan()
    if records is None:
        records = data.submission_decisions(plan, submission_id)
    final = next((record for record in records if record.final), records[0] if records else None)
    report = data.stored_report(plan, final, submission_id)
    if not records and report is None:
        raise UnknownSubmission(f"contract {entry.contract_id} (object {entry.object}) has no decision and no "
                                f"report of submission {submission_id}")
    return report_view(plan, contract_file or entry.file, submission_id, records, report,
                       data.reruns_of(plan, submission_id))


def deciding_dags(entry: data.ContractEntry, records: list[Decision]) -> set[str]:
    """The DAGs whose runs decided the submission (a reader must be allowed to read each): the
    ``dag_id`` of its records, else the contract's generated gate DAG (``names.dag_id``)."""
    return {record.dag_id for record in records if record.dag_id} or {entry.require_plan().names.dag_id}
