"""Names the gate derives from a contract's own words, for places with a restricted alphabet.

ODCS lets a contract id be any string (a URN, a UUID, a name) and an object name nearly any
text. The id is kept exactly as written in decisions, reports and pages; DAG ids, task group
ids, Asset names, folder names and tags are derived here. A text that already fits is used as
it is (so a plain id keeps its DAG id); one that does not becomes a readable slug plus a short
hash of the original, so two ids that differ only in refused characters still differ.

Standard library only: both sides derive the same names.
"""

from __future__ import annotations

import hashlib
import re

# Airflow DAG and task ids: letters, digits, '_', '.', '-' (KEY_REGEX), at most 250 characters;
# the gate adds suffixes (``__retention``, ``__freshness``), so a derived name stays well below.
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_REFUSED_RUN = re.compile(r"[^A-Za-z0-9_.-]+")
_SLUG_LENGTH = 60


def safe_name(text: str) -> str:
    """``text`` when it is a safe DAG/folder name, else ``<slug>_<8 hex of sha256(text)>``.

    A name of dots only (``..``) is never safe: it would be a folder traversal."""
    if _SAFE.fullmatch(text) and text.strip(".") and ".." not in text:
        return text
    slug = _REFUSED_RUN.sub("_", text).strip("._-")[:_SLUG_LENGTH].replace("..", "_") or "contract"
    if not slug[0].isalnum():
        slug = "c" + slug
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return f"{slug}_{digest}"


def gate_names(contract_id: str, object_name: str, objects: int, environment: str | None) -> dict[str, str]:
    """The derived names of one object's gate (the plan's ``names``).

    ``dag_id``: the contract's DAG (one per contract file). ``group``: the object's task group in
    it. ``gate``: the folder and key of this gate's runs and status: the DAG id alone for a
    one-object contract (as it always was), ``<dag id>.<group>`` when the contract has several.
    ``asset``: the target's Asset name, unique per object and environment (Airflow refuses two
    Assets of one name with different URIs, as a dev and a prod target of one contract are).
    """
    dag_id = safe_name(contract_id)
    group = safe_name(object_name)
    gate = dag_id if objects == 1 else f"{dag_id}.{group}"
    asset = f"contract_gate.{gate}" + (f"@{safe_name(environment)}" if environment else "")
    return {"dag_id": dag_id, "group": group, "gate": gate, "asset": asset}
