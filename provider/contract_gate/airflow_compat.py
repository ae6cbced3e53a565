"""The Airflow names the provider uses that moved between Airflow 3.1 and 3.2.

Each is taken from its Airflow 3.2+ home first and from its Airflow 3.1 home otherwise, so the
rest of the provider imports one name whatever the installed Airflow. Importing this module
imports Airflow: modules that must load without it import it inside a function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type checkers read the Airflow 3.2+ homes
    from pathlib import Path

    from airflow.sdk import BaseBranchOperator, conf
    from airflow.sdk.definitions.deadline import DeadlineAlert, DeadlineReference, SyncCallback
    from airflow.sdk.exceptions import AirflowFailException, AirflowNotFoundException, AirflowSkipException

    DEADLINE_ALERTS = True
else:
    try:  # Airflow 3.2+: the task SDK owns the task exceptions
        from airflow.sdk.exceptions import AirflowFailException, AirflowNotFoundException, AirflowSkipException
    except ImportError:  # Airflow 3.1
        from airflow.exceptions import AirflowFailException, AirflowNotFoundException, AirflowSkipException

    try:  # Airflow 3.2+
        from airflow.sdk import BaseBranchOperator
    except ImportError:  # Airflow 3.1: the standard provider's, built on the same SDK BaseOperator
        from airflow.providers.standard.operators.branch import BaseBranchOperator

    try:  # Airflow 3.2+
        from airflow.sdk import conf
    except ImportError:  # Airflow 3.1
        from airflow.configuration import conf

    # Airflow 3.1's Deadline Alerts take only an AsyncCallback, run in the triggerer's event loop;
    # the gate's deadline callback sends its alerts through the (blocking) notifiers on the executor,
    # so it needs Airflow 3.2's SyncCallback. On 3.1 the gate DAG has no deadline (decision_deadline).
    try:
        from airflow.sdk import DeadlineAlert, DeadlineReference, SyncCallback

        DEADLINE_ALERTS = True
    except ImportError:  # Airflow 3.1
        DEADLINE_ALERTS = False

__all__ = [
    "DEADLINE_ALERTS",
    "AirflowFailException",
    "AirflowNotFoundException",
    "AirflowSkipException",
    "BaseBranchOperator",
    "DeadlineAlert",
    "DeadlineReference",
    "SyncCallback",
    "conf",
    "dag_bag",
    "default_deferrable",
    "stats",
]


def dag_bag(folder: str | Path) -> Any:
    """Airflow's DagBag of the DAG files in ``folder`` (a scheduler-side class: loaded only here)."""
    if TYPE_CHECKING:  # the scheduler's DagBag loads much of Airflow: only when a bag is made
        from airflow.dag_processing.dagbag import DagBag
    else:
        try:  # Airflow 3.2+
            from airflow.dag_processing.dagbag import DagBag
        except ImportError:  # Airflow 3.1
            from airflow.models.dagbag import DagBag
    return DagBag(str(folder))


def stats() -> Any:
    """Airflow's ``Stats`` (StatsD, OpenTelemetry or nothing, as Airflow is configured)."""
    if TYPE_CHECKING:  # Airflow only when a metric is sent: the freshness check also runs without it
        from airflow.sdk.observability.stats import Stats
    else:
        try:  # Airflow 3.2+
            from airflow.sdk.observability.stats import Stats
        except ImportError:  # Airflow 3.1
            from airflow.stats import Stats
    return Stats


def default_deferrable() -> bool:
    """``[operators] default_deferrable``: whether a sensor not told otherwise waits in the triggerer.

    Read when the task is made, not when this module is imported, so a setting changed after the
    provider was loaded (a test's, a DAG processor's) still applies; Airflow's own default is False.
    """
    return conf.getboolean("operators", "default_deferrable", fallback=False)
