"""SQL text shared by both sides: identifier quoting, string literals, table references.

Standard library only: the contract compiler (Airflow side) and the Spark jobs both use these,
so a name is quoted the same way in a validation predicate, a CHECK constraint and a DML statement.
"""

from __future__ import annotations


def quote_identifier(name: str) -> str:
    """Back-quote one identifier part; an embedded back-quote is doubled."""
    return "`" + name.replace("`", "``") + "`"


def quote_qualified(name: str) -> str:
    """Quote a dotted table name (``catalog.schema.table``) part by part."""
    return ".".join(quote_identifier(part) for part in name.split("."))


def string_literal(value: str) -> str:
    """A Spark SQL string literal. Spark processes backslash escapes in literals by default,
    so both the backslash and the quote are escaped."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def table_reference(address: dict) -> str:
    """SQL for a plan address: ``delta.`/path``` for a path, the quoted name for a catalog table."""
    if address["kind"] == "path":
        return f"delta.{quote_identifier(address['path'])}"
    return quote_qualified(address["name"])
