"""A contract's notifiers at delivery, where the deployment's ``[contract_gate] notifiers`` binds
(``contract_gate.contract.notifiers``, ``contract_gate.notifications.dispatch``): a plan that names a notifier, an
argument or template text the deployment does not allow (compiled under another setting, or
edited after) is refused before the class is imported; what is allowed renders against the
alert's payload and nothing else; a ``FileNotifier`` appends inside the alerts folder only.
The compiler's side is the ``alert_`` files of tests/contracts_hostile.
"""

from __future__ import annotations

import json
import sys

import pytest

from contract_gate.contract.notifiers import FILE_NOTIFIER as FILE
from contract_gate.contract.notifiers import NotifierSettingError, allowed_notifiers, notifier_problems
from contract_gate.notifications.dispatch import deliver
from contract_gate.notifications.file import AlertFileOutside, FileNotifier

PAYLOAD = {"submission_id": "sub-1", "title": "contract-gate: orders submission sub-1 quarantined",
           "message": "Submission sub-1 was QUARANTINED."}


@pytest.fixture
def alerts(tmp_path, monkeypatch):
    """The alerts folder, and a secret the deployment holds that no alert may carry."""
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__ALERTS_DIR", str(tmp_path / "alerts"))
    monkeypatch.setenv("AIRFLOW_CONN_FINANCE_DB", "postgres://finance:S3CRET-CONN-4411@db.example/finance")
    monkeypatch.setenv("AIRFLOW_VAR_FINANCE_KEY", "S3CRET-VAR-5512")
    return tmp_path / "alerts"


def test_the_alert_forms_the_docs_show_are_allowed():
    for text in ("{{ contract_gate.title }}", "<pre>{{ contract_gate.message | e }}</pre>",
                 "{{contract_gate.rule_failures|tojson}}", "{{ contract_gate.outcome | upper | trim }} rows"):
        assert notifier_problems({"class": "airflow.providers.smtp.notifications.smtp.SmtpNotifier",
                                  "arguments": {"to": ["a@example.org"], "subject": text}}) == []
    assert notifier_problems({"class": FILE, "arguments": {"path": "team/orders.jsonl"}}) == []


def test_a_notifier_renders_against_the_alert_payload_and_nothing_else(alerts, monkeypatch):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__NOTIFIERS", json.dumps({"_alert_notifiers.WritesWhatItSees": ["path"]}))
    failures = deliver({"0": {"class": "_alert_notifiers.WritesWhatItSees", "arguments": {"path": "seen.jsonl"}}},
                       PAYLOAD)
    assert failures == {}
    [line] = (alerts / "seen.jsonl").read_text().splitlines()
    seen = set(json.loads(line)["message"].split(","))
    # the alert and the notifier's own template fields; no ti, dag, conn, var, conf or macros
    assert seen == {"contract_gate", "path", "message"}


def test_a_notifier_the_deployment_does_not_allow_is_refused_before_its_module_is_imported(alerts, tmp_path,
                                                                                              monkeypatch):
    module = tmp_path / "producer_notifier.py"
    module.write_text("from pathlib import Path\n"
                      f"Path({str(tmp_path / 'imported')!r}).touch()  # a module's code runs when it is imported\n"
                      "from contract_gate.notifications.file import FileNotifier as Notifier\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ref = {"class": "producer_notifier.Notifier", "arguments": {"path": "orders.jsonl"}}
    failures = deliver({"0": ref}, PAYLOAD)
    assert "NotifierRefused" in failures["0"] and "is not one this deployment allows" in failures["0"]
    assert not (tmp_path / "imported").exists() and "producer_notifier" not in sys.modules
    # listed by the platform team, the same reference is imported and told
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__NOTIFIERS", json.dumps({"producer_notifier.Notifier": ["path"]}))
    assert deliver({"0": ref}, PAYLOAD) == {}
    assert (tmp_path / "imported").exists() and (alerts / "orders.jsonl").exists()
    sys.modules.pop("producer_notifier", None)


@pytest.mark.parametrize("arguments", [
    {"path": "orders.jsonl", "message": "{{ conn.finance_db.password }}"},
    {"path": "orders.jsonl", "message": "{{ var.value.finance_key }}"},
    {"path": "orders.jsonl", "message": "{% include 'finance_dags.py' %}"},
    {"path": "orders.jsonl", "message": "{{ contract_gate.message }}{# a comment #}"},
    {"path": "orders.jsonl", "message": "{{ contract_gate.__class__ }}"},
    {"path": "../lakehouse/sales/orders/_delta_log/00000000000000000009.json"},
    {"path": "orders.jsonl", "mode": "w"},
], ids=["connection", "variable", "include", "comment", "dunder", "outside", "unknown-argument"])
def test_a_plan_edited_past_the_compiler_is_refused_at_delivery_and_nothing_is_written(alerts, tmp_path, arguments):
    failures = deliver({"0": {"class": FILE, "arguments": arguments}}, PAYLOAD)
    assert "NotifierRefused" in failures["0"]
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == [] or all("S3CRET" not in p.read_text() for p in written)
    assert not (tmp_path / "lakehouse").exists() and not (alerts / "orders.jsonl").exists()


def test_the_file_notifier_appends_inside_the_alerts_folder_only(alerts, tmp_path):
    FileNotifier(path="team/orders.jsonl")({"contract_gate": PAYLOAD})
    assert json.loads((alerts / "team" / "orders.jsonl").read_text())["submission_id"] == "sub-1"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (alerts / "link").symlink_to(elsewhere)  # a link in the folder that leads out of it
    for path in ("link/orders.jsonl", "../orders.jsonl", str(tmp_path / "orders.jsonl"), "."):
        with pytest.raises(AlertFileOutside, match="leaves the alerts folder"):
            FileNotifier(path=path)({"contract_gate": PAYLOAD})
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "orders.jsonl").exists()


def test_the_deployment_setting_is_read_as_json_and_a_wrong_one_names_the_option(monkeypatch):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__NOTIFIERS", json.dumps({"my.company.PagerNotifier": ["*"]}))
    assert allowed_notifiers() == {"my.company.PagerNotifier": frozenset({"*"})}
    assert notifier_problems({"class": "my.company.PagerNotifier", "arguments": {"service": "x", "urgency": 1}}) == []
    assert notifier_problems({"class": FILE, "arguments": {"path": "a"}})[0][0] == ("class",)
    for wrong in ("not json", json.dumps(["a"]), json.dumps({"a.B": "path"})):
        monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__NOTIFIERS", wrong)
        with pytest.raises(NotifierSettingError, match=r"\[contract_gate\] notifiers"):
            allowed_notifiers()
