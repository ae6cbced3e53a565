"""Databricks Labs DQX checks (``type: custom, engine: dqx``) compiled to plan rules.

DQX's own argument semantics are kept so a DQX user's checks run unchanged:
- a check whose condition is NULL does not fail (DQX only flags rows where the failure
  condition is TRUE), so each predicate below lets NULL through unless the function's name
  says ``not_null``;
- ``is_in_list`` / ``is_not_null_and_is_in_list`` items may be written as SQL literals
  (``"'USD'"``) or as plain values (``USD``): a string wrapped in single quotes is read as a
  SQL string literal, anything else as the value itself;
- range limits that are numbers or ISO dates/timestamps are literals; any other string is a SQL
  expression (for example another column), checked like every contract expression;
- ``sql_expression`` passes where the expression is TRUE (``negate: true`` flips it);
- ``is_unique`` keeps DQX's default ``nulls_distinct: true``;
- ``criticality: warn`` is a warning; ``name`` becomes the rule id; ``filter`` limits the rows.
"""

from __future__ import annotations

import datetime
import re

import yaml

from contract_gate.contract.rules import RuleError, custom_expression, referenced_columns
from contract_gate.contract.sqltext import number_literal, quote_identifier, string_literal

# function -> (required arguments, optional arguments with defaults)
FUNCTIONS: dict[str, tuple[tuple[str, ...], dict]] = {
    "is_not_null": (("column",), {}),
    "is_not_empty": (("column",), {"trim_strings": False}),
    "is_not_null_and_not_empty": (("column",), {"trim_strings": False}),
    "is_in_list": (("column", "allowed"), {"case_sensitive": True}),
    "is_not_null_and_is_in_list": (("column", "allowed"), {"case_sensitive": True}),
    "is_in_range": (("column", "min_limit", "max_limit"), {}),
    "is_not_in_range": (("column", "min_limit", "max_limit"), {}),
    "is_not_less_than": (("column", "limit"), {}),
    "is_not_greater_than": (("column", "limit"), {}),
    "regex_match": (("column", "regex"), {"negate": False}),
    "sql_expression": (("expression",), {"msg": None, "name": None, "negate": False, "columns": None}),
    "is_unique": (("columns",), {"nulls_distinct": True}),
    "is_valid_date": (("column",), {"date_format": None}),
    "is_valid_timestamp": (("column",), {"timestamp_format": None}),
}
_CHECK_KEYS = {"criticality", "name", "check", "filter", "user_metadata"}


def parse_implementation(implementation) -> dict:
    """The DQX check as a dict; ``implementation`` may be a mapping or YAML text of one."""
    if isinstance(implementation, str):
        try:
            implementation = yaml.safe_load(implementation)
        except yaml.YAMLError as exc:
            raise RuleError(f"implementation is not valid YAML: {exc}", "implementation") from exc
    if isinstance(implementation, list) and len(implementation) == 1:
        implementation = implementation[0]
    if not isinstance(implementation, dict):
        raise RuleError("a DQX implementation must be one check (a mapping with 'check')", "implementation")
    unknown = sorted(set(implementation) - _CHECK_KEYS)
    if unknown:
        raise RuleError(f"unknown DQX check key(s): {', '.join(unknown)}", ["implementation", unknown[0]])
    check = implementation.get("check")
    if not isinstance(check, dict) or "function" not in check:
        raise RuleError("a DQX check needs 'check: {function: ..., arguments: ...}'", ["implementation", "check"])
    unknown = sorted(set(check) - {"function", "arguments"})
    if unknown:
        raise RuleError(f"unknown DQX check key(s): {', '.join(unknown)} (for_each_column: write one check per column)",
                        ["implementation", "check", unknown[0]])
    return implementation


def compile_check(implementation: dict, columns: dict[str, str]) -> dict:
    """Compile a parsed DQX check against ``columns`` (name -> Spark type). Returns the rule fields
    the check decides: function, columns, severity, scope, predicate or key, filter, name."""
    check = implementation["check"]
    function = check["function"]
    if function not in FUNCTIONS:
        raise RuleError(f"unknown DQX function {function!r}; supported: {', '.join(sorted(FUNCTIONS))}",
                        ["implementation", "check", "function"])
    required, optional = FUNCTIONS[function]
    arguments = check.get("arguments") or {}
    where = ["implementation", "check", "arguments"]
    if not isinstance(arguments, dict):
        raise RuleError("DQX arguments must be a mapping", where)
    missing = [name for name in required if name not in arguments]
    if missing:
        raise RuleError(f"DQX function {function} needs argument(s): {', '.join(missing)}", where)
    unknown = sorted(set(arguments) - set(required) - set(optional))
    if unknown:
        raise RuleError(f"unknown argument(s) for DQX function {function}: {', '.join(unknown)}", [*where, unknown[0]])
    args = {**optional, **arguments}

    criticality = implementation.get("criticality", "error")
    if criticality not in ("error", "warn"):
        raise RuleError(f"criticality must be 'error' or 'warn', got {criticality!r}", ["implementation", "criticality"])
    fields = {
        "function": function,
        "severity": "error" if criticality == "error" else "warning",
        "name": implementation.get("name"),
        "filter": custom_expression(implementation["filter"]) if implementation.get("filter") else None,
    }
    if function == "is_unique":
        key = args["columns"]
        if not isinstance(key, list) or not key or not all(isinstance(c, str) for c in key):
            raise RuleError("is_unique needs 'columns': a list of column names", [*where, "columns"])
        for name in key:
            _known_column(name, columns, [*where, "columns"])
        return {**fields, "scope": "group", "kind": "unique", "columns": key,
                "nulls_distinct": bool(args["nulls_distinct"])}
    if function == "sql_expression":
        expression = custom_expression(args["expression"])
        predicate = f"coalesce(NOT {expression}, TRUE)" if args["negate"] else f"coalesce({expression}, TRUE)"
        used = referenced_columns(args["expression"], list(columns))
        return {**fields, "name": fields["name"] or args["name"], "scope": "row", "kind": "dqx",
                "columns": used, "predicate": predicate}

    column = args["column"]
    _known_column(column, columns, [*where, "column"])
    column_type = columns[column]
    col = quote_identifier(column)
    predicate = _ROW_FUNCTIONS[function](col, column_type, args, where)
    return {**fields, "scope": "row", "kind": "dqx", "columns": [column], "predicate": predicate}


def _known_column(name, columns: dict, where) -> None:
    if not isinstance(name, str) or name not in columns:
        raise RuleError(f"DQX check refers to unknown column {name!r}", where)


def _text(col: str, args: dict) -> str:
    return f"trim(CAST({col} AS STRING))" if args["trim_strings"] else f"CAST({col} AS STRING)"


def _list_item(item, column_type: str, where) -> str:
    if isinstance(item, bool) or item is None:
        raise RuleError(f"allowed values must be strings or numbers, got {item!r}", where)
    if isinstance(item, (int, float)):
        return number_literal(item)
    if isinstance(item, str):
        if len(item) >= 2 and item.startswith("'") and item.endswith("'"):
            return string_literal(item[1:-1].replace("''", "'"))
        return string_literal(item)
    raise RuleError(f"allowed values must be strings or numbers, got {item!r}", where)


def _allowed(col: str, column_type: str, args: dict, where) -> str:
    allowed = args["allowed"]
    if not isinstance(allowed, list) or not allowed:
        raise RuleError("'allowed' must be a non-empty list", [*where, "allowed"])
    items = [_list_item(item, column_type, [*where, "allowed", i]) for i, item in enumerate(allowed)]
    if args["case_sensitive"]:
        return f"{col} IN ({', '.join(items)})"
    return f"lower(CAST({col} AS STRING)) IN ({', '.join(f'lower({i})' for i in items)})"


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _limit(value, where) -> str:
    if isinstance(value, bool) or value is None:
        raise RuleError(f"a limit must be a number, a date or an expression, got {value!r}", where)
    if isinstance(value, (int, float)):
        return number_literal(value)
    if isinstance(value, str) and _ISO_DATE.match(value):
        return f"DATE {string_literal(value)}"
    if isinstance(value, str):
        try:
            datetime.datetime.fromisoformat(value)
            return f"TIMESTAMP {string_literal(value)}"
        except ValueError:
            return custom_expression(value)
    raise RuleError(f"a limit must be a number, a date or an expression, got {value!r}", where)


def _regex(col, _type, args, where):
    if not isinstance(args["regex"], str):
        raise RuleError("'regex' must be a string", [*where, "regex"])
    match = f"{col} RLIKE {string_literal(args['regex'])}"
    return f"({col} IS NULL OR {'NOT ' if args['negate'] else ''}{match})"


def _valid_temporal(function: str, format_key: str):
    def build(col, _type, args, where):
        fmt = args[format_key]
        if fmt is not None and not isinstance(fmt, str):
            raise RuleError(f"'{format_key}' must be a string", [*where, format_key])
        parsed = f"try_{function}(CAST({col} AS STRING){', ' + string_literal(fmt) if fmt else ''})"
        return f"({col} IS NULL OR {parsed} IS NOT NULL)"
    return build


_ROW_FUNCTIONS = {
    "is_not_null": lambda col, t, a, w: f"{col} IS NOT NULL",
    "is_not_empty": lambda col, t, a, w: f"({col} IS NULL OR {_text(col, a)} <> '')",
    "is_not_null_and_not_empty": lambda col, t, a, w: f"({col} IS NOT NULL AND {_text(col, a)} <> '')",
    "is_in_list": lambda col, t, a, w: f"({col} IS NULL OR {_allowed(col, t, a, w)})",
    "is_not_null_and_is_in_list": lambda col, t, a, w: f"({col} IS NOT NULL AND {_allowed(col, t, a, w)})",
    "is_in_range": lambda col, t, a, w: (
        f"({col} IS NULL OR ({col} >= {_limit(a['min_limit'], [*w, 'min_limit'])}"
        f" AND {col} <= {_limit(a['max_limit'], [*w, 'max_limit'])}))"),
    "is_not_in_range": lambda col, t, a, w: (
        f"({col} IS NULL OR {col} < {_limit(a['min_limit'], [*w, 'min_limit'])}"
        f" OR {col} > {_limit(a['max_limit'], [*w, 'max_limit'])})"),
    "is_not_less_than": lambda col, t, a, w: f"({col} IS NULL OR {col} >= {_limit(a['limit'], [*w, 'limit'])})",
    "is_not_greater_than": lambda col, t, a, w: f"({col} IS NULL OR {col} <= {_limit(a['limit'], [*w, 'limit'])})",
    "regex_match": _regex,
    "is_valid_date": _valid_temporal("to_date", "date_format"),
    "is_valid_timestamp": _valid_temporal("to_timestamp", "timestamp_format"),
}
