"""The alert on every rejection (``alerts.onRejection``) through Airflow's SmtpNotifier to a real SMTP
server on 127.0.0.1 (aiosmtpd): what the alert says, its retry, and, through ``dag.test()`` of
generated gate DAGs, that a rejected batch sends exactly one e-mail with counts and no classified
value, that ``failRunOnRejection`` fails the run after the decision is recorded, and that a mail
server that is down leaves the decision recorded.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import pytest
import yaml
from _airflow_gate import HOME, REPO, gate_home
from _landing_contracts import case_rows, land_csv, write_contract
from _smtp_inbox import Inbox, connection, free_port

from contract_gate.contract.compiler import compile_plan
from contract_gate.decisions import final_decision
from contract_gate.notifications.rejection import alert_rejection, rejection_payload
from contract_gate.operators.record import GateRecordDecisionOperator
from contract_gate_plan.model import Plan, load_plan


CONTRACTS = HOME / "rejection_alert_contracts"
ALERTED = "cases_rejection_alerted"  # failRunOnRejection, mail server up
UNDELIVERED = "cases_rejection_undelivered"  # mail server down
SECRET = "ZQX-ALERT-CLASSIFIED-5521"  # a reporting_org (classification: restricted) value to trace
SMTP_UP, SMTP_DOWN = "contract_gate_alerts_smtp", "contract_gate_alerts_smtp_down"
DAG_FILE = "rejection_alert_dags.py"
DAGS = f'''"""Gate DAGs of tests/airflow/test_rejection_alerts.py (written by the test, removed after it)."""
from contract_gate.dag_factory import contract_dag

for name in ({ALERTED!r}, {UNDELIVERED!r}):
    globals()[name] = contract_dag({str(CONTRACTS)!r} + f"/{{name}}/{{name}}.yaml")
'''


# What this deployment lets contracts name (``[contract_gate] notifiers``): its SMTP connections too.
NOTIFIERS = json.dumps({
    "airflow.providers.smtp.notifications.smtp.SmtpNotifier": ["to", "subject", "html_content", "smtp_conn_id"],
    "contract_gate.notifications.file.FileNotifier": ["path", "message"],
    "_alert_notifiers.KillsTheTaskOnce": ["path", "marker"]})


@pytest.fixture(scope="module", autouse=True)
def allowed_notifiers():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AIRFLOW__CONTRACT_GATE__NOTIFIERS", NOTIFIERS)
        yield


def smtp_notifier(conn_id: str) -> dict:
    return {"class": "airflow.providers.smtp.notifications.smtp.SmtpNotifier",
            "arguments": {"to": "producer@example.org", "smtp_conn_id": conn_id,
                          "subject": "{{ contract_gate.title }}",
                          "html_content": "<pre>{{ contract_gate.message | e }}</pre>"}}


def alerting_contract(contract_id: str, conn_id: str, **alerts) -> Plan:
    """The example contract under ``contract_id`` with a rejection alert by e-mail, in a folder of
    its own (it gates the same object as the other); returns its plan."""
    path = write_contract(CONTRACTS / contract_id, contract_id)
    document = yaml.safe_load(path.read_text())
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    gate["alerts"] = {"onRejection": [smtp_notifier(conn_id)], **alerts}
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    with gate_home():  # its tables resolve against the gate's home, as the DAG's do
        return compile_plan(path)


def regional_plan(**alerts) -> Plan:
    document = copy.deepcopy(compile_plan(REPO / "contracts" / "regional_daily_cases.yaml").document)
    document["gate"]["alerts"].update(alerts)
    document.pop("fingerprint")
    return load_plan(document)


QUARANTINED = {"submission_id": "sub-7", "outcome": "quarantined", "reason": None,
               "rule_failures": {"status.enum": 2, "case_count.minimum": 1},
               "failed_rules": ["case_count.minimum", "status.enum", "submission_not_empty"],
               "rows_landed": 3, "rows_published": 0, "rows_quarantined": 3,
               "latest_business_date": "2031-07-04", "dag_id": "regional_daily_cases", "run_id": "manual__1"}


@pytest.fixture(scope="module")
def inbox():
    server = Inbox().start()
    try:
        yield server
    finally:
        server.stop()


def test_the_alert_names_contract_submission_counts_and_report_and_carries_no_value():
    payload = rejection_payload(regional_plan(), QUARANTINED, "https://airflow.example/contract-gate/x")
    assert payload["title"] == "contract-gate: regional_daily_cases submission sub-7 quarantined"
    assert payload["rule_failures"] == {"case_count.minimum": 1, "status.enum": 2}
    assert payload["message"].splitlines() == [
        "Submission sub-7 of contract regional_daily_cases 1.0.0, object regional_daily_cases, environment local "
        "was QUARANTINED.",
        "Rows: 3 landed, 0 published, 3 quarantined.",
        "Failing rules: case_count.minimum: 1 row(s); status.enum: 2 row(s); submission_not_empty: failed.",
        "Report: https://airflow.example/contract-gate/x",
        "Airflow run: regional_daily_cases / manual__1",
    ]
    assert "2031-07-04" not in json.dumps(payload)  # the business date is a data value


def test_a_failed_submission_is_alerted_with_the_reason_it_failed():
    failed = {**QUARANTINED, "outcome": "failed", "rule_failures": {}, "failed_rules": [], "rows_quarantined": 0,
              "reason": "task(s) stage_validate failed before a verdict; see their logs"}
    payload = rejection_payload(regional_plan(), failed, "/contract-gate/x")
    assert payload["title"].endswith("submission sub-7 failed")
    assert payload["message"].splitlines()[1:4] == [
        "Why: task(s) stage_validate failed before a verdict; see their logs",
        "Rows: 3 landed, 0 published, 0 quarantined.", "Failing rules: none."]


def test_contract_text_in_an_alert_stays_on_its_line():
    plan = replace(regional_plan(), contract_id="orders\r\nBcc: everyone@example.org")
    hostile = {**QUARANTINED, "failed_rules": ["x\nReport: https://evil.example"], "rule_failures": {}}
    payload = rejection_payload(plan, hostile, "/contract-gate/x")
    assert "\n" not in payload["title"] and "\r" not in payload["title"]
    assert [line for line in payload["message"].splitlines() if line.startswith("Report:")] == [
        "Report: /contract-gate/x"]


def test_a_refused_message_is_sent_again_and_arrives_once(monkeypatch):
    server = Inbox(refuse_first=1).start()  # a relay that answers 451 once
    try:
        monkeypatch.setenv(f"AIRFLOW_CONN_{SMTP_UP.upper()}", connection(server.port))
        plan = regional_plan(onRejection=[smtp_notifier(SMTP_UP)])
        assert alert_rejection(plan, QUARANTINED, "/contract-gate/x", backoff_seconds=0) == {}
        assert server.attempts == 2 and len(server.messages) == 1
        assert server.messages[0]["Subject"] == "contract-gate: regional_daily_cases submission sub-7 quarantined"
        assert "status.enum: 2 row(s)" in server.text(server.messages[0])
    finally:
        server.stop()


def test_a_notifier_that_keeps_failing_is_reported_after_a_bounded_number_of_tries(monkeypatch, tmp_path):
    monkeypatch.setenv(f"AIRFLOW_CONN_{SMTP_DOWN.upper()}", connection(free_port()))
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__ALERTS_DIR", str(tmp_path))
    delivered = tmp_path / "alerts.jsonl"
    plan = regional_plan(onRejection=[smtp_notifier(SMTP_DOWN), {
        "class": "contract_gate.notifications.file.FileNotifier", "arguments": {"path": delivered.name}}])
    failures = alert_rejection(plan, QUARANTINED, "/contract-gate/x", attempts=3, backoff_seconds=0)
    assert list(failures) == ["0:airflow.providers.smtp.notifications.smtp.SmtpNotifier"]
    assert "ConnectionRefusedError" in failures["0:airflow.providers.smtp.notifications.smtp.SmtpNotifier"]
    # the working notifier was told once, not once per retry of the failing one
    assert [json.loads(line)["submission_id"] for line in delivered.read_text().splitlines()] == ["sub-7"]


def test_a_published_decision_or_a_contract_without_rejection_notifiers_alerts_nobody(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__ALERTS_DIR", str(tmp_path))
    delivered = tmp_path / "alerts.jsonl"
    plan = regional_plan(onRejection=[{"class": "contract_gate.notifications.file.FileNotifier",
                                       "arguments": {"path": delivered.name}}])
    assert alert_rejection(plan, {**QUARANTINED, "outcome": "published"}, "/x") == {}
    assert alert_rejection(regional_plan(), QUARANTINED, "/x") == {}
    assert not delivered.exists()


@pytest.fixture(scope="module")
def alert_gates(gate, inbox):
    """Two generated gate DAGs with a rejection alert by e-mail: one to the running server with
    ``failRunOnRejection``, one to a port where no server listens."""
    plans = {ALERTED: alerting_contract(ALERTED, SMTP_UP, failRunOnRejection=True),
             UNDELIVERED: alerting_contract(UNDELIVERED, SMTP_DOWN)}
    (gate.dags / DAG_FILE).write_text(DAGS)
    gate.reset_bag()
    try:
        yield gate, plans
    finally:
        (gate.dags / DAG_FILE).unlink()
        gate.reset_bag()


def bad_batch(contract_id: str, region: str) -> None:
    rows = case_rows("2025-05-01", region=region, bad=True)
    for row in rows:
        row["reporting_org"] = SECRET
    land_csv(contract_id, rows)


def recorded(plan: Plan, run) -> dict:
    with gate_home():
        return final_decision(plan, run.xcoms["submission"]["submission_id"])


@pytest.mark.slow  # a gate run: two Spark jobs
@pytest.mark.usefixtures("gates_over_connect")  # what the gate decides, not where Spark runs
def test_a_rejected_batch_sends_one_mail_without_values_and_fails_the_run_after_recording(
        alert_gates, inbox, monkeypatch):
    gate, plans = alert_gates
    monkeypatch.setenv(f"AIRFLOW_CONN_{SMTP_UP.upper()}", connection(inbox.port))
    before = len(inbox.messages)
    bad_batch(ALERTED, "A")
    run = gate.run(ALERTED)

    decision = recorded(plans[ALERTED], run)
    assert decision["outcome"] == "quarantined"
    assert decision["rule_failures"] == {"case_count.minimum": 1, "status.enum": 1}
    assert run.states["quarantine"] == "success" and run.states["record_decision"] == "failed"
    assert run.dagrun.state == "failed"  # failRunOnRejection: red, after the decision was recorded
    assert run.decision["submission_id"] == decision["submission_id"]  # the task still returns it
    assert gate.version(f"lakehouse/{ALERTED}") is None  # nothing was published

    mails = inbox.messages[before:]
    assert len(mails) == 1
    body = inbox.text(mails[0])
    assert mails[0]["Subject"] == f"contract-gate: {ALERTED} submission {decision['submission_id']} quarantined"
    assert "case_count.minimum: 1 row(s); status.enum: 1 row(s)" in body
    assert f"/contract-gate/contracts/{ALERTED}/submissions/{decision['submission_id']}" in body
    assert SECRET not in b"".join(inbox.raw[before:]).decode("utf-8", "replace")


@pytest.mark.slow  # a gate run: two Spark jobs
@pytest.mark.usefixtures("gates_over_connect")  # what the gate decides, not where Spark runs
def test_a_mail_server_that_is_down_leaves_the_decision_recorded(alert_gates, inbox, monkeypatch):
    gate, plans = alert_gates
    monkeypatch.setenv(f"AIRFLOW_CONN_{SMTP_DOWN.upper()}", connection(free_port()))
    before = len(inbox.messages)
    bad_batch(UNDELIVERED, "B")
    run = gate.run(UNDELIVERED)

    decision = recorded(plans[UNDELIVERED], run)
    assert decision["outcome"] == "quarantined" and decision["rows_quarantined"] == 3
    assert decision["rule_failures"] == {"case_count.minimum": 1, "status.enum": 1}
    # the undelivered alert is the task's failure, named; the decision is the one recorded
    assert run.states["record_decision"] == "failed"
    assert run.decision == decision
    assert len(inbox.messages) == before


class RecordTaskInstance:
    """What the record operator reads of its task instance, for one try of run ``manual__1``: the
    submission and a quarantine step's result (XCom), and the tasks' states. Everything else is
    real: the operator, the decision store and the notifiers."""

    dag_id, run_id = "regional_daily_cases", "manual__1"

    def __init__(self, try_number: int):
        self.try_number = try_number

    def xcom_pull(self, task_ids: str, key: str | None = None):
        if key is None and task_ids == "submission":
            return {"submission_id": "0123456789abcdef"}
        if key is None and task_ids == "quarantine":
            return {"quarantine": {"status": "quarantined", "rows": 3}}
        return None

    def get_task_states(self, dag_id, task_ids, run_ids):
        return {self.run_id: {"quarantine": "success"}}

    def xcom_push(self, key, value) -> None:
        pass


def test_a_record_task_killed_while_it_alerted_has_its_retry_tell_the_notifiers_not_told(tmp_path, monkeypatch):
    """The decision is recorded, one notifier told, and the task is killed before the next: its
    retry finds the decision recorded and tells the rest, each once; a later try tells nobody."""
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__ALERTS_DIR", str(tmp_path))
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    document = yaml.safe_load((REPO / "contracts" / "regional_daily_cases.yaml").read_text())
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    gate.setdefault("alerts", {})["onRejection"] = [
        {"class": "contract_gate.notifications.file.FileNotifier", "arguments": {"path": first.name}},
        {"class": "_alert_notifiers.KillsTheTaskOnce", "arguments": {"path": second.name,
                                                                    "marker": str(tmp_path / "killed")}}]
    contract = tmp_path / "regional_daily_cases.yaml"
    contract.write_text(yaml.safe_dump(document, sort_keys=False))
    task_ids = {role: role for role in ("submission", "stage_validate", "branch", "publish", "quarantine", "split")}

    def record(try_number: int) -> dict:
        operator = GateRecordDecisionOperator(task_id="record_decision", contract=str(contract), task_ids=task_ids)
        return operator.execute({"ti": RecordTaskInstance(try_number)})

    with pytest.raises(SystemExit):
        record(1)
    plan = compile_plan(contract)
    assert final_decision(plan, "0123456789abcdef")["outcome"] == "quarantined"  # recorded before the alert
    assert len(first.read_text().splitlines()) == 1 and not second.exists()

    assert record(2)["try_number"] == 1  # the retry finds the first try's decision...
    assert len(first.read_text().splitlines()) == 1  # ...and tells the notifier that was not told, once
    assert [json.loads(line)["submission_id"] for line in second.read_text().splitlines()] == ["0123456789abcdef"]
    record(3)  # a cleared task of the same run: everyone was told
    assert len(first.read_text().splitlines()) == 1 and len(second.read_text().splitlines()) == 1
