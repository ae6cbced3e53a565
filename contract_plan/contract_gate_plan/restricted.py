"""The gate's restricted tables and work folders: owner-only on a local filesystem, and no Delta
statistics of classified columns.

Candidate, quarantine and decision tables and the per-submission work folders (plans, reports,
step results) are the gate's, not the consumers': consumers read the target only. On a local
filesystem that boundary is the file mode. Spark writes through Hadoop, which sets each file's
mode itself from its own umask setting (644/755 by default), and ``deltalake`` and Python use
the process umask, so neither the process umask nor a Spark setting makes these folders
private, and the target must stay readable. Instead a restricted folder is created owner-only
(0700) *before* anything is written into it, so nothing inside is ever reachable by another
user, and after each write every folder below it is set to 0700 and every file to 0600.
Object stores and catalog tables have no file modes: their access is the store's or the
catalog's grants.

Delta keeps per-file statistics (min, max, null count) in its log as plain text, readable by
anyone who can read the log. Candidate and quarantine tables keep them only for the
contract's unclassified columns of types Delta collects them for (and the quarantine's own
bookkeeping columns), via ``delta.dataSkippingStatsColumns``; an empty list keeps none.

Standard library only: the Airflow side (work folders, the decision store) uses it too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from contract_gate_plan.addresses import Address
from contract_gate_plan.sql_text import quote_identifier

if TYPE_CHECKING:
    from contract_gate_plan.model import Column

FOLDER_MODE = 0o700
FILE_MODE = 0o600
STATS_COLUMNS = "delta.dataSkippingStatsColumns"

# Types Delta collects min/max for; listing another (boolean, binary, arrays, maps) is an error.
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")
_WORKSPACE_MOUNTS = ("/dbfs/", "/Volumes/")
_STATS_TYPES = re.compile(r"tinyint|smallint|int|bigint|float|double|decimal\(\d+,\d+\)|string|date|timestamp(_ntz)?")


def statistics_properties(
    columns: Iterable[Column], fields: list[tuple[str, str]], bookkeeping: tuple[str, ...] = ()
) -> dict[str, str]:
    """``delta.dataSkippingStatsColumns`` for a candidate or quarantine table of a plan with
    ``columns`` whose own columns are ``fields`` ((name, Spark simpleString type)): the plan's unclassified columns
    and the table's ``bookkeeping`` columns, of types Delta keeps statistics for. A column the
    contract does not name (a producer's extra one) is unknown, so it keeps none."""
    unclassified = {column.name for column in columns if not column.classified}
    names = [name for name, type_ in fields
             if (name in unclassified or name in bookkeeping) and _STATS_TYPES.fullmatch(type_)]
    return {STATS_COLUMNS: ",".join(quote_identifier(name) for name in names)}


def local_folder(address: Address) -> str | None:
    """The folder of a (resolved) path address on the local filesystem, else None (a catalog
    table, an object store)."""
    return local_path(address.location) if address.is_path else None


def local_path(location: str) -> str | None:
    """``location`` as a local path (``file:/x`` is ``/x``), or None for an object store URI and
    for Databricks' mounts of workspace storage (``/dbfs/``, ``/Volumes/``), whose access is the
    workspace's, not a file mode."""
    if location.startswith("file:"):
        return "/" + location[len("file:"):].lstrip("/")
    if _URI.match(location) or location.startswith(_WORKSPACE_MOUNTS):
        return None
    return location


def make_private_folder(path: str | os.PathLike) -> None:
    """Create ``path`` (and missing parents) owner-only, and make an existing ``path`` so.

    ``mkdir``'s mode is narrowed by the umask, never widened, so a new folder is never more
    open than 0700, whatever the umask; an existing one is set to 0700."""
    os.makedirs(path, mode=FOLDER_MODE, exist_ok=True)
    os.chmod(path, FOLDER_MODE)


def restrict_tree(path: str | os.PathLike[str]) -> None:
    """Every folder under ``path`` (itself included) 0700, every file 0600. Symbolic links
    are left alone (their mode means nothing; what they point to is not ours to change)."""
    if not os.path.isdir(path) or os.path.islink(path):
        return
    os.chmod(path, FOLDER_MODE)
    for folder, subfolders, files in os.walk(path):
        for name in subfolders:
            _set_mode(os.path.join(folder, name), FOLDER_MODE)
        for name in files:
            _set_mode(os.path.join(folder, name), FILE_MODE)


def write_private_text(path: str | os.PathLike, text: str) -> None:
    """Write ``path`` as an owner-only file (0600 from its creation, whatever the umask)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), FILE_MODE)  # an existing file keeps its mode through O_TRUNC
        handle.write(text)


def _set_mode(path: str, mode: int) -> None:
    try:
        if not os.path.islink(path) and os.stat(path).st_mode & 0o777 != mode:
            os.chmod(path, mode)
    except FileNotFoundError:  # a concurrent writer's temporary file, already renamed
        pass
