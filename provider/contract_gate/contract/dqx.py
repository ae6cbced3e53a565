"""Databricks Labs DQX checks (``type: custom, engine: dqx``) compiled to plan rules.

DQX's own argument semantics are kept so a DQX user's checks run unchanged:
- a check whose condition is NULL does not fail (DQX only flags rows where the failure
  condition is TRUE), so each predicate below lets NULL through unless the function's name
  says ``not_null``;
- ``is_in_list`` / ``is_not_null_and_is_in_list`` items may be written as SQL string literals
  (``"'USD'"``) or as plain values (``USD``, ``3``): DQX hands each item to ``F.lit``, and a
  quoted item is read as the literal it spells. Items are always literals here, never SQL;
- range limits that are numbers or ISO dates/timestamps are literals; any other string is a SQL
  expression (for example another column), as in DQX, checked like every contract expression;
- ``is_valid_date`` / ``is_valid_timestamp`` use ``try_to_timestamp`` like DQX;
- ``sql_expression`` passes where the expression is TRUE or NULL (``negate: true`` flips it);
- ``is_unique`` keeps DQX's default ``nulls_distinct: true`` (as ODCS ``unique`` does here);
- ``regex_match`` reads its regex as ECMA-262, like an ODCS pattern (``contract_gate.contract.patterns``):
  ``$`` is the end of the input, Java-only syntax is refused with what to write instead;
- ``criticality: error`` (the default) is an error and any other (``warn``, and the ``warning``
  or ``minor`` teams write) a warning; ``name`` becomes the rule id; ``filter`` limits the rows;
- ``for_each_column`` is one check per column listed (:func:`for_each_column`).
Type mismatches DQX would only hit at run time (a number in the allowed list of a string column,
which fails under Spark's ANSI mode) are contract errors here. Where DQX itself would refuse a
check (``is_in_range`` without ``max_limit``), the error names the check to write instead.
"""

from __future__ import annotations

import difflib
import re

from contract_gate.contract.patterns import PatternError, rlike
from contract_gate.contract.rules import RuleError, custom_expression, referenced_columns
from contract_gate_plan.spark_types import is_numeric
from contract_gate_plan.sql_text import quote_identifier, string_literal
from contract_gate.contract.sql_literals import number_literal
from contract_gate.contract.yaml_source import YamlSyntaxError, parse_yaml

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
# DQX itself refuses these checks ("Limit is not provided."); the message says what to write instead.
_MISSING_HINTS: dict[tuple[str, tuple[str, ...]], str] = {
    ("is_in_range", ("max_limit",)): "; with only a lower limit use is_not_less_than (limit: your min_limit)",
    ("is_in_range", ("min_limit",)): "; with only an upper limit use is_not_greater_than (limit: your max_limit)",
    ("is_not_in_range", ("max_limit",)): "; for values that must lie below min_limit use sql_expression "
                                         "(expression: <column> < <min_limit>)",
    ("is_not_in_range", ("min_limit",)): "; for values that must lie above max_limit use sql_expression "
                                         "(expression: <column> > <max_limit>)",
    ("is_not_less_than", ("limit",)): " (the inclusive lower bound; for two bounds use is_in_range)",
    ("is_not_greater_than", ("limit",)): " (the inclusive upper bound; for two bounds use is_in_range)",
}
# DQX functions the gate does not run, and how to say the same with what it does run.
_UNSUPPORTED_HINTS = {
    "is_not_in_list": "write sql_expression (expression: <column> NOT IN (...)); ",
    "is_equal_to": "write sql_expression (expression: <column> = <value>); ",
    "is_not_equal_to": "write sql_expression (expression: <column> <> <value>); ",
    "is_null": "write sql_expression (expression: <column> IS NULL); ",
}


def _function_hint(function) -> str:
    """What to write instead of an unknown DQX function: the gate's equivalent, or a near name."""
    if not isinstance(function, str):
        return ""
    if function in _UNSUPPORTED_HINTS:
        return _UNSUPPORTED_HINTS[function]
    if function.startswith("is_aggr_"):
        return "dataset checks are ODCS library metrics (rowCount, nullValues...) or type: sql entries; "
    close = difflib.get_close_matches(function, FUNCTIONS, n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def parse_implementation(implementation) -> dict:
    """The DQX check as a dict; ``implementation`` may be a mapping or YAML text of one."""
    if isinstance(implementation, str):
        # YAML text inside the contract: parsed with the contract's own bounded reader, so an
        # alias bomb in the text is refused like one in the file (contract_gate.contract.yaml_source)
        try:
            document = parse_yaml(implementation)
        except YamlSyntaxError as exc:
            raise RuleError(f"implementation is not valid YAML: {exc}", "implementation") from exc
        if document.duplicates:
            raise RuleError(f"implementation has a duplicate key: {document.duplicates[0][0]}", "implementation")
        implementation = document.data
    if isinstance(implementation, list) and len(implementation) == 1:
        implementation = implementation[0]
    if not isinstance(implementation, dict):
        raise RuleError("a DQX implementation must be one check (a mapping with 'check')", "implementation")
    unknown = sorted(set(implementation) - _CHECK_KEYS, key=str)
    if unknown:
        raise RuleError(f"unknown DQX check key(s): {', '.join(map(str, unknown))}", ["implementation", unknown[0]])
    check = implementation.get("check")
    if not isinstance(check, dict) or "function" not in check:
        raise RuleError("a DQX check needs 'check: {function: ..., arguments: ...}'", ["implementation", "check"])
    unknown = sorted(set(check) - {"function", "arguments", "for_each_column"}, key=str)
    if unknown:
        raise RuleError(f"unknown DQX check key(s): {', '.join(map(str, unknown))}",
                        ["implementation", "check", unknown[0]])
    function = check["function"]
    if not isinstance(function, str) or function not in FUNCTIONS:
        raise RuleError(f"unknown DQX function {function!r}; {_function_hint(function)}supported: "
                        f"{', '.join(sorted(FUNCTIONS))}", ["implementation", "check", "function"])
    if check.get("arguments") is not None and not isinstance(check["arguments"], dict):
        raise RuleError("DQX arguments must be a mapping", ["implementation", "check", "arguments"])
    return implementation


def compile_check(implementation: dict, columns: dict[str, str], default_column: str | None = None) -> dict:
    """Compile a parsed DQX check against ``columns`` (name -> Spark type). A check written under a
    property may leave out ``column`` (``columns`` of ``is_unique``): it is that property. Returns
    the rule fields the check decides: function, columns, severity, scope, kind, predicate or
    nulls_distinct, filter, and the check's name (None if it has none) with ``name_key``, the YAML
    keys it was written under."""
    check = implementation["check"]
    function = check["function"]
    required, optional = FUNCTIONS[function]
    arguments = dict(check.get("arguments") or {})
    if default_column is not None and "column" in required:
        arguments.setdefault("column", default_column)
    if default_column is not None and function == "is_unique":
        arguments.setdefault("columns", [default_column])
    where = ["implementation", "check", "arguments"]
    unknown = sorted(set(arguments) - set(required) - set(optional), key=str)
    if unknown:
        raise RuleError(f"unknown argument(s) for DQX function {function}: {', '.join(map(str, unknown))}; "
                        f"it takes {', '.join([*required, *optional])}", [*where, unknown[0]])
    missing = [name for name in required if name not in arguments]
    if missing:
        hint = _MISSING_HINTS.get((function, tuple(missing)), "")
        raise RuleError(f"DQX function {function} needs argument(s): {', '.join(missing)}{hint}", where)
    args = {**optional, **arguments}

    criticality = implementation.get("criticality", "error")
    name = implementation.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise RuleError("a DQX check name must be a non-empty string", ["implementation", "name"])
    fields = {
        "function": function,
        "severity": "error" if criticality == "error" else "warning",
        "name": name,
        "name_key": ["implementation", "name"],
        "filter": _filter(implementation.get("filter")),
    }
    if function == "is_unique":
        return {**fields, **_unique(args, columns, where)}
    if function == "sql_expression":
        return {**fields, **_sql_expression(args, columns, where, name)}
    column = args["column"]
    _known_column(column, columns, [*where, "column"])
    predicate = _ROW_FUNCTIONS[function](quote_identifier(column), columns[column], args, where)
    return {**fields, "scope": "row", "kind": "dqx", "columns": [column], "predicate": predicate}


def for_each_column(implementation: dict) -> list[tuple[dict, list | None]]:
    """The checks a parsed DQX check stands for, each with the YAML keys of its column in
    ``for_each_column`` (None without one). As DQX expands it: one check per item, the item its
    ``column`` (its ``columns`` for ``is_unique``, where an item is a list of columns); a check
    with a ``name`` gives each its name plus ``.<column>``, so every id stays unique."""
    check = implementation["check"]
    if "for_each_column" not in check:
        return [(implementation, None)]
    items, where = check["for_each_column"], ["implementation", "check", "for_each_column"]
    if not isinstance(items, list) or not items:
        raise RuleError("for_each_column must be a non-empty list of columns", where)
    argument = "columns" if check["function"] == "is_unique" else "column"
    if argument not in FUNCTIONS[check["function"]][0]:
        raise RuleError(f"DQX function {check['function']} takes no column: for_each_column does not apply", where)
    if argument in (check.get("arguments") or {}):
        raise RuleError(f"give the columns either in for_each_column or in arguments.{argument}, not both",
                        ["implementation", "check", "arguments", argument])
    expanded: list[tuple[dict, list | None]] = []
    for index, item in enumerate(items):
        if argument == "columns" and isinstance(item, str):
            item = [item]
        if not (isinstance(item, str) and item) and not (isinstance(item, list) and item):
            raise RuleError(f"for_each_column items are column names, got {item!r}", [*where, index])
        one = {**implementation, "check": {"function": check["function"],
                                           "arguments": {**(check.get("arguments") or {}), argument: item}}}
        if isinstance(implementation.get("name"), str) and implementation["name"]:
            one["name"] = f"{implementation['name']}.{item if isinstance(item, str) else '.'.join(map(str, item))}"
        expanded.append((one, [*where, index]))
    return expanded


def _filter(text) -> str | None:
    if text is None:
        return None
    return custom_expression(text, ["implementation", "filter"])


def _unique(args: dict, columns: dict, where: list) -> dict:
    key = args["columns"]
    if not isinstance(key, list) or not key or not all(isinstance(c, str) for c in key):
        hint = f" (write columns: [{key}])" if isinstance(key, str) and key else ""
        raise RuleError(f"is_unique needs 'columns': a list of column names{hint}", [*where, "columns"])
    for index, name in enumerate(key):
        _known_column(name, columns, [*where, "columns", index])
    if not isinstance(args["nulls_distinct"], bool):
        raise RuleError("'nulls_distinct' must be true or false", [*where, "nulls_distinct"])
    return {"scope": "group", "kind": "unique", "columns": key, "nulls_distinct": args["nulls_distinct"]}


def _sql_expression(args: dict, columns: dict, where: list, check_name) -> dict:
    expression = custom_expression(args["expression"], [*where, "expression"])
    # DQX fails a row only where the expression is FALSE (TRUE with negate); NULL passes.
    negate = _flag(args, "negate", where)
    predicate = f"coalesce(NOT {expression}, TRUE)" if negate else f"coalesce({expression}, TRUE)"
    used = args["columns"]
    if used is None:
        used = referenced_columns(args["expression"], list(columns))
    elif not isinstance(used, list) or not all(isinstance(c, str) for c in used):
        raise RuleError("'columns' must be a list of column names", [*where, "columns"])
    else:
        for index, name in enumerate(used):
            _known_column(name, columns, [*where, "columns", index])
    name = args["name"]
    if name is not None and (not isinstance(name, str) or not name):
        raise RuleError("'name' must be a non-empty string", [*where, "name"])
    fields = {"scope": "row", "kind": "dqx", "columns": used, "predicate": predicate}
    if not check_name and name:
        fields.update(name=name, name_key=[*where, "name"])
    return fields


def _known_column(name, columns: dict, where) -> None:
    if not isinstance(name, str) or name not in columns:
        raise RuleError(f"DQX check refers to unknown column {name!r}", where)


def _flag(args: dict, name: str, where) -> bool:
    if not isinstance(args[name], bool):
        raise RuleError(f"'{name}' must be true or false", [*where, name])
    return args[name]


def _text(col: str, args: dict, where) -> str:
    return f"trim(CAST({col} AS STRING))" if _flag(args, "trim_strings", where) else f"CAST({col} AS STRING)"


def _list_item(item, column_type: str, where) -> str:
    """DQX passes each item to ``F.lit``; an item written as a SQL string literal (``"'USD'"``) is
    read as that literal. Items must match the column type: under Spark's ANSI mode comparing a
    string column with a number fails the whole validation job at run time."""
    if isinstance(item, str) and len(item) >= 2 and item[0] == item[-1] == "'":
        item = item[1:-1].replace("\\'", "'").replace("''", "'")
    if is_numeric(column_type):
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise RuleError(f"allowed values of a {column_type} column must be numbers, got {item!r}", where)
        return number_literal(item)
    if isinstance(item, str):
        return string_literal(item)
    raise RuleError(f"allowed values of a {column_type} column must be strings, got {item!r}", where)


def _allowed(col: str, column_type: str, args: dict, where) -> str:
    allowed = args["allowed"]
    if not isinstance(allowed, list) or not allowed:
        hint = (f" (write allowed: [{allowed}])" if isinstance(allowed, (str, int, float)) and allowed != ""
                else "; to allow only NULL use sql_expression with expression: <column> IS NULL" if allowed == [] else "")
        raise RuleError(f"'allowed' must be a non-empty list, as DQX requires{hint}", [*where, "allowed"])
    items = [_list_item(item, column_type, [*where, "allowed", i]) for i, item in enumerate(allowed)]
    if _flag(args, "case_sensitive", where):
        return f"{col} IN ({', '.join(items)})"
    return f"lower(CAST({col} AS STRING)) IN ({', '.join(f'lower({i})' for i in items)})"


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")


def _limit(value, column_type: str, where) -> str:
    """DQX turns a number (or a YAML date) into a literal and any other string into a SQL
    expression (another column, ``current_date()``...)."""
    if isinstance(value, bool) or value is None or not isinstance(value, (int, float, str)):
        raise RuleError(f"a limit must be a number, a date, a timestamp or an expression, got {value!r}", where)
    if isinstance(value, (int, float)):
        if not is_numeric(column_type):
            raise RuleError(f"a numeric limit cannot be compared with a {column_type} column", where)
        return number_literal(value)
    temporal = "DATE" if _ISO_DATE.fullmatch(value) else "TIMESTAMP" if _ISO_TIMESTAMP.fullmatch(value) else None
    if temporal is None:
        return custom_expression(value, where)
    if is_numeric(column_type):
        raise RuleError(f"a {temporal.lower()} limit cannot be compared with a {column_type} column", where)
    return f"{temporal} {string_literal(value)}"


def _regex(col, _type, args, where):
    try:
        match = rlike(col, args["regex"])
    except PatternError as exc:
        raise RuleError(f"'regex': {exc}", [*where, "regex"]) from exc
    return f"({col} IS NULL OR {'NOT ' if _flag(args, 'negate', where) else ''}{match})"


def _valid_temporal(format_key: str):
    # DQX parses both dates and timestamps with try_to_timestamp; NULL passes.
    def build(col, _type, args, where):
        fmt = args[format_key]
        if fmt is not None and (not isinstance(fmt, str) or not fmt):
            raise RuleError(f"'{format_key}' must be a non-empty string", [*where, format_key])
        parsed = f"try_to_timestamp({col}, {string_literal(fmt)})" if fmt else f"try_to_timestamp({col})"
        return f"({col} IS NULL OR {parsed} IS NOT NULL)"
    return build


def _range(col, column_type, args, where, inside: bool) -> str:
    low = _limit(args["min_limit"], column_type, [*where, "min_limit"])
    high = _limit(args["max_limit"], column_type, [*where, "max_limit"])
    if inside:
        return f"({col} IS NULL OR ({col} >= {low} AND {col} <= {high}))"
    return f"({col} IS NULL OR {col} < {low} OR {col} > {high})"


_ROW_FUNCTIONS = {
    "is_not_null": lambda col, t, a, w: f"{col} IS NOT NULL",
    "is_not_empty": lambda col, t, a, w: f"({col} IS NULL OR {_text(col, a, w)} <> '')",
    "is_not_null_and_not_empty": lambda col, t, a, w: f"({col} IS NOT NULL AND {_text(col, a, w)} <> '')",
    "is_in_list": lambda col, t, a, w: f"({col} IS NULL OR {_allowed(col, t, a, w)})",
    "is_not_null_and_is_in_list": lambda col, t, a, w: f"({col} IS NOT NULL AND {_allowed(col, t, a, w)})",
    "is_in_range": lambda col, t, a, w: _range(col, t, a, w, inside=True),
    "is_not_in_range": lambda col, t, a, w: _range(col, t, a, w, inside=False),
    "is_not_less_than": lambda col, t, a, w: f"({col} IS NULL OR {col} >= {_limit(a['limit'], t, [*w, 'limit'])})",
    "is_not_greater_than": lambda col, t, a, w: f"({col} IS NULL OR {col} <= {_limit(a['limit'], t, [*w, 'limit'])})",
    "regex_match": _regex,
    "is_valid_date": _valid_temporal("date_format"),
    "is_valid_timestamp": _valid_temporal("timestamp_format"),
}
