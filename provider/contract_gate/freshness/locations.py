"""Where a plan's path addresses and the freshness status live on disk.

Plan paths are relative to the lakehouse the gate runs against: the working directory, or
``CONTRACT_GATE_HOME`` when set (the same rule the gate operators follow), so the freshness
check and the publish step look at the same folder wherever Airflow starts the task.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

HOME_ENV = "CONTRACT_GATE_HOME"
STATUS_DIR_ENV = "CONTRACT_GATE_STATUS_DIR"
STATUS_FOLDER = "_contract_gate_status"
DEFAULT_LAKEHOUSE = "lakehouse"


def is_uri(path: str) -> bool:
    return "://" in path


def resolve_path(path: str) -> str:
    """An absolute path or URI for a plan path (relative ones resolve against the home)."""
    if is_uri(path) or posixpath.isabs(path):
        return path
    return str(Path(os.environ.get(HOME_ENV) or os.getcwd()) / path)


def status_dir(plan: dict) -> Path:
    """The folder of freshness status files for this plan.

    ``CONTRACT_GATE_STATUS_DIR`` wins; otherwise ``_contract_gate_status`` beside a local
    path-based target (so it sits in the same lakehouse folder consumers already read), and for
    a catalog or remote target ``<home>/lakehouse/_contract_gate_status`` on the worker."""
    configured = os.environ.get(STATUS_DIR_ENV)
    if configured:
        return Path(configured)
    target = plan["tables"]["target"]
    if target["kind"] == "path" and not is_uri(target["path"]):
        return Path(resolve_path(target["path"])).parent / STATUS_FOLDER
    return Path(resolve_path(DEFAULT_LAKEHOUSE)) / STATUS_FOLDER
