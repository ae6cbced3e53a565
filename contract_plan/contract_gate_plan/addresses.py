"""Plan addresses made concrete: where a table really is at run time, and what it is called.

The compiler writes relative paths (``lakehouse/orders``) so one plan serves every machine;
every step must resolve them the same way or two steps of one submission would read and
write different folders. They resolve against the gate's home (:func:`gate_home`: an
Airflow worker's cwd is arbitrary). URIs (``s3://...``, ``file:/...``) and absolute paths are
used as they are.

Standard library only: the Airflow side (decision store, recovery) resolves addresses too.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable, Mapping

from contract_gate_plan.sql_text import table_reference

HOME_ENV = "CONTRACT_GATE_HOME"
_configured_home: Callable[[], str | None] | None = None


def use_configured_home(setting: Callable[[], str | None]) -> None:
    """Let the host's configuration name the home when ``CONTRACT_GATE_HOME`` is unset:
    ``contract_gate.config`` installs Airflow's ``[contract_gate] home`` when it is imported (this
    package imports no Airflow, and a Spark driver has no Airflow configuration)."""
    global _configured_home
    _configured_home = setting


def gate_home() -> str:
    """Where relative paths resolve: ``CONTRACT_GATE_HOME`` (the job environment a runner hands
    to a Spark driver), else the host's configured home (:func:`use_configured_home`), else the
    working directory."""
    return os.environ.get(HOME_ENV) or (_configured_home and _configured_home()) or os.getcwd()

_SAFE = re.compile(r"[^A-Za-z0-9_]")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


@dataclass(frozen=True)
class Address:
    """A table as the plan names it (docs/plan-format.md, "Address"): a ``path`` (kind ``path``)
    or a catalog ``name`` (kind ``table``), its ``format``, a landing's reader ``options``, and
    the Airflow ``connection`` of an object-storage path.

    :meth:`from_document` resolves a relative path once; everything downstream uses the value
    as it is. :meth:`as_written` keeps the plan's own words (reviewable DDL, compile-time checks).
    """

    kind: str
    path: str | None = None
    name: str | None = None
    format: str = "delta"
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    connection: str | None = None

    @classmethod
    def as_written(cls, document: Mapping[str, Any]) -> Address:
        """The address of a plan document's entry, its path left as written. Raises ``ValueError``."""
        kind = document["kind"]
        key = {"path": "path", "table": "name"}.get(kind)
        if key is None or not isinstance(document.get(key), str):
            raise ValueError(f"an address is {{kind: path, path}} or {{kind: table, name}}, not {dict(document)!r}")
        return cls(kind=kind, path=document.get("path") if kind == "path" else None,
                   name=document.get("name") if kind == "table" else None,
                   format=document.get("format") or "delta",
                   options=MappingProxyType(dict(document.get("options") or {})),
                   connection=document.get("connection"))

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> Address:
        """The address of a plan document's entry, a relative path made absolute."""
        return cls.as_written(document).resolved()

    @classmethod
    def from_location(cls, text: str, format: str = "delta") -> Address:
        """An address for a string a CLI user typed: a path when it looks like one, else a name
        (resolved)."""
        if looks_like_path(text):
            return cls(kind="path", path=text, format=format).resolved()
        return cls(kind="table", name=text, format=format)

    @classmethod
    def of(cls, value: Address | Mapping[str, Any] | str, format: str = "delta") -> Address:
        """The address a step is handed at its edge: an :class:`Address` as it is, a plan
        document's entry or a location string resolved."""
        if isinstance(value, Address):
            return value
        return cls.from_document(value) if isinstance(value, Mapping) else cls.from_location(value, format)

    def resolved(self) -> Address:
        """This address with a relative path made absolute (URIs and absolute paths are kept)."""
        if not self.is_path or _URI.match(self.location) or posixpath.isabs(self.location):
            return self
        return replace(self, path=posixpath.normpath(posixpath.join(gate_home(), self.location)))

    @property
    def is_path(self) -> bool:
        return self.kind == "path"

    @property
    def location(self) -> str:
        """The path or the catalog name: what reports, results and decision records show."""
        return (self.path if self.is_path else self.name) or ""

    @property
    def sql_name(self) -> str:
        """The SQL table reference (``delta.`/abs/path``` or the quoted name)."""
        return table_reference(self)

    @property
    def deltalake_uri(self) -> str:
        """The table's URI for delta-rs, which opens tables by path only."""
        if not self.is_path:
            raise ValueError(f"{self.location} is a catalog table: delta-rs opens tables by path")
        return self.location

    def read(self, reader: Any) -> Any:
        """Load the table with a Spark ``DataFrameReader`` (format and options already set)."""
        return reader.load(self.path) if self.is_path else reader.table(self.name)

    def write(self, writer: Any) -> None:
        """Save with a Spark ``DataFrameWriter`` (mode and options already set)."""
        writer.save(self.path) if self.is_path else writer.saveAsTable(self.name)

    def as_document(self) -> dict[str, Any]:
        """The address as the plan writes it (JSON)."""
        return {"kind": self.kind, "path" if self.is_path else "name": self.location, "format": self.format,
                **({"options": dict(self.options)} if self.options else {}),
                **({"connection": self.connection} if self.connection else {})}


def looks_like_path(text: str) -> bool:
    """A location on a filesystem (``/x``, ``./x``, ``s3://b/x``) rather than a catalog name."""
    return "/" in text or "\\" in text or text.startswith(".") or os.path.exists(text)


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


def candidate_address(schema_address: Address, object_name: str, submission_id: str) -> Address:
    """Where stage freezes a file landing: ``<candidate schema>/<object>__<submission>``, for the
    plan's ``tables.candidate_schema`` and ``object`` (``contract_gate_plan.model.Plan.candidate``).

    For catalogs the candidate schema is a schema next to the target's: the compiler
    qualifies its name like a table (``catalog.schema._contract_gate_candidates``), so a
    three-part name is read as catalog + schema (first and last part).
    """
    schema = candidate_schema(schema_address)
    table = f"{object_name}__{name_part(submission_id)}"
    if schema.is_path:
        return Address(kind="path", path=posixpath.join(schema.location, table))
    return Address(kind="table", name=f"{schema.location}.{table}")


def candidate_schema(address: Address) -> Address:
    """The plan's ``candidate_schema`` address as the folder or ``catalog.schema`` the candidates
    go in (a three-part name is catalog + schema: its first and last part)."""
    if address.is_path:
        return address
    parts = address.location.split(".")
    return replace(address, name=".".join([parts[0], parts[-1]] if len(parts) > 2 else parts))
