"""A notifier that appends each notification as one JSON line to a file.

For local runs (``tail -f`` the alerts), for feeding a log shipper, and for tests that need a
real notifier whose deliveries can be read back.
"""

from __future__ import annotations

import json
from pathlib import Path

from airflow.sdk import BaseNotifier


class FileNotifier(BaseNotifier):
    """:param path: file to append to (created with its folder); templated.
    :param message: the text to record; templated, by default the gate's ready-made message."""

    template_fields = ("path", "message")

    def __init__(self, *, path: str, message: str = "{{ contract_gate.message }}"):
        super().__init__()
        self.path = path
        self.message = message

    def notify(self, context) -> None:
        line = {**(context.get("contract_gate") or {}), "message": self.message}
        target = Path(self.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(line, sort_keys=True, default=str) + "\n")
