"""Build the notifiers a contract names and deliver one notification to each.

``alerts.notifiers`` entries are ``{"class": "dotted.Path", "arguments": {...}}``: a ``BaseNotifier``
subclass the deployment allows (:mod:`contract_gate.contract.notifiers`, checked before the class
is imported), built with ``arguments`` as keyword arguments and called with a context that holds
the alert's payload only (``contract_gate``), so its template fields render with Jinja
(``text: "{{ contract_gate.message }}"``) and reach nothing else: not the task's connections,
variables, configuration or DAG folder. One failing notifier never stops the others; the caller
learns which failed and decides what to retry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from airflow.sdk import BaseNotifier
from airflow.sdk.module_loading import import_string

from contract_gate.contract.notifiers import notifier_problems

log = logging.getLogger(__name__)


class AlertDeliveryError(Exception):
    """At least one notifier failed; the rest were delivered."""


class NotifierRefused(ValueError):
    """The deployment does not allow a contract this notifier, argument or template text."""


def build_notifier(ref: dict) -> BaseNotifier:
    problems = notifier_problems(ref)
    if problems:
        raise NotifierRefused("; ".join(f"{'.'.join(map(str, where))}: {message}" for where, message in problems))
    cls = import_string(ref["class"])
    if not (isinstance(cls, type) and issubclass(cls, BaseNotifier)):
        raise TypeError(f"{ref['class']} is not an Airflow BaseNotifier subclass")
    return cls(**(ref.get("arguments") or {}))


def deliver(notifiers: dict[str, dict], payload: dict,
            on_delivered: Callable[[str], None] | None = None) -> dict[str, str]:
    """Send ``payload`` (the templates' ``contract_gate``) to every notifier in ``{key: ref}``;
    returns ``{key: error}`` for failures. ``on_delivered(key)`` is called right after each
    notifier that succeeded."""
    failures = {}
    for key, ref in notifiers.items():
        try:
            build_notifier(ref)({"contract_gate": payload})
        except Exception as exc:  # any notifier error must not hide the others' delivery
            log.exception("notifier %s failed", key)
            failures[key] = f"{type(exc).__name__}: {exc}"
            continue
        if on_delivered is not None:
            on_delivered(key)
    return failures
