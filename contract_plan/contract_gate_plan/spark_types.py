"""ODCS ``physicalType`` -> the exact Spark type string (``DataType.simpleString()``).

The schema check compares these strings literally, so aliases are normalised here
(``integer`` -> ``int``, ``long`` -> ``bigint``, ``decimal`` -> ``decimal(10,0)``) and nested types
are rendered the way Spark renders them (``array<string>``, ``struct<a:int,b:string>``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from contract_gate_plan.sql_text import quote_identifier

_ATOMIC = {
    "string": "string", "varchar": "string", "char": "string",
    "boolean": "boolean", "bool": "boolean",
    "tinyint": "tinyint", "byte": "tinyint",
    "smallint": "smallint", "short": "smallint",
    "int": "int", "integer": "int",
    "bigint": "bigint", "long": "bigint",
    "float": "float", "real": "float",
    "double": "double",
    "date": "date",
    "timestamp": "timestamp", "timestamp_ltz": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
    "binary": "binary",
}
NUMERIC = {"tinyint", "smallint", "int", "bigint", "float", "double"}
INTEGRAL = {"tinyint", "smallint", "int", "bigint"}
_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|\d+|`(?:[^`]|``)*`|[<>(),:])")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Spark's JSON type names -> simpleString (the rest are the same word)
_JSON_NAMES = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint"}


class TypeSyntaxError(ValueError):
    pass


@functools.lru_cache(maxsize=1024)  # contracts repeat a handful of types many times
def spark_type(physical_type: str) -> str:
    """Normalise ``physical_type``; raise :class:`TypeSyntaxError` for anything Spark cannot store."""
    tokens = _tokens(physical_type)
    result, rest = _parse(tokens)
    if rest:
        raise TypeSyntaxError(f"unexpected {''.join(rest)!r} in type {physical_type!r}")
    return result


def field_name_text(name: str) -> str:
    """A struct field's name in type text: as it is when it is a plain word (Spark's
    ``simpleString`` form), else back-quoted (any other text: ``simpleString`` would leave it
    ambiguous, and DDL could not read it)."""
    return name if _PLAIN_NAME.fullmatch(name) else quote_identifier(name)


def type_text(json_type: Any) -> str:
    """The type text of a type in Spark's JSON form (``DataType.jsonValue()``, a Delta log's
    schema): ``simpleString``, with struct field names as :func:`field_name_text` writes them."""
    if isinstance(json_type, str):
        return _JSON_NAMES.get(json_type, json_type)
    kind = json_type["type"]
    if kind == "udt":  # a user-defined type (an ML vector) is stored as its SQL type
        return type_text(json_type["sqlType"])
    if kind == "array":
        return f"array<{type_text(json_type['elementType'])}>"
    if kind == "map":
        return f"map<{type_text(json_type['keyType'])},{type_text(json_type['valueType'])}>"
    return "struct<" + ",".join(f"{field_name_text(f['name'])}:{type_text(f['type'])}"
                                for f in json_type["fields"]) + ">"


def struct_field(item: str) -> tuple[str, str]:
    """(name, type text) of one ``name:type`` item of a struct's :func:`nested_parts`."""
    if item.startswith("`"):
        end = 1
        while True:
            end = item.index("`", end)
            if item.startswith("``", end):
                end += 2
                continue
            return item[1:end].replace("``", "`"), item[end + 2:]
    name, _, field_type = item.partition(":")
    return name, field_type


def is_numeric(type_string: str) -> bool:
    return type_string in NUMERIC or type_string.startswith("decimal(")


def decimal_bounds(type_string: str) -> tuple[int, int] | None:
    match = re.fullmatch(r"decimal\((\d+),(\d+)\)", type_string)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _tokens(text: str) -> list[str]:
    if not isinstance(text, str):
        raise TypeSyntaxError(f"physicalType must be a string, got {text!r}")
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise TypeSyntaxError(f"unknown physicalType {text!r}")
        tokens.append(match.group(1))
        pos = match.end()
    if not tokens:
        raise TypeSyntaxError("physicalType is empty")
    return tokens


def _expect(tokens: list[str], token: str) -> list[str]:
    if not tokens or tokens[0] != token:
        raise TypeSyntaxError(f"expected {token!r}")
    return tokens[1:]


def _parse(tokens: list[str]) -> tuple[str, list[str]]:
    head, rest = tokens[0].lower(), tokens[1:]
    if head in ("decimal", "numeric", "dec"):
        if rest[:1] == ["("]:
            precision, rest = _int(rest[1:])
            scale = 0
            if rest[:1] == [","]:
                scale, rest = _int(rest[1:])
            rest = _expect(rest, ")")
        else:
            precision, scale = 10, 0
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise TypeSyntaxError(f"decimal({precision},{scale}) is out of range (precision 1-38, scale 0-precision)")
        return f"decimal({precision},{scale})", rest
    if head in ("varchar", "char") and rest[:1] == ["("]:
        _, rest = _int(rest[1:])
        return "string", _expect(rest, ")")
    if head == "array":
        element, rest = _parse(_expect(rest, "<"))
        return f"array<{element}>", _expect(rest, ">")
    if head == "map":
        key, rest = _parse(_expect(rest, "<"))
        value, rest = _parse(_expect(rest, ","))
        return f"map<{key},{value}>", _expect(rest, ">")
    if head == "struct":
        rest = _expect(rest, "<")
        fields = []
        while rest and rest[0] != ">":
            name = rest[0][1:-1].replace("``", "`") if rest[0].startswith("`") else rest[0]
            if not name or rest[0] in ("<", ">", "(", ")", ",", ":"):
                raise TypeSyntaxError(f"expected a struct field name, got {rest[0]!r}")
            field_type, rest = _parse(_expect(rest[1:], ":"))
            fields.append(f"{field_name_text(name)}:{field_type}")
            if rest[:1] == [","]:
                rest = rest[1:]
        return f"struct<{','.join(fields)}>", _expect(rest, ">")
    if head in _ATOMIC:
        return _ATOMIC[head], rest
    raise TypeSyntaxError(f"unknown physicalType {tokens[0]!r}")


def _int(tokens: list[str]) -> tuple[int, list[str]]:
    if not tokens or not tokens[0].isdigit():
        raise TypeSyntaxError("expected a number")
    return int(tokens[0]), tokens[1:]


# -- type widening ------------------------------------------------------------------------------
# Spark's up-cast (``Cast.canUpCast``): a conversion that loses no value. Numbers widen along
# this order; a decimal holds every value of an integral type with that many digits.
_NUMERIC_ORDER = ("tinyint", "smallint", "int", "bigint", "float", "double")
_INTEGRAL_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
_TEMPORAL_WIDENING = {("date", "timestamp"), ("date", "timestamp_ntz")}


def type_change(old: str, new: str) -> str:
    """How the normalised Spark type ``new`` relates to ``old``: ``same``, ``widened`` (every
    value of ``old`` is a value of ``new``), ``narrowed`` (the reverse) or ``changed``."""
    if old == new:
        return "same"
    if widens(old, new):
        return "widened"
    return "narrowed" if widens(new, old) else "changed"


def widens(old: str, new: str) -> bool:
    """Whether Spark up-casts ``old`` to ``new`` (both as :func:`spark_type` writes them)."""
    if old == new:
        return True
    if new == "string":  # every atomic value has a string form
        return not old.startswith(("array<", "map<", "struct<")) and old != "binary"
    if old in _NUMERIC_ORDER and new in _NUMERIC_ORDER:
        return _NUMERIC_ORDER.index(old) < _NUMERIC_ORDER.index(new)
    old_decimal, new_decimal = decimal_bounds(old), decimal_bounds(new)
    if old in _INTEGRAL_DIGITS:
        old_decimal = (_INTEGRAL_DIGITS[old], 0) if new_decimal else None
    if new in _INTEGRAL_DIGITS and old_decimal:
        new_decimal = (_INTEGRAL_DIGITS[new], 0)
    if old_decimal and new_decimal:
        (p, s), (p2, s2) = old_decimal, new_decimal
        return p2 - s2 >= p - s and s2 >= s
    if (old, new) in _TEMPORAL_WIDENING:
        return True
    old_parts, new_parts = nested_parts(old), nested_parts(new)
    if old_parts and new_parts and old_parts[0] == new_parts[0]:
        (kind, old_items), (_, new_items) = old_parts, new_parts
        if len(old_items) != len(new_items):
            return False
        if kind == "struct":  # field by field, same names in the same order
            return all(struct_field(a)[0] == struct_field(b)[0] and widens(struct_field(a)[1], struct_field(b)[1])
                       for a, b in zip(old_items, new_items))
        return all(widens(a, b) for a, b in zip(old_items, new_items))
    return False


def nested_parts(type_string: str) -> tuple[str, list[str]] | None:
    """(``array``/``map``/``struct``, its element types or ``name:type`` fields), or None."""
    kind, bracket, inner = type_string.partition("<")
    if not bracket or kind not in ("array", "map", "struct") or not inner.endswith(">"):
        return None
    items, depth, start, quoted = [], 0, 0, False
    inner = inner[:-1]
    for i, char in enumerate(inner):
        if char == "`":  # a quoted field name (field_name_text) may hold any of these characters
            quoted = not quoted  # a doubled back-quote flips twice
        elif quoted:
            continue
        elif char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    items.append(inner[start:])
    return kind, items
