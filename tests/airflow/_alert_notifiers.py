"""A notifier for tests of a record task killed while it alerts (importable by its dotted path,
as ``alerts.onRejection`` names notifiers)."""

from __future__ import annotations

from pathlib import Path

from contract_gate.notifications.file import FileNotifier


class KillsTheTaskOnce(FileNotifier):
    """The first call ends the process's task as a SIGKILL would, there and then (``SystemExit``
    escapes every ``except Exception``); later calls append to ``path`` as :class:`FileNotifier`.
    ``marker``: the file that says the first call has happened."""

    template_fields = (*FileNotifier.template_fields, "marker")

    def __init__(self, *, marker: str, **kwargs):
        super().__init__(**kwargs)
        self.marker = marker

    def notify(self, context) -> None:
        if not Path(self.marker).exists():
            Path(self.marker).touch()
            raise SystemExit("the task was killed while it alerted")
        super().notify(context)


class WritesWhatItSees(FileNotifier):
    """Appends the names its context holds, besides the alert: what a template could reach."""

    def notify(self, context) -> None:
        self.message = ",".join(sorted(context))
        super().notify(context)
