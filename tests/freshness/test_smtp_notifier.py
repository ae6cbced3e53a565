"""A provider's notifier works by configuration alone: the SMTP provider's ``SmtpNotifier``,
named in the contract's gate settings with Jinja templates over ``contract_gate``, delivers the
stale alert to an SMTP server on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import email
import socketserver
import threading

import pytest
from _freshness_helpers import plan_for

from contract_gate.freshness.check import check_freshness


class SmtpHandler(socketserver.StreamRequestHandler):
    """Just enough SMTP to accept mail: greeting, EHLO, MAIL, RCPT, DATA, QUIT."""

    def handle(self):
        self.reply("220 localhost ready")
        while line := self.rfile.readline().decode():
            command = line.strip().upper()
            if command.startswith(("EHLO", "HELO")):
                self.reply("250 localhost")
            elif command.startswith(("MAIL", "RCPT", "RSET", "NOOP")):
                self.reply("250 OK")
            elif command == "DATA":
                self.reply("354 end with .")
                lines = []
                while (data := self.rfile.readline().decode()) not in (".\r\n", ""):
                    lines.append(data)
                self.server.messages.append("".join(lines))
                self.reply("250 queued")
            elif command == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("502 not implemented")

    def reply(self, text: str) -> None:
        self.wfile.write(f"{text}\r\n".encode())


@pytest.fixture
def smtp_server(monkeypatch):
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), SmtpHandler)
    server.messages = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address
    monkeypatch.setenv("AIRFLOW_CONN_SMTP_DEFAULT", f"smtp://{host}:{port}?disable_ssl=true&disable_tls=true&from_email=gate%40example.com")
    yield server
    server.shutdown()
    server.server_close()


def test_smtp_notifier_from_the_gate_settings(home, smtp_server):
    smtp = {"class": "airflow.providers.smtp.notifications.smtp.SmtpNotifier",
            "arguments": {"to": "ops@example.com",  # the sender is the platform's connection's
                          "subject": "{{ contract_gate.title }}", "html_content": "{{ contract_gate.message }}"}}
    plan = plan_for(home, alerts={"notifiers": [smtp]})
    record = check_freshness(plan, now=dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc))
    assert record["alerted"] is True
    [raw] = smtp_server.messages
    message = email.message_from_string(raw)
    assert message["Subject"] == "contract-gate: regional_daily_cases is stale"
    assert message["To"] == "ops@example.com"
    [body] = [part.get_payload(decode=True).decode() for part in message.walk() if part.get_content_type() == "text/html"]
    assert body.startswith("Accepted data of contract 'regional_daily_cases' (environment local) is STALE: "
                           "there is no accepted data yet")
