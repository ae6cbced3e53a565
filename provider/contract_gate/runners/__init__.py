"""Execution modes: where a gate job's Spark runs. See :mod:`contract_gate.runners.base`.

Runners are looked up by mode name at execute time, so an operator never imports a mode's
dependencies (the Databricks or apache-spark provider) unless that mode is used.
"""

from __future__ import annotations

import importlib

from contract_gate.runners.base import Deferral, GateJob, GateJobError, GateJobStopped, GateRunner, run_name

RUNNERS = {
    "local": "contract_gate.runners.local.LocalRunner",
    "spark_submit": "contract_gate.runners.spark_submit.SparkSubmitRunner",
    "spark_connect": "contract_gate.runners.spark_connect.SparkConnectRunner",
    "databricks": "contract_gate.runners.databricks.DatabricksRunner",
}
DEFAULT_MODE = "local"


def get_runner(mode: str | None, **kwargs) -> GateRunner:
    """A runner for ``mode`` (default ``local``); ``kwargs`` go to its constructor."""
    mode = mode or DEFAULT_MODE
    if mode not in RUNNERS:
        raise ValueError(f"execution mode {mode!r} is not available; use one of {', '.join(sorted(RUNNERS))}")
    module, _, name = RUNNERS[mode].rpartition(".")
    return getattr(importlib.import_module(module), name)(**kwargs)


__all__ = ["DEFAULT_MODE", "RUNNERS", "Deferral", "GateJob", "GateJobError", "GateJobStopped", "GateRunner", "get_runner",
           "run_name"]
