"""The pages without a server or a browser: real contracts, a real decision table (``deltalake``)
and report files as the gate writes them, rendered by ``contract_gate.pages`` and by the CLI's
``report --html`` / ``status --html``. (The browser test, test_pages_browser.py, runs real gates.)
"""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from contract_gate.cli.main import main
from contract_gate.decisions import record_decision
from contract_gate.pages import build, data
from contract_gate.pages.links import submission_of
from contract_gate.pages.render import served_links
from contract_gate.pages.report_view import QUARANTINE_SUBMISSION_COLUMN, share_text, threshold_text
from contract_gate_plan.model import Plan

REPO = Path(__file__).resolve().parents[2]
MARKER = "ZQX-CLASSIFIED-4412"
HOSTILE = "<script>alert('x')</script>"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A gate home with the example contracts (one renamed by a hostile producer)."""
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    monkeypatch.delenv("CONTRACT_GATE_WORK_DIR", raising=False)
    monkeypatch.delenv("CONTRACT_GATE_STATUS_DIR", raising=False)
    folder = tmp_path / "contracts"
    folder.mkdir()
    for name in ("regional_daily_cases.yaml", "orders.yaml"):
        shutil.copy(REPO / "contracts" / name, folder / name)
    orders = folder / "orders.yaml"
    orders.write_text(orders.read_text().replace("name: Checkout orders", f'name: "{HOSTILE}"'))
    return tmp_path


def entry_of(home: Path, contract_id: str) -> data.ContractEntry:
    found = data.find_contract(data.load_contracts(home / "contracts"), contract_id)
    assert found is not None and found.gated
    return found


def decide(plan: Plan, submission_id: str, outcome: str, rule_failures: dict[str, int], *, minutes_ago: int = 0,
           report_path: str | None = None, **fields) -> dict:
    record = {
        "submission_id": submission_id, "contract_id": plan.document["contract"]["id"],
        "contract_version": plan.document["contract"]["version"], "plan_fingerprint": plan.document["fingerprint"],
        "outcome": outcome, "rule_failures": rule_failures, "failed_rules": list(rule_failures),
        "rows_landed": 10, "rows_published": 0 if outcome == "quarantined" else 10 - sum(rule_failures.values()),
        "rows_quarantined": sum(rule_failures.values()) if outcome != "published" else 0,
        "dag_id": plan.document["contract"]["id"], "run_id": f"manual__{submission_id}", "try_number": 1,
        "report_path": report_path,
        "decided_at": (datetime.now(timezone.utc) - timedelta(minutes=minutes_ago)).isoformat(), **fields,
    }
    return record_decision(plan, record)


def write_report(home: Path, plan: Plan, submission_id: str, rules: list[dict], *, schema: dict | None = None) -> Path:
    """A report file where the validate task writes it, in the report format (report_version 1)."""
    folder = home / "lakehouse" / "_runs" / plan.document["contract"]["id"] / submission_id
    folder.mkdir(parents=True)
    by_id = {rule["id"]: rule for rule in plan.document["rules"]}
    entries = []
    for rule in plan.document["rules"]:
        given = next((r for r in rules if r["id"] == rule["id"]), {})
        entries.append({"id": rule["id"], "kind": rule["kind"], "scope": rule["scope"], "columns": rule.get("columns", []),
                        "severity": rule["severity"], "threshold": rule.get("threshold"), "status": "evaluated",
                        "failed_rows": given.get("failed_rows", 0), "evaluated_rows": 10, "measured": None,
                        "passed": given.get("failed_rows", 0) == 0, "reason": None,
                        **({"sample": given["sample"]} if "sample" in given else {})})
    assert all(r["id"] in by_id for r in rules)
    report = {"report_version": 1, "contract": {"id": plan.document["contract"]["id"], "version": plan.document["contract"]["version"]},
              "plan_fingerprint": plan.document["fingerprint"], "submission_id": submission_id, "environment": "dev",
              "depth": "all", "candidate": {"table": f"/cand/{submission_id}", "version": 0, "format": "delta", "row_count": 10},
              "schema": schema or {"ok": True, "policy": "strict", "missing": [], "unexpected": [], "type_mismatches": []},
              "rules": entries, "outcome": "fail" if any(r.get("failed_rows") for r in rules) else "pass",
              "rows": {"valid": 10 - sum(r.get("failed_rows", 0) for r in rules), "invalid": sum(r.get("failed_rows", 0) for r in rules)},
              "timings": {}}
    path = folder / "report.json"
    path.write_text(json.dumps(report))
    return path


def rule_rows(html: str) -> list[tuple[str, bool, str]]:
    """(rule id, failing, failed rows cell) of the rules table, in page order."""
    rows = re.findall(r'<tr class="(failing|)" data-rule="([^"]+)">.*?<td class="num failed-rows">([^<]*)</td>', html, re.S)
    return [(rule, cls == "failing", cell) for cls, rule, cell in rows]


def test_report_page_lists_failing_rules_first_with_counts_and_shares(home):
    entry = entry_of(home, "regional_daily_cases")
    plan = entry.plan
    path = write_report(home, plan, "sub-1", [{"id": "status.enum", "failed_rows": 1},
                                             {"id": "case_count.minimum", "failed_rows": 3}])
    decide(plan, "sub-1", "quarantined", {"status.enum": 1, "case_count.minimum": 3}, report_path=str(path))
    html = build.report_page(entry, "sub-1")
    rows = rule_rows(html)
    assert [rule for rule, failing, _ in rows[:2]] == ["case_count.minimum", "status.enum"]  # plan order among failing
    assert [(failing, cell) for _, failing, cell in rows[:2]] == [(True, "3"), (True, "1")]
    assert not any(failing for _, failing, _ in rows[2:]) and len(rows) == len(plan.rules)
    assert "30.0 %" in html and "10.0 %" in html
    assert 'id="rows-quarantined">10<' not in html and 'id="rows-quarantined">4<' in html
    assert "regional_daily_cases_quarantine" in html and f"{QUARANTINE_SUBMISSION_COLUMN} = &#39;sub-1&#39;" in html
    assert "contract-gate rerun" in html and "--correction" not in html  # quarantined: a plain re-run
    assert "<script" not in html


def test_a_sample_is_shown_only_for_sample_allowed_unclassified_columns(home):
    entry = entry_of(home, "regional_daily_cases")
    plan = entry.plan
    # a forged report: the gate never samples reporting_org (classified); the page must not show it either
    path = write_report(home, plan, "sub-2", [
        {"id": "region_code.not_blank", "failed_rows": 1, "sample": {"region_code": [" "], "reporting_org": [MARKER]}},
        {"id": "case_count.minimum", "failed_rows": 1, "sample": {"case_count": [-5]}}])
    decide(plan, "sub-2", "quarantined", {"region_code.not_blank": 1, "case_count.minimum": 1}, report_path=str(path))
    html = build.report_page(entry, "sub-2")
    assert MARKER not in html
    assert "sample of region_code" in html
    assert "sample of case_count" not in html  # not marked sampleAllowed
    assert "sample of reporting_org" not in html


def test_text_from_a_hostile_contract_or_batch_is_escaped(home):
    entry = entry_of(home, "orders")
    plan = entry.plan
    bad_column = '<img src=x onerror="alert(1)">'
    path = write_report(home, plan, "sub-3", [{"id": "currency_allowed", "failed_rows": 2}],
                        schema={"ok": False, "policy": "strict", "missing": [], "unexpected": [bad_column],
                                "type_mismatches": []})
    decide(plan, "sub-3", "split", {"currency_allowed": 2}, report_path=str(path))
    pages = [build.report_page(entry, "sub-3", links=served_links("/contract-gate")),
             build.contracts_page(data.load_contracts(home / "contracts"), links=served_links("/contract-gate"))]
    for html in pages:
        assert "<script" not in html and "<img" not in html and 'onerror="' not in html
        assert "default-src 'none'" in html  # and no script could run even if one slipped through
    assert "&lt;script&gt;" in pages[1] and "&lt;img src=x onerror=" in pages[0]


def test_a_report_path_outside_the_work_folder_is_never_read(home, tmp_path_factory):
    entry = entry_of(home, "orders")
    plan = entry.plan
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "report.json"
    forged = json.loads(write_report(home, plan, "sub-4", [{"id": "currency_allowed", "failed_rows": 1}]).read_text())
    forged["schema"]["unexpected"] = [MARKER]
    elsewhere.write_text(json.dumps(forged))
    decide(plan, "sub-4", "split", {"currency_allowed": 1}, report_path=str(elsewhere))
    html = build.report_page(entry, "sub-4")
    assert MARKER not in html  # the work folder's own report.json of sub-4 was read instead
    assert rule_rows(html)[0] == ("currency_allowed", True, "1")


def test_the_rerun_chain_links_both_ways(home):
    entry = entry_of(home, "orders")
    plan = entry.plan
    decide(plan, "first", "quarantined", {"currency_allowed": 2}, minutes_ago=5)
    decide(plan, "second", "published", {}, rerun_of="first")
    links = served_links("/cg")
    first = build.report_page(entry, "first", links=links)
    second = build.report_page(entry, "second", links=links)
    assert 'href="/cg/contracts/orders/submissions/second"' in first
    assert 'href="/cg/contracts/orders/submissions/first"' in second
    assert "--correction" in second and "--correction" not in first  # a published batch re-runs only as a correction
    # without its report file the page still lists the failing rules from the decision record
    assert rule_rows(first) == [("currency_allowed", True, "2")]
    assert "not readable here" in first


def test_a_submission_without_a_verdict_is_not_final_and_is_gated_again(home):
    entry = entry_of(home, "orders")
    decide(entry.plan, "broken", "failed", {}, reason="task(s) stage_validate failed before a verdict; see their logs")
    html = build.report_page(entry, "broken")
    assert "not final" in html and "stage_validate failed" in html
    assert "contract-gate run " in html and "contract-gate rerun" not in html


def test_contracts_page_counts_and_chart_cover_the_last_n_decisions(home):
    plan = entry_of(home, "orders").plan
    decide(plan, "o1", "split", {"currency_allowed": 1, "order_total_not_negative": 2}, minutes_ago=40)
    decide(plan, "o2", "split", {"currency_allowed": 3}, minutes_ago=30)
    decide(plan, "o3", "published", {}, minutes_ago=20)
    decide(plan, "o4", "quarantined", {"currency_allowed": 4}, minutes_ago=10)
    html = build.contracts_page(data.load_contracts(home / "contracts"), last=3)
    card = html.split('data-contract="orders"')[1].split("</section>")[0]
    counts = dict(re.findall(r'data-outcome="(\w+)">.*?<strong class="count">(\d+)</strong>', card, re.S))
    assert counts == {"published": "1", "split": "1", "quarantined": "1", "failed": "0"}  # o1 is older than the last 3
    bars = re.findall(r'data-rule="([^"]+)" data-submissions="(\d+)" data-rows="(\d+)"', card)
    assert bars == [("currency_allowed", "2", "7")]
    regional = html.split('data-contract="regional_daily_cases"')[1].split("</section>")[0]
    assert "no decisions yet" in regional and 'class="badge stale"' in regional  # an SLA and no accepted data


def test_cli_writes_both_pages_as_self_contained_files(home, tmp_path):
    entry = entry_of(home, "orders")
    path = write_report(home, entry.plan, "sub-5", [{"id": "currency_allowed", "failed_rows": 2}])
    decide(entry.plan, "sub-5", "split", {"currency_allowed": 2}, report_path=str(path))
    contract = str(home / "contracts" / "orders.yaml")
    assert main(["report", contract, "sub-5", "--html", str(tmp_path / "report.html")]) == 0
    assert main(["status", "--contracts-dir", str(home / "contracts"), "--html", str(tmp_path / "status.html")]) == 1
    for name in ("report.html", "status.html"):
        html = (tmp_path / name).read_text()
        assert "<style>" in html and "<script" not in html and "<link" not in html and 'src="' not in html
    assert rule_rows((tmp_path / "report.html").read_text())[0] == ("currency_allowed", True, "2")
    assert 'data-contract="orders"' in (tmp_path / "status.html").read_text()
    assert main(["report", contract, "no-such-submission"]) == 1
    assert main(["report", contract, "../../etc/passwd"]) == 2


def test_the_quarantine_submission_column_is_the_spark_sides():
    from contract_gate_spark.steps.quarantine import SUBMISSION

    assert QUARANTINE_SUBMISSION_COLUMN == SUBMISSION


def test_the_extra_link_names_the_submission_of_either_gate_task():
    assert submission_of({"submission_id": "s1", "contract": {"id": "orders"}, "outcome": "fail"}) == ("orders", "s1", None)
    assert submission_of({"submission_id": "s1", "contract_id": "orders", "object": "lines", "outcome": "split"}) \
        == ("orders", "s1", "lines")
    assert submission_of(None) is None and submission_of({"outcome": "split"}) is None


def test_thresholds_and_shares_read_as_a_person_says_them():
    assert threshold_text({"operator": "mustBeLessThan", "value": 5, "unit": "percent"}) == "< 5 %"
    assert threshold_text({"operator": "mustBeBetween", "value": [1, 10], "unit": "rows"}) == "between 1 and 10 rows"
    assert share_text(1, 8) == "12.5 %" and share_text(1, 100_000) == "0.001 %" and share_text(None, 8) is None


def test_markup_in_a_hostile_contract_renders_as_text(home):
    """tests/contracts_hostile/page_markup_in_text.yaml: markup in the name, the version, a DQX
    check's name (which becomes a rule id) and descriptions; both pages show it as text."""
    shutil.copy(REPO / "tests" / "contracts_hostile" / "page_markup_in_text.yaml", home / "contracts")
    entry = entry_of(home, "page_markup_in_text")
    rule_id = next(rule.id for rule in entry.plan.rules if rule.id.startswith("amount_ok"))
    assert "<script>" in rule_id  # the attack reached the plan: the pages are what must hold
    path = write_report(home, entry.plan, "sub-h", [{"id": rule_id, "failed_rows": 2}])
    decide(entry.plan, "sub-h", "quarantined", {rule_id: 2}, report_path=str(path))
    report = build.report_page(entry, "sub-h", links=served_links("/contract-gate"))
    listing = build.contracts_page(data.load_contracts(home / "contracts"), links=served_links("/contract-gate"))
    for html in (report, listing):
        for markup in ("<script", "<img", "<svg onload", "<iframe", "</td><script"):
            assert markup not in html
    assert "amount_ok&lt;/td&gt;&lt;script&gt;" in report and "&lt;script&gt;alert(&#39;name&#39;)" in listing
    assert rule_rows(report)[0][1:] == (True, "2")


def test_a_catalog_target_shows_the_freshness_dags_last_record_and_queries_no_warehouse(home, tmp_path, monkeypatch):
    from contract_gate.freshness.status import StatusStore

    monkeypatch.setenv("CONTRACT_GATE_STATUS_DIR", str(tmp_path / "status"))
    entries = data.load_contracts(home / "contracts", env="prod")  # regional_daily_cases on Unity Catalog
    regional = data.find_contract(entries, "regional_daily_cases")
    assert regional.plan.tables.target.kind == "table"
    html = build.contracts_page([regional])
    assert "has not checked the catalog table yet" in html and "error" not in html.split("<body>")[1]
    StatusStore(tmp_path / "status").write({
        "contract_id": "regional_daily_cases", "gate": "regional_daily_cases", "state": "stale", "age_seconds": 3 * 86400, "sla_seconds": 172800,
        "sla": {"property": "freshness", "value": 2, "unit": "d", "column": "report_date"},
        "latest_accepted_date": "2025-03-01", "latest_accepted_date_withheld": False,
        "latest_accepted_submission": "s-9", "checked_at": "2025-03-04T00:00:00Z"})
    html = build.contracts_page([regional])
    assert 'class="badge stale"' in html and "<strong>3d</strong> old" in html and "check at 2025-03-04T00:00:00Z" in html
    assert "decisions in catalog table" in html  # read where the catalog is, not from the page


def audit_line(home: Path, contract_id: str) -> tuple[str, str]:
    """(state, text) of the contract's audit line on the contracts page."""
    html = build.contracts_page(data.load_contracts(home / "contracts"))
    card = html.split(f'data-contract="{contract_id}"')[1].split("</section>")[0]
    state, text = re.search(r'<p class="audit" data-audit="([^"]+)">(.*?)</p>', card, re.S).groups()
    return state, " ".join(html_module.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def test_the_contracts_page_shows_the_retention_dags_last_audit(home):
    """The page's audit line is what the retention DAG's ``audit_decisions`` task recorded: none
    before it ran, clean after a clean audit, the number and kinds of disagreements (never their
    messages) after one that failed, each with its time."""
    from contract_gate.airflow_compat import AirflowFailException
    from contract_gate.operators.audit import GateAuditOperator

    class TaskInstance:
        def __init__(self) -> None:
            self.pushed: dict = {}

        def xcom_push(self, key: str, value) -> None:
            self.pushed[key] = value

    assert audit_line(home, "orders") == (
        "not audited yet", "audit of the decision log not audited yet the retention DAG's daily audit_decisions task has not run")
    task = GateAuditOperator(task_id="audit_decisions", contract=str(home / "contracts" / "orders.yaml"))
    assert task.execute({"ti": TaskInstance()})["findings"] == []
    state, text = audit_line(home, "orders")
    assert state == "clean" and re.fullmatch(
        r"audit of the decision log clean 0 final decision\(s\) and 0 tagged commit\(s\) agree with the tables "
        r"\(the retention DAG's audit at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00\)", text), text
    assert audit_line(home, "regional_daily_cases")[0] == "not audited yet"  # its own record, not orders'

    decide(entry_of(home, "orders").plan, "o-gone", "published", {})  # 10 rows published, no commit holds them
    ti = TaskInstance()
    with pytest.raises(AirflowFailException, match="decision_without_commit"):
        task.execute({"ti": ti})
    state, text = audit_line(home, "orders")
    assert state == "disagreement" and "1 disagreement(s): decision_without_commit × 1" in text, text
    assert "o-gone" not in text  # the page names kinds; the task's log and XCom name the submission
    assert ti.pushed["return_value"]["findings"][0]["submission_id"] == "o-gone"
