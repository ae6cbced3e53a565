"""The work folders of a gate's runs, ``<work dir>/<gate>/<submission id>/``, and their pruning.

A run writes its plan, its report and its steps' results there, and a ``local`` job holds the
submission's job lock there (:mod:`contract_gate.work_folders.job_fence`). Nothing else records
them: the decision log is the system of record, and every reader of a report (the report page,
``run``'s terminal summary) says so when the file is gone. So the retention DAG removes a folder
once nothing has changed in it for ``[contract_gate] work_dir_days`` days, a deployment setting
rather than a contract's: the folders are the platform's disk, and a producer has no say in how
long the gate keeps its account of the producer's batches.

A folder whose job lock is held (a job of that submission still lives) is never removed, and
entries that are not plain folders (a link, a file) are left alone: the gate makes neither.
The lock itself, the fence between a submission's local jobs and its decision, is
:mod:`contract_gate.work_folders.job_fence`.
"""

from __future__ import annotations

import logging
import shutil
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path

from contract_gate import config
from contract_gate.work_folders.job_fence import JobStillRunning, no_job_running
from contract_gate.submission import check_submission_id
from contract_gate_plan.model import Plan

KEEP_DAYS_OPTION = "work_dir_days"
LOGGER = logging.getLogger("contract_gate.work_folders")


def gate_folder(plan: Plan) -> Path:
    """The folder of every run of ``plan``'s gate (one per gated object)."""
    return config.work_root() / plan.names.gate


def submission_folder(plan: Plan, submission_id: str | None) -> Path:
    """The work folder of one submission's runs (``submission_id`` checked: it names a folder)."""
    return gate_folder(plan) / check_submission_id(submission_id)


def keep_days() -> int | None:
    """``[contract_gate] work_dir_days``: days a work folder is kept after its last change; None: for ever (0)."""
    value = config.get(KEEP_DAYS_OPTION)
    try:
        days = int(value) if value is not None else 0
    except ValueError:
        days = -1
    if days < 0:
        raise ValueError(f"{config.describe(KEEP_DAYS_OPTION)}={value!r} is not a whole number of days "
                         "(0 keeps work folders for ever)")
    return days or None


def unchanged_since(now: datetime | None = None) -> datetime | None:
    """The moment a work folder must not have changed since to be removed: :func:`keep_days`
    days before ``now`` (UTC; for tests); None when they are kept for ever."""
    days = keep_days()
    return None if days is None else (now or datetime.now(timezone.utc)) - timedelta(days=days)


def prune_work_folders(plan: Plan, now: datetime | None = None) -> list[str]:
    """Remove the work folders of ``plan``'s gate in which nothing changed since
    :func:`unchanged_since` ``now``; returns their names (submission ids), sorted."""
    since = unchanged_since(now)
    folder = gate_folder(plan)
    if since is None or not folder.is_dir():
        return []
    cutoff = since.timestamp()
    removed = []
    for entry in sorted(folder.iterdir()):
        if not stat.S_ISDIR(entry.lstat().st_mode) or last_change(entry) >= cutoff:
            continue
        try:
            with no_job_running(entry, timeout=0):
                shutil.rmtree(entry)  # never follows a link inside (Python's rmtree resists symlink attacks)
        except JobStillRunning:
            LOGGER.info("work folder %s is kept: a job of its submission still runs", entry)
            continue
        removed.append(entry.name)
    return removed


def last_change(folder: Path) -> float:
    """When anything in ``folder`` last changed (its newest modification time, links not followed);
    infinity when something vanished while it was read: a run is changing it."""
    try:
        return max(path.lstat().st_mtime for path in (folder, *folder.rglob("*")))
    except FileNotFoundError:
        return float("inf")
