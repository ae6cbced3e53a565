"""The provider's own configuration: the ``[contract_gate]`` section of Airflow's configuration.

Inside an Airflow process (Airflow already imported: a DAG parse, a task, the triggerer, the
api-server) Airflow's ``conf`` answers, so ``airflow.cfg``, ``AIRFLOW__CONTRACT_GATE__<OPTION>``,
secrets and ``_cmd`` options work as in any section. Elsewhere (``contract-gate lint``/``plan``,
a notebook) this module never imports Airflow: ``AIRFLOW__CONTRACT_GATE__<OPTION>`` answers.
The old ``CONTRACT_GATE_<OPTION>`` variables still work for one release, with a warning.

Standard library and ``contract_gate_plan`` only: the contract side (lint, plan) reads its options here too.

The gate's home (where relative table and contract paths resolve) is the ``home`` option, so
no Airflow component depends on its working directory; ``CONTRACT_GATE_HOME``, the job environment
that a runner hands to a Spark driver (which has no Airflow configuration), wins when it is set
(:func:`gate_home`). Job environment, not configuration: ``CONTRACT_GATE_HOME``, the local
Spark machine's own variables (``CONTRACT_GATE_JARS``, ``CONTRACT_GATE_IVY_JARS``, ``CONTRACT_GATE_CLASS_ARCHIVE``,
``CONTRACT_GATE_SPARK_LOG_LEVEL``, ``CONTRACT_GATE_LOCAL_START``) and
``CONTRACT_GATE_DISABLE_VALIDATION`` (the in-process ``validate`` of a notebook).
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

from contract_gate_plan import addresses

SECTION = "contract_gate"


@dataclass(frozen=True)
class Option:
    """One option of the section, as provider info registers it."""

    name: str
    description: str
    example: str | None = None
    default: str | None = None
    type: str = "string"
    old_names: tuple[str, ...] = ()


OPTIONS = {option.name: option for option in (
    Option("home", "The gate's home: the folder that the contracts' relative server paths (``lakehouse``) and "
           "relative contract paths resolve against, in every component (DAG processor, workers, triggerer, "
           "api-server). ``CONTRACT_GATE_HOME``, where set, wins (the runners hand it to Spark drivers). Unset "
           "and without ``CONTRACT_GATE_HOME``: the process's working directory (``contract-gate airflow up`` "
           "always sets it).", example="/srv/gates"),
    Option("contracts_dir", "The folder of contract files: what ``contract-gate dags sync``, ``contract-gate "
           "status`` and the gate pages read; when set, a generated DAG file reads its contract there at parse "
           "time instead of next to itself. Unset: ``$AIRFLOW_HOME/contracts`` when it exists, else "
           "``contracts/`` beside the DAG folder (the working directory's for the CLI).",
           example="/opt/airflow/contracts",
           old_names=("CONTRACT_GATE_CONTRACTS_DIR", "CONTRACT_GATE_CONTRACTS")),
    Option("env", "The contract's ``servers`` entry (by ``server`` or ``environment``) that gates, pages and "
           "``status`` resolve table addresses for. Unset: the contract's first server.",
           example="prod", old_names=("CONTRACT_GATE_ENV",)),
    Option("execution_mode", "Where every gate's Spark runs (``local``, ``spark_submit``, ``spark_connect``, "
           "``databricks``), over the contract's ``execution.mode``; a task's ``execution_mode=`` still wins. "
           "Unset: the contract's mode, else ``local``.",
           example="spark_connect", old_names=("CONTRACT_GATE_EXECUTION_MODE",)),
    Option("work_dir", "The folder of each submission's plan, report and step results (the report pages read "
           "the reports there). Unset: ``lakehouse/_runs`` in the gate's home (``home``).",
           example="/opt/lakehouse/_runs", old_names=("CONTRACT_GATE_WORK_DIR",)),
    Option("work_dir_days", "How many days a run's work folder (``work_dir``) is kept after anything in it last "
           "changed: each contract's retention DAG removes older ones, never one whose job still runs. The decision "
           "log keeps every decision; a report page then says its report is gone. ``0`` keeps them for ever.",
           example="30", default="90", type="integer"),
    Option("status_dir", "The folder of freshness status files. Unset: ``_contract_gate_status`` beside a "
           "local path target, else ``lakehouse/_contract_gate_status`` in the gate's home (``home``).",
           example="/opt/lakehouse/_contract_gate_status", old_names=("CONTRACT_GATE_STATUS_DIR",)),
    Option("alerts_dir", "The folder a contract's ``FileNotifier`` appends to: its ``path`` is a file in it. Unset: "
           "``lakehouse/_contract_gate_alerts`` in the gate's home (``home``).", example="/var/log/contract-gate"),
    Option("notifiers", "The notifiers contracts may name in ``alerts.notifiers`` and ``alerts.onRejection``, as "
           "JSON: each notifier class's dotted path and the argument names a contract may give it (``[\"*\"]``: "
           "any). Unset: the gate's ``FileNotifier`` (``path``, ``message``), SMTP (``to``, ``cc``, ``bcc``, "
           "``subject``, ``html_content``) and Slack (``channel``, ``text``, ``blocks``, ``attachments``, "
           "``username``; the webhook notifier ``text``, ``blocks``, ``attachments``) notifiers.",
           example='{"airflow.providers.smtp.notifications.smtp.SmtpNotifier": ["to", "subject", "html_content", '
                   '"smtp_conn_id"]}'),
    Option("roots", "Comma-separated absolute folders or URIs that contracts may use as a server root "
           "(``servers[].path``); relative roots need no listing.",
           example="/data/lake,s3://lake-bucket", old_names=("CONTRACT_GATE_ROOTS",)),
    Option("landing_roots", "Comma-separated folders or URIs, besides the server's root, that contracts may "
           "name as their landing.", example="/data/landing,s3://landing-bucket",
           old_names=("CONTRACT_GATE_LANDING_ROOTS",)),
    Option("tenants", "Where several teams share the gate: which connections and tables each team's contracts may "
           "name, as JSON keyed by contract file name pattern (the patterns a CODEOWNERS file guards): "
           "``connections`` (``execution.connectionId``, a table's ``connection``) and ``reads`` (where landings and "
           "query references may be: folders or URIs, and catalog name patterns). A file no pattern matches is "
           "refused. Unset: one team, nothing to bind.",
           example='{"billing*.yaml": {"connections": ["databricks_billing"], "reads": ["main.drops.billing_*"]}}'),
    Option("max_validation_seconds", "The deployment's ceiling of a contract's validation time budget "
           "(``limits.validationSeconds``). Unset: the built-in ceiling.", example="3600", type="integer",
           old_names=("CONTRACT_GATE_MAX_VALIDATION_SECONDS",)),
    Option("max_query_seconds", "The deployment's ceiling of a contract's time budget per ``type: sql`` "
           "query (``limits.querySeconds``). Unset: the built-in ceiling.", example="600", type="integer",
           old_names=("CONTRACT_GATE_MAX_QUERY_SECONDS",)),
    Option("task_retries", "How often each task of a gate DAG is retried after a fault (a stopped worker, a lost "
           "Spark server), unless the contract's ``retries.tasks`` says otherwise. Publication stays exactly-once.",
           example="2", default="2", type="integer"),
    Option("retry_delay_seconds", "Seconds between a gate task's tries, unless the contract's "
           "``retries.delaySeconds`` says otherwise.", example="10", default="10", type="integer"),
    Option("runs_per_batch", "How many gate runs a batch gets before the gate stops re-gating it (the last "
           "failed run's ``alerts.onRejection`` alert says the retry cap is reached): a batch whose run ended without a final "
           "decision is gated again by its landing watcher or the next scheduled run. The contract's "
           "``retries.runsPerBatch`` wins.", example="3", default="3", type="integer"),
    Option("dags_paused_at_creation", "Whether a new gate DAG starts paused (``true``) or runs as soon as it "
           "is parsed (``false``, what ``contract-gate airflow up`` sets). Unset: Airflow's "
           "``[core] dags_are_paused_at_creation``.", example="false", type="boolean"),
)}


def get(name: str) -> str | None:
    """The value of option ``name`` (stripped; None when unset or empty)."""
    option = OPTIONS[name]
    value = _from_airflow(option)
    if value is None:
        for old in option.old_names:
            value = _clean(os.environ.get(old))
            if value is not None:
                warnings.warn(f"{old} is deprecated: set [{SECTION}] {name} in airflow.cfg, or "
                              f"{environment_variable(name)}", DeprecationWarning, stacklevel=2)
                break
    return value if value is not None else option.default


def get_list(name: str) -> list[str]:
    """A comma-separated option as its entries."""
    return [entry.strip() for entry in (get(name) or "").split(",") if entry.strip()]


def get_flag(name: str) -> bool | None:
    """A boolean option (None when unset)."""
    value = get(name)
    return None if value is None else value.lower() in ("1", "true", "yes", "on")


def describe(name: str) -> str:
    """How a user sets option ``name``, for error messages."""
    return f"[{SECTION}] {name} ({environment_variable(name)})"


def environment_variable(name: str) -> str:
    return f"AIRFLOW__{SECTION.upper()}__{name.upper()}"


def contracts_dir(dag_file: str | Path | None = None) -> Path:
    """The contracts folder: the option, else ``$AIRFLOW_HOME/contracts`` when it exists, else
    ``contracts/`` beside the folder of ``dag_file`` (the working directory's without one).
    The DAG factory, the pages and ``contract-gate status`` all read it here."""
    configured = get("contracts_dir")
    if configured:
        return Path(configured).resolve()
    airflow_home = os.environ.get("AIRFLOW_HOME")
    if airflow_home and (Path(airflow_home) / "contracts").is_dir():
        return Path(airflow_home) / "contracts"
    base = Path(dag_file).resolve().parent.parent if dag_file else Path.cwd()
    return base / "contracts"


def gate_home() -> Path:
    """Where relative table and contract paths resolve: ``CONTRACT_GATE_HOME`` (job
    environment), else the ``home`` option, else the working directory
    (``contract_gate_plan.addresses.gate_home``, which every plan address resolves against)."""
    return Path(addresses.gate_home()).resolve()


# Plan addresses resolve in the Airflow side's processes through this module's ``home`` option too
# (the DAG processor, a worker, the triggerer and the api-server all import this module before
# they resolve an address).
addresses.use_configured_home(lambda: get("home"))


def work_root() -> Path:
    """Plans, reports and job results per submission: the ``work_dir`` option, else
    ``lakehouse/_runs`` under the gate home. Owner-only, like everything below it
    (``contract_gate_plan.restricted``): consumers read the target, never a run's files."""
    configured = get("work_dir")
    return Path(configured).resolve() if configured else gate_home() / "lakehouse" / "_runs"


def alerts_root() -> Path:
    """Where a contract's ``FileNotifier`` appends: the ``alerts_dir`` option, else
    ``lakehouse/_contract_gate_alerts`` under the gate home (a reserved name: no table lies there)."""
    configured = get("alerts_dir")
    return Path(configured).resolve() if configured else gate_home() / "lakehouse" / "_contract_gate_alerts"


def provider_config() -> dict:
    """The section as provider info's ``config`` key declares it (``airflow config list``)."""
    return {SECTION: {
        "description": "Options of the contract-gate provider.",
        "options": {option.name: {"description": option.description, "version_added": None,
                                  "type": option.type, "example": option.example, "default": option.default}
                    for option in OPTIONS.values()},
    }}


def _from_airflow(option: Option) -> str | None:
    conf = getattr(sys.modules.get("airflow.configuration"), "conf", None)
    if conf is None:  # not an Airflow process: Airflow is not imported for a lint or a plan
        return _clean(os.environ.get(environment_variable(option.name)))
    value = _clean(conf.get(SECTION, option.name, fallback=None))
    # Airflow answers the registered default when nothing is set: let an old variable still win then.
    return None if value == option.default else value


def _clean(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None
