"""Everything that turns contract text into Spark SQL text.

Identifiers are always back-quoted and literals always escaped, so a column called ``select``
or an enum value ``x') OR 1=1 --`` stays what it is. The only places where a contract supplies
SQL are ``type: sql`` (one read-only query) and ``engine: spark-sql`` / DQX expressions (one
boolean row expression); :func:`check_expression` and :func:`check_query` accept exactly that.

The checks work on tokens, not on a full parse: they refuse every statement keyword, comments
(which could hide text from a reviewer), statement separators, subqueries in expressions and
functions that reach outside the data. A false refusal costs a contract author a rewrite; a false
acceptance could run something nobody reviewed, so they err on the side of refusing.
"""

from __future__ import annotations

import decimal
import functools
import math
import re

from spark_jobs.sql_text import quote_identifier, quote_qualified, string_literal  # noqa: F401  (re-exported)

# Statements, and functions that reach outside the data (reflection runs arbitrary Java).
_STATEMENT_WORDS = {
    "ADD", "ALTER", "ANALYZE", "CACHE", "CALL", "CLEAR", "COPY", "CREATE", "DELETE", "DESCRIBE",
    "DROP", "EXEC", "EXECUTE", "EXPLAIN", "GRANT", "INSERT", "LIST", "LOAD", "MERGE", "MSCK",
    "OPTIMIZE", "REFRESH", "REPAIR", "REPLACE", "RESET", "RESTORE", "REVOKE", "SET", "SHOW",
    "TRUNCATE", "UNCACHE", "UPDATE", "USE", "VACUUM",
}
_FORBIDDEN_FUNCTIONS = {"REFLECT", "JAVA_METHOD", "TRY_REFLECT", "READ_FILES", "INPUT_FILE_NAME"}
# Words that start or combine queries; in a row expression they could only form a subquery
# (``x IN (TABLE t)`` and ``x IN (VALUES 1)`` are subqueries too).
_QUERY_WORDS = {"SELECT", "WITH", "TABLE", "VALUES", "UNION", "INTERSECT", "EXCEPT"}
# Aggregates and windows have no meaning in a row predicate; Spark would fail at run time.
_AGGREGATE_FUNCTIONS = {
    "ANY_VALUE", "APPROX_COUNT_DISTINCT", "APPROX_PERCENTILE", "AVG", "BOOL_AND", "BOOL_OR",
    "COLLECT_LIST", "COLLECT_SET", "COUNT", "COUNT_IF", "EVERY", "FIRST", "FIRST_VALUE", "LAST",
    "LAST_VALUE", "MAX", "MAX_BY", "MEAN", "MEDIAN", "MIN", "MIN_BY", "PERCENTILE", "STDDEV",
    "STDDEV_POP", "STDDEV_SAMP", "SUM", "VARIANCE", "VAR_POP", "VAR_SAMP",
}
# Results that change between evaluations. Such a predicate is not made a Delta CHECK constraint
# (Delta accepts it): a random one would reject rows at random, and a time-dependent one
# (``d >= current_date() - 7``) would later make every rewrite of an old row fail.
_NONDETERMINISTIC_FUNCTIONS = {
    "CURRENT_DATE", "CURRENT_TIMESTAMP", "CURDATE", "NOW", "LOCALTIMESTAMP", "RAND", "RANDN",
    "RANDOM", "RANDSTR", "SHUFFLE", "UNIFORM", "UUID", "MONOTONICALLY_INCREASING_ID",
    "SPARK_PARTITION_ID", "UNIX_TIMESTAMP",
}
_MAX_DECIMAL_DIGITS = 38


def number_literal(value: int | float) -> str:
    """An exact Spark literal for a YAML number: an integer, or a decimal (``BD``) for fractions so
    that ``0.1`` means 0.1 and not the double nearest to it. Numbers beyond Spark's 38-digit
    decimals become double literals (``D``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"not a finite number: {value!r}")
    exact = decimal.Decimal(repr(value) if isinstance(value, float) else value)
    if exact == exact.to_integral_value():
        text = str(int(exact))
        if len(text.lstrip("-")) <= _MAX_DECIMAL_DIGITS:
            return text
    else:
        text = format(exact.normalize(), "f")
        if len(text.lstrip("-").replace(".", "")) <= _MAX_DECIMAL_DIGITS:
            return text + "BD"
    return repr(float(value)) + "D"


def _scan(text: str):
    """Yield (kind, token) over ``text``: kinds are word, string, ident, punct. Raise ValueError
    on a comment or an unterminated quote."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("--", i) or text.startswith("/*", i):
            raise ValueError("comments are not allowed")
        elif ch in "'\"":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise ValueError("unterminated quoted text")
            yield "string", text[i:j + 1]
            i = j + 1
        elif ch == "`":
            j = i + 1
            while True:  # a doubled back-quote is a back-quote inside the identifier
                j = text.find("`", j)
                if j < 0:
                    raise ValueError("unterminated quoted identifier")
                if text.startswith("``", j):
                    j += 2
                    continue
                break
            yield "ident", text[i:j + 1]
            i = j + 1
        elif ch.isalnum() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            yield "word", text[i:j]
            i = j
        else:
            yield "punct", ch
            i += 1


@functools.lru_cache(maxsize=4096)  # one expression is checked, mined for columns and for determinism
def _tokens(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(_scan(text))


def _called(tokens, index: int) -> bool:
    return index + 1 < len(tokens) and tokens[index + 1] == ("punct", "(")


def _check_tokens(text: str, forbidden_words: set[str], forbidden_calls: set[str]) -> tuple[tuple[str, str], ...]:
    tokens = _tokens(text)
    depth = 0
    for index, (kind, token) in enumerate(tokens):
        if kind == "punct":
            if token == ";":
                raise ValueError("only one statement is allowed (found ';')")
            depth += {"(": 1, ")": -1}.get(token, 0)
            if depth < 0:
                raise ValueError("unbalanced parentheses")
        elif kind == "word":
            upper = token.upper()
            if upper in forbidden_words:
                raise ValueError(f"{token!r} is not allowed here (back-quote it if it is a column name)")
            if upper in forbidden_calls and _called(tokens, index):
                raise ValueError(f"function {token!r} is not allowed here")
    if depth != 0:
        raise ValueError("unbalanced parentheses")
    return tokens


def check_expression(text: str) -> None:
    """Accept one boolean row expression; raise ValueError naming what is refused."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("an expression must be a non-empty string")
    tokens = _check_tokens(text, _STATEMENT_WORDS | _QUERY_WORDS | {"OVER"},
                           _FORBIDDEN_FUNCTIONS | _AGGREGATE_FUNCTIONS)
    if any(_starts_query(tokens, index) for index in range(len(tokens))):
        raise ValueError("a subquery is not allowed in a row expression")


def _starts_query(tokens, index: int) -> bool:
    """FROM first or right after '(' starts a pipe-syntax query (``x IN (FROM t)``); ``trim(FROM s)``
    is the one expression that writes it there."""
    kind, token = tokens[index]
    if kind != "word" or token.upper() != "FROM":
        return False
    if index == 0:
        return True
    before_trim = index >= 2 and tokens[index - 2][0] == "word" and tokens[index - 2][1].upper() == "TRIM"
    return tokens[index - 1] == ("punct", "(") and not before_trim


def is_deterministic(expression: str) -> bool:
    """False when ``expression`` calls a function whose result changes between evaluations
    (``current_date`` may be written without parentheses)."""
    tokens = _tokens(expression)
    return not any(
        kind == "word" and token.upper() in _NONDETERMINISTIC_FUNCTIONS
        and (_called(tokens, index) or token.upper() in ("CURRENT_DATE", "CURRENT_TIMESTAMP"))
        for index, (kind, token) in enumerate(tokens))


def identifiers(expression: str) -> set[str]:
    """The names an expression could use as columns: its words and back-quoted identifiers."""
    return {token[1:-1].replace("``", "`") if kind == "ident" else token
            for kind, token in _tokens(expression) if kind in ("word", "ident")}


_PLACEHOLDER = re.compile(r"\{([A-Za-z_]*)\}")


def check_query(text: str, placeholders: set[str]) -> str:
    """Accept one read-only SELECT/WITH query using only the given ``{placeholders}``; return it
    without surrounding whitespace and a trailing ``;``."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a query must be a non-empty string")
    body = text.strip()
    if body.endswith(";"):
        body = body[:-1].rstrip()
    unknown = sorted(set(_PLACEHOLDER.findall(body)) - placeholders)
    if unknown:
        raise ValueError(f"unknown placeholder(s) {', '.join('{' + u + '}' for u in unknown)}; "
                         f"allowed: {', '.join('{' + p + '}' for p in sorted(placeholders))}")
    tokens = _check_tokens(_PLACEHOLDER.sub("x", body), _STATEMENT_WORDS, _FORBIDDEN_FUNCTIONS)
    first = next((token.upper() for kind, token in tokens if kind == "word"), "")
    if first not in ("SELECT", "WITH"):
        raise ValueError("a query must start with SELECT or WITH")
    return body
