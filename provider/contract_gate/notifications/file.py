"""A notifier that appends each notification as one JSON line to a file in the alerts folder.

For local runs (``tail -f`` the alerts), for feeding a log shipper, and for tests that need a
real notifier whose deliveries can be read back. Its ``path`` comes from a contract, so it is a
file inside the deployment's alerts folder (``[contract_gate] alerts_dir``) and nowhere else:
a path that leaves it (``..``, an absolute path, a symbolic link out) is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

from airflow.sdk import BaseNotifier

from contract_gate import config


class AlertFileOutside(ValueError):
    """The notifier's path leaves the alerts folder."""


class FileNotifier(BaseNotifier):
    """:param path: the file to append to, relative to the alerts folder (created with its
        folders); templated.
    :param message: the text to record; templated, by default the gate's ready-made message."""

    template_fields = ("path", "message")

    def __init__(self, *, path: str, message: str = "{{ contract_gate.message }}"):
        super().__init__()
        self.path = path
        self.message = message

    def notify(self, context) -> None:
        line = {**(context.get("contract_gate") or {}), "message": self.message}
        target = alert_file(self.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(line, sort_keys=True, default=str) + "\n")


def alert_file(path: str) -> Path:
    """``path`` inside the alerts folder, its links followed; :class:`AlertFileOutside` if it leaves it."""
    root = config.alerts_root()
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    target = (root / path).resolve()
    if Path(path).is_absolute() or not target.is_relative_to(root) or target == root:
        raise AlertFileOutside(f"the FileNotifier's path {path!r} leaves the alerts folder {root} "
                               f"({config.describe('alerts_dir')})")
    return target
