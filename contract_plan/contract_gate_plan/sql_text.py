"""SQL text shared by both sides: identifier quoting, string literals, table references.

Standard library only: the contract compiler (Airflow side) and the Spark jobs both use these,
so a name is quoted the same way in a validation predicate, a CHECK constraint and a DML statement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contract_gate_plan.addresses import Address


def quote_identifier(name: str) -> str:
    """Back-quote one identifier part; an embedded back-quote is doubled."""
    return "`" + name.replace("`", "``") + "`"


def quote_qualified(name: str) -> str:
    """A dotted table name (``catalog.schema.table``) quoted part by part. A part that starts
    with a back-quote is taken as already quoted (```odd.name`.t``, doubled back-quotes inside);
    a back-quote anywhere else is part of the name. Raises ``ValueError`` for an empty part or an
    unclosed quote."""
    parts, index = [], 0
    while True:
        if name.startswith("`", index):
            part, index = _quoted_part(name, index)
        else:
            end = name.find(".", index)
            end = len(name) if end < 0 else end
            part, index = name[index:end], end
        if not part:
            raise ValueError(f"not a table name: {name!r}")
        parts.append(part)
        if index == len(name):
            return ".".join(quote_identifier(part) for part in parts)
        if name[index] != ".":
            raise ValueError(f"not a table name: {name!r}")
        index += 1


def _quoted_part(name: str, index: int) -> tuple[str, int]:
    """The back-quoted part starting at ``name[index]``, unquoted, and the index after it."""
    part, index = "", index + 1
    while index < len(name):
        if name[index] == "`":
            if name.startswith("``", index):
                part, index = part + "`", index + 2
                continue
            return part, index + 1
        part, index = part + name[index], index + 1
    raise ValueError(f"not a table name: {name!r} (an unclosed back-quote)")


# Spark processes backslash escapes in string literals (by default), so the backslash and the
# quote are escaped, and control characters are written as the escapes Spark reads back as
# them: the same ones the allow-list's renderer writes (sqlglot's Spark dialect), so a predicate
# the compiler writes is exactly its own rendering (``contract_gate_plan.sql_allowlist``).
_ESCAPES = {
    "\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\x1a": "\\Z",
    **{chr(code): f"\\{code:03o}" for code in (*range(1, 32), 127) if chr(code) not in "\n\r\t\b\x1a"},
}
_OCTAL_DIGITS = "01234567"


def string_literal(value: str) -> str:
    """A Spark SQL string literal that Spark reads back as ``value``."""
    out = []
    for index, char in enumerate(value):
        if char == "\0":  # \0 alone; before an octal digit Spark would read \0dd as one character
            following = value[index + 1:index + 2]
            out.append("\\000" if following and following in _OCTAL_DIGITS else "\\0")
        else:
            out.append(_ESCAPES.get(char, char))
    return "'" + "".join(out) + "'"


def table_reference(address: Address) -> str:
    """SQL for a plan address: ``delta.`/path``` for a path, the quoted name for a catalog table."""
    if address.is_path:
        return f"delta.{quote_identifier(address.location)}"
    return quote_qualified(address.location)
