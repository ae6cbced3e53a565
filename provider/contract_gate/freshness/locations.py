"""Where a plan's tables and the freshness status are, as the freshness check sees them.

Plan paths resolve exactly as every gate step resolves them (:func:`contract_plan.addresses.resolve`:
against ``CONTRACT_GATE_HOME``, else the working directory), so the check reads the folder the
publish step wrote. After resolution a path is either absolute (local) or a URI.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from contract_gate import config
from contract_plan.addresses import resolve
from contract_plan.reserved import STATUS_FOLDER

DEFAULT_STATUS_DIR = "lakehouse/" + STATUS_FOLDER


def table_location(address: dict) -> str:
    """The absolute path or URI of a path-based table address."""
    return resolve(address)["path"]


def status_dir(plan: dict) -> Path:
    """The folder of freshness status files for this plan.

    ``[contract_gate] status_dir`` wins; otherwise ``_contract_gate_status`` beside a local
    path-based target (the lakehouse folder consumers already read), and for a catalog or
    remote target ``<home>/lakehouse/_contract_gate_status`` on the worker."""
    configured = config.get("status_dir")
    if configured:
        return Path(configured)
    target = plan["tables"]["target"]
    if target["kind"] == "path" and posixpath.isabs(location := table_location(target)):
        return Path(location).parent / STATUS_FOLDER
    return Path(table_location({"kind": "path", "path": DEFAULT_STATUS_DIR}))
