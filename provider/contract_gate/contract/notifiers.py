"""Which notifiers a contract may name, with which arguments and which template text.

A contract names its notifiers (``alerts.notifiers``, ``alerts.onRejection``) as ``{class,
arguments}``, and a contract is hostile input. Left open, that would let a producer import any
module on the worker (``class``), mail the worker's files to itself (``SmtpNotifier``'s
``files``), send a Slack token to a host of its choosing (``base_url``), append to any file the
worker can write (a forged Delta commit of another contract's table), or read the deployment's
secrets through Jinja (``{{ conn.<id>.password }}``, ``{{ var.value.<key> }}``, ``{% include %}``).
So:

* the class must be one the deployment allows (``[contract_gate] notifiers``, else
  :data:`BUILT_IN`), checked before anything is imported;
* each argument must be one the deployment allows for that class;
* text may hold Jinja only as ``{{ contract_gate.<field> }}`` placeholders, with the filters in
  :data:`FILTERS`: no statement, comment or other expression, so a template reads the alert's
  own payload (:mod:`contract_gate.notifications.dispatch` renders with nothing else) and its
  cost is its length;
* a :class:`~contract_gate.notifications.file.FileNotifier` ``path`` is a relative path: the
  notifier appends inside the deployment's alerts folder only (``[contract_gate] alerts_dir``).

The compiler reports each problem at its YAML path (``lint``);
:func:`contract_gate.notifications.dispatch.build_notifier` refuses it again at delivery, where the
deployment's setting binds. Standard library and :mod:`contract_gate.config` only: no Airflow.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

from contract_gate import config

FILE_NOTIFIER = "contract_gate.notifications.file.FileNotifier"
ANY_ARGUMENT = "*"
# What a producer may choose: recipients, channel and text. Connections, senders, headers, files,
# endpoints and templates read from disk stay the platform team's (list them in the option to
# let contracts choose them).
BUILT_IN: dict[str, tuple[str, ...]] = {
    FILE_NOTIFIER: ("path", "message"),
    "airflow.providers.smtp.notifications.smtp.SmtpNotifier": ("to", "cc", "bcc", "subject", "html_content"),
    "airflow.providers.slack.notifications.slack.SlackNotifier": ("channel", "text", "blocks", "attachments",
                                                                  "username"),
    "airflow.providers.slack.notifications.slack_webhook.SlackWebhookNotifier": ("text", "blocks", "attachments"),
}
FILTERS = ("e", "escape", "tojson", "upper", "lower", "title", "trim", "string")
# a key of the alert's payload: lower-case snake case, never a dunder the sandbox would have to refuse
_PLACEHOLDER = re.compile(r"\{\{\s*contract_gate\.[a-z][a-z0-9_]*\s*"
                          rf"(?:\|\s*(?:{'|'.join(FILTERS)})\s*)*\}}\}}")
_JINJA = re.compile(r"\{\{|\{%|\{#")


class NotifierSettingError(ValueError):
    """``[contract_gate] notifiers`` is not a JSON object of class paths and argument lists."""


def allowed_notifiers() -> dict[str, frozenset[str]]:
    """The notifier classes contracts may name and the arguments each may be given: the
    ``notifiers`` option, else :data:`BUILT_IN`."""
    text = config.get("notifiers")
    if text is None:
        return {name: frozenset(arguments) for name, arguments in BUILT_IN.items()}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise NotifierSettingError(f"{config.describe('notifiers')} is not JSON: {exc}") from exc
    if not isinstance(value, dict) or not all(
            isinstance(arguments, list) and all(isinstance(a, str) for a in arguments) for arguments in value.values()):
        raise NotifierSettingError(f"{config.describe('notifiers')} must be a JSON object of notifier class paths "
                                   'and the argument names contracts may give each, e.g. {"'
                                   f'{FILE_NOTIFIER}": ["path", "message"]}}')
    return {name: frozenset(arguments) for name, arguments in value.items()}


def notifier_problems(ref: dict) -> list[tuple[tuple[str | int, ...], str]]:
    """(path below the notifier entry, message) of each thing ``ref`` (``{class, arguments}``)
    may not do; empty when the deployment allows all of it."""
    name = ref.get("class")
    allowed = allowed_notifiers()
    if name not in allowed:
        return [(("class",), f"notifier class {name!r} is not one this deployment allows contracts to name "
                             f"({', '.join(sorted(allowed)) or 'none'}); the platform team lists notifiers in "
                             f"{config.describe('notifiers')}")]
    permitted = allowed[name]
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for argument, value in (ref.get("arguments") or {}).items():
        if ANY_ARGUMENT not in permitted and argument not in permitted:
            problems.append((("arguments", argument),
                             f"argument {argument!r} of {name} is the platform team's to set, not a contract's "
                             f"(a contract may give {', '.join(sorted(permitted)) or 'none'}; "
                             f"{config.describe('notifiers')} lists them)"))
            continue
        problems += [(("arguments", argument, *where), message) for where, message in _template_problems(value)]
        if name == FILE_NOTIFIER and argument == "path":
            problems += [(("arguments", argument), message) for message in _alert_file_problems(value)]
    return problems


def _template_problems(value: object, where: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, str):
        rest = _PLACEHOLDER.sub("", value)
        if _JINJA.search(rest):
            return [(where, "Jinja in a contract's notifier is limited to {{ contract_gate.<field> }}, optionally "
                            f"with the filters {', '.join(FILTERS)}: no statement, comment or other expression")]
        return []
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _template_problems(item, (*where, str(key)))]
    if isinstance(value, list):
        return [p for index, item in enumerate(value) for p in _template_problems(item, (*where, index))]
    return []


def _alert_file_problems(path: object) -> list[str]:
    parts = PurePosixPath(str(path)).parts
    if not isinstance(path, str) or not parts or str(path).startswith(("/", "\\")) or ".." in parts \
            or "\\" in str(path) or ":" in str(path):
        return [f"the FileNotifier's path {path!r} must be a relative path inside the alerts folder "
                f"({config.describe('alerts_dir')}), without '..'"]
    return []
