"""Plan addresses made concrete: where a table really is at run time, and what it is called.

The compiler writes relative paths (``lakehouse/orders``) so one plan serves every machine;
every step must resolve them the same way or two steps of one submission would read and
write different folders. They resolve against ``CONTRACT_GATE_HOME`` when it is set (an
Airflow worker's cwd is arbitrary), else the working directory. URIs (``s3://...``,
``file:/...``) and absolute paths are used as they are.

Standard library only: the Airflow side (decision store, recovery) resolves addresses too.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from typing import Any

from contract_plan.sql_text import table_reference

HOME_ENV = "CONTRACT_GATE_HOME"

_SAFE = re.compile(r"[^A-Za-z0-9_]")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def resolve(address: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``address`` whose path, when relative, is made absolute."""
    if address["kind"] != "path" or _URI.match(address["path"]) or posixpath.isabs(address["path"]):
        return dict(address)
    home = os.environ.get(HOME_ENV) or os.getcwd()
    return {**address, "path": posixpath.normpath(posixpath.join(home, address["path"]))}


def location(address: dict[str, Any]) -> str:
    """The path or the catalog name: what reports, results and decision records show."""
    return address["path"] if address["kind"] == "path" else address["name"]


def sql_name(address: dict[str, Any]) -> str:
    """The resolved address as a SQL table reference (``delta.`/abs/path``` or quoted name)."""
    return table_reference(resolve(address))


def looks_like_path(text: str) -> bool:
    """A location on a filesystem (``/x``, ``./x``, ``s3://b/x``) rather than a catalog name."""
    return "/" in text or "\\" in text or text.startswith(".") or os.path.exists(text)


def from_location(text: str, format: str = "delta") -> dict[str, Any]:
    """An address for a string a CLI user typed: a path when it looks like one, else a name."""
    if looks_like_path(text):
        return {"kind": "path", "path": text, "format": format}
    return {"kind": "table", "name": text, "format": format}


def as_address(value: dict[str, Any] | str, format: str = "delta") -> dict[str, Any]:
    """Accept an address dict or a location string, so steps can be called either way."""
    return dict(value) if isinstance(value, dict) else from_location(value, format)


GLOB_SPECIALS = "\\{}[]*?"
"""Hadoop's glob syntax (``org.apache.hadoop.fs.GlobPattern``)."""


def glob_literal(path: str) -> str:
    """``path`` with its glob characters escaped, for a Spark file read (which expands globs) that
    must read exactly this path. Paths come from contracts: the compiler refuses glob characters
    in them, and a read escapes them anyway."""
    return "".join("\\" + c if c in GLOB_SPECIALS else c for c in path)


def name_part(submission_id: str) -> str:
    """``submission_id`` as a table-name part that every store accepts.

    Catalog names allow ``[A-Za-z0-9_]`` only, and Hadoop paths choke on ``:`` (Airflow run
    ids are full of them). Other characters become ``_`` and a short hash of the original is
    appended, so two ids that differ only in such characters still get different tables.
    """
    safe = _SAFE.sub("_", submission_id)
    if safe == submission_id:
        return safe
    return f"{safe}_{hashlib.sha256(submission_id.encode('utf-8')).hexdigest()[:8]}"


def candidate_address(schema_address: dict[str, Any], object_name: str, submission_id: str) -> dict[str, Any]:
    """Where stage freezes a file landing: ``<candidate schema>/<object>__<submission>``, for the
    plan's ``tables.candidate_schema`` and ``object`` (``contract_plan.model.Plan.candidate``).

    For catalogs the candidate schema is a schema next to the target's: the compiler
    qualifies its name like a table (``catalog.schema._contract_gate_candidates``), so a
    three-part name is read as catalog + schema (first and last part).
    """
    schema = candidate_schema(schema_address)
    table = f"{object_name}__{name_part(submission_id)}"
    if schema["kind"] == "path":
        return {"kind": "path", "path": posixpath.join(schema["path"], table), "format": "delta"}
    return {"kind": "table", "name": f"{schema['name']}.{table}", "format": "delta"}


def candidate_schema(address: dict[str, Any]) -> dict[str, Any]:
    """The plan's ``candidate_schema`` address as the folder or ``catalog.schema`` the candidates
    go in (a three-part name is catalog + schema: its first and last part)."""
    if address["kind"] == "path":
        return dict(address)
    parts = address["name"].split(".")
    return {**address, "name": ".".join([parts[0], parts[-1]] if len(parts) > 2 else parts)}
