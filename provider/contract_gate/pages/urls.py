"""Where the pages live on the api-server: the plugin's mount point and the report page's path.

One place for both, because three parts build these URLs: the plugin's app (its routes), the
pages (links between them) and the gate tasks' extra link (computed on the worker).
"""

from __future__ import annotations

from urllib.parse import quote

URL_PREFIX = "/contract-gate"


def report_path(prefix: str, contract_id: str, submission_id: str, object_name: str | None = None) -> str:
    """The report page of one submission under ``prefix``; ``object_name`` says which schema object's
    submission it is (needed when the contract gates several)."""
    path = f"{prefix}/contracts/{quote(contract_id, safe='')}/submissions/{quote(submission_id, safe='')}"
    return path + (f"?object={quote(object_name, safe='')}" if object_name else "")
