"""Where a plan's tables, the freshness status and the last audit are, as the freshness check sees them.

A plan's addresses are resolved as every gate step resolves them (against the gate's home,
``contract_gate_plan.addresses.gate_home``), so the check reads the folder the
publish step wrote. After resolution a path is either absolute (local) or a URI.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from contract_gate import config
from contract_gate_plan.addresses import Address
from contract_gate_plan.model import Plan
from contract_gate_plan.reserved import STATUS_FOLDER

DEFAULT_STATUS_DIR = "lakehouse/" + STATUS_FOLDER
AUDIT_FOLDER = "audit"  # a folder, so no gate's own status file can be named like an audit's


def status_dir(plan: Plan) -> Path:
    """The folder of freshness status files for this plan.

    ``[contract_gate] status_dir`` wins; otherwise ``_contract_gate_status`` beside a local
    path-based target (the lakehouse folder consumers already read), and for a catalog or
    remote target ``<home>/lakehouse/_contract_gate_status`` on the worker."""
    configured = config.get("status_dir")
    if configured:
        return Path(configured)
    target = plan.require_tables().require_target()
    if target.is_path and posixpath.isabs(target.location):
        return Path(target.location).parent / STATUS_FOLDER
    return Path(Address(kind="path", path=DEFAULT_STATUS_DIR).resolved().location)


def audit_status_dir(plan: Plan) -> Path:
    """The folder of the last audit of each gated object (``<gate>.json``, as the retention DAG's
    audit task records it), in the status folder beside the freshness status."""
    return status_dir(plan) / AUDIT_FOLDER
