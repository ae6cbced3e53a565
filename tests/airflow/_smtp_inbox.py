"""A real SMTP server on 127.0.0.1 (aiosmtpd, in a thread of the test process) and what it received.

``refuse_first`` makes the server answer the first N messages with a temporary failure (451), as
a mail relay under load does, so a sender's retry can be seen. ``connection(...)`` is the Airflow
SMTP connection (plain SMTP, no TLS, no hook-level retries) as an ``AIRFLOW_CONN_*`` value.
"""

from __future__ import annotations

import json
import socket
import threading
from email import message_from_bytes, policy
from email.message import EmailMessage


def free_port() -> int:
    """A port nothing listens on now (also what a test uses for a server that is down)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def connection(port: int) -> str:
    return json.dumps({"conn_type": "smtp", "host": "127.0.0.1", "port": port, "login": "", "password": "",
                       "extra": {"disable_tls": True, "disable_ssl": True, "retry_limit": 0, "timeout": 10,
                                 "from_email": "gate@example.org"}})


class Inbox:
    """The messages accepted (``messages``) and every DATA attempt (``attempts``)."""

    def __init__(self, refuse_first: int = 0) -> None:
        self.refuse_first = refuse_first
        self.attempts = 0
        self.messages: list[EmailMessage] = []
        self.raw: list[bytes] = []
        self._lock = threading.Lock()
        self._controller = None
        self.port = None

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's handler hook
        with self._lock:
            self.attempts += 1
            if self.attempts <= self.refuse_first:
                return "451 4.3.0 try again later"
            self.raw.append(envelope.content)
            self.messages.append(message_from_bytes(envelope.content, policy=policy.default))
        return "250 OK"

    def start(self) -> Inbox:
        from aiosmtpd.controller import Controller

        self.port = free_port()
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()

    def text(self, message: EmailMessage) -> str:
        """The message's body parts as text."""
        return "\n".join(part.get_content() for part in message.walk() if part.get_content_maintype() == "text")
