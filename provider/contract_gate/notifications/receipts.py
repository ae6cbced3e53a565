"""Which notifiers have been told of a rejected decision, kept beside the submission's run files.

The record task alerts after it has recorded the decision. A task killed in between (SIGKILL, the
OOM killer, a lost worker) used to leave the producer untold: its retry found the decision
recorded by an earlier try and alerted nobody. Each notifier told is now written down in the
submission's work folder (``alerts/<decision>.json``, the decision being its run and try), and a
later try of the same run tells those not written down yet. A notifier is so told at least once;
twice only if the task is killed between telling it and writing it down.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from contract_gate_plan.restricted import make_private_folder


class AlertReceipts:
    """The notifier keys told of one decision (``run_id`` and ``try_number`` of its record)."""

    def __init__(self, folder: Path, decision: dict):
        identity = f"{decision.get('run_id')}\0{decision.get('try_number')}".encode()
        self.path = folder / "alerts" / f"{hashlib.sha256(identity).hexdigest()[:16]}.json"

    def told(self) -> set[str]:
        try:
            return set(json.loads(self.path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return set()

    def add(self, key: str) -> None:
        """Write ``key`` down, whole or not at all (a temporary file, then a rename)."""
        make_private_folder(self.path.parent)
        told = sorted(self.told() | {key})
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps(told), encoding="utf-8")
        os.replace(partial, self.path)
