"""Draft an ODCS contract from what a sample of the data shows (``contract-gate init``).

The draft states only what the sample proves: the exact Spark type of every column,
``required`` where the sample has no NULL, and a suggested key where one column is unique. Rules
the sample merely suggests (ranges, enums of columns with few values) are written as comments
for a person to review. The sample's values are not known to be safe to write down (any column
may be personal data), so no value goes into the file unless the caller asks for examples.

Every scalar is written as a JSON string or number, which YAML reads back unchanged, so a column
name with quotes, colons or line breaks cannot change the document's structure.

Standard library only: the profile comes from Spark (``contract_gate.sample_profile``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

API_VERSION = "v3.1.0"
# Columns with at most this many distinct values get an enum suggestion.
ENUM_SUGGESTION_MAX = 10
_KEY_NAME = re.compile(r"(^|_)(id|key|code|number|no)$", re.IGNORECASE)
_LOGICAL = {
    "string": "string", "boolean": "boolean", "date": "date", "timestamp": "timestamp", "timestamp_ntz": "timestamp",
    "tinyint": "integer", "smallint": "integer", "int": "integer", "bigint": "integer",
    "float": "number", "double": "number",
}
_RANGED = ("tinyint", "smallint", "int", "bigint", "float", "double", "date", "timestamp", "timestamp_ntz")


@dataclass(frozen=True)
class ColumnProfile:
    """What the sample shows of one column. ``minimum``/``maximum``/``values`` are the sample's
    own values: written only as commented examples, and only when asked for."""

    name: str
    type: str
    """Spark's ``simpleString`` of the column's type."""
    nulls: int
    distinct: int
    minimum: Any = None
    maximum: Any = None
    values: tuple = ()
    """Every distinct value, when there are at most ``ENUM_SUGGESTION_MAX``."""


@dataclass(frozen=True)
class SampleProfile:
    rows: int
    columns: tuple[ColumnProfile, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Landing:
    """Where the gate finds the batches: a path (relative to the server root, or absolute) or a table."""

    format: str
    path: str | None = None
    table: str | None = None
    sample: str | None = None  # the sample's path, when it lies where the gate reads no batch


def suggested_key(profile: SampleProfile) -> str | None:
    """A column with no NULL and a different value in every row, preferring key-like names
    (``order_id``); None when no column is unique or the sample has fewer than two rows."""
    if profile.rows < 2:
        return None
    unique = [c for c in profile.columns if c.nulls == 0 and c.distinct == profile.rows
              and (c.type in _LOGICAL and c.type not in ("float", "double", "boolean"))]
    unique.sort(key=lambda c: not _KEY_NAME.search(c.name))
    return unique[0].name if unique else None


def draft_contract(profile: SampleProfile, *, contract_id: str, object_name: str, landing: Landing,
                   with_examples: bool = False, source: str = "") -> str:
    """The draft contract's YAML text."""
    key = suggested_key(profile)
    lines = [
        f"# Drafted by `contract-gate init` from {_comment_text(source)} ({profile.rows} rows).",
        "# Review it: types and required are what the sample shows; the commented lines are suggestions.",
        f"apiVersion: {API_VERSION}",
        "kind: DataContract",
        f"id: {_scalar(contract_id)}",
        f"name: {_scalar(object_name)}",
        "version: 0.1.0",
        "status: draft",
        "servers:",
        "  - server: local",
        "    type: local",
        "    environment: dev",
        "    path: lakehouse",
        "    format: delta",
        "schema:",
        f"  - name: {_scalar(object_name)}",
        "    physicalType: table",
        "    properties:",
    ]
    for column in profile.columns:
        lines += _property_lines(column, column.name == key, profile.rows, with_examples)
    if profile.rows == 0:
        lines.append("    # the sample is empty: nothing suggests a key or a rule")
    lines += [
        "customProperties:",
        "  - property: contractGate",
        "    value:",
        *([f"      # the sample, {_comment_text(landing.sample)}, lies outside the server's root, where the gate",
           "      # reads no batch: land batches here (copy the sample to gate it)"] if landing.sample else []),
        "      landing:",
        *([f"        path: {_scalar(landing.path)}"] if landing.path is not None else [f"        table: {_scalar(landing.table)}"]),
        f"        format: {_scalar(landing.format)}",
    ]
    return "\n".join(lines) + "\n"


def _property_lines(column: ColumnProfile, is_key: bool, rows: int, with_examples: bool) -> list[str]:
    lines = [f"      - name: {_scalar(column.name)}", f"        physicalType: {_scalar(column.type)}"]
    if column.type in _LOGICAL:
        lines.append(f"        logicalType: {_LOGICAL[column.type]}")
    if rows and column.nulls == 0:
        lines.append("        required: true")
    if is_key:
        lines.append("        primaryKey: true  # suggested: unique and never NULL in the sample")
    if rows == 0:
        return lines
    if column.type in _RANGED and column.minimum is not None:
        if with_examples:
            lines += ["        # logicalTypeOptions:  # the sample's range",
                      f"        #   minimum: {_scalar(column.minimum)}",
                      f"        #   maximum: {_scalar(column.maximum)}"]
        else:
            lines.append("        # logicalTypeOptions: {minimum: ..., maximum: ...}  # the sample has a range; "
                         "its values are withheld (--with-examples)")
    if column.values and column.type not in ("boolean",) and column.distinct < rows:
        if with_examples:
            lines.append(f"        # enum: [{', '.join(_scalar(v) for v in column.values)}]  # every value in the sample")
        else:
            lines.append(f"        # enum: [...]  # {len(column.values)} distinct values in the sample; withheld "
                         "(--with-examples)")
    return lines


def _scalar(value: Any) -> str:
    """A YAML scalar that reads back as ``value``: JSON text (strings quoted and escaped)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


def _comment_text(text: str) -> str:
    """Text inside a comment: one line."""
    return " ".join(str(text).split())
