"""Everything that turns contract text into Spark SQL text.

Identifiers are always back-quoted and literals always escaped, so a column called ``select``
or an enum value ``x') OR 1=1 --`` stays what it is. The only places where a contract supplies
SQL are ``type: sql`` (one read-only query) and ``engine: spark-sql`` / DQX expressions (one
boolean expression); :func:`check_expression` and :func:`check_query` accept exactly that.
"""

from __future__ import annotations

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
_QUERY_ONLY_WORDS = {"SELECT", "WITH", "FROM", "UNION", "INTERSECT", "EXCEPT"}


def number_literal(value: int | float) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value!r}")
        # BD suffix keeps a fractional bound exact (a decimal literal) instead of a double.
        return repr(value) + "BD" if value != int(value) else str(int(value))
    return str(value)


def _scan(text: str):
    """Yield (kind, token) over ``text``: kinds are word, string, ident, punct. Raise ValueError
    on a comment, an unterminated quote or a statement separator."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("--", i) or text.startswith("/*", i):
            raise ValueError("comments are not allowed")
        elif ch in "'\"`":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if (text[j] == "\\" and ch != "`") else 1
            if j >= n:
                raise ValueError("unterminated quoted text")
            if ch == "`" and j + 1 < n and text[j + 1] == "`":  # doubled back-quote inside an identifier
                j += 1
                while j + 1 < n and text[j + 1] != "`":
                    j += 1
            yield ("ident" if ch == "`" else "string"), text[i:j + 1]
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


def _check_tokens(text: str, forbidden_words: set[str]) -> list[tuple[str, str]]:
    tokens = list(_scan(text))
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
                raise ValueError(f"{token!r} is not allowed here")
            next_is_call = index + 1 < len(tokens) and tokens[index + 1] == ("punct", "(")
            if upper in _FORBIDDEN_FUNCTIONS and next_is_call:
                raise ValueError(f"function {token!r} is not allowed")
    if depth != 0:
        raise ValueError("unbalanced parentheses")
    return tokens


def check_expression(text: str) -> None:
    """Accept one boolean row expression; raise ValueError naming what is refused."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("an expression must be a non-empty string")
    _check_tokens(text, _STATEMENT_WORDS | _QUERY_ONLY_WORDS)


_PLACEHOLDER = re.compile(r"\{([A-Za-z_]*)\}")


def check_query(text: str, placeholders: set[str]) -> None:
    """Accept one read-only SELECT/WITH query using only the given ``{placeholders}``."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a query must be a non-empty string")
    body = text.strip()
    if body.endswith(";"):
        body = body[:-1]
    unknown = sorted(set(_PLACEHOLDER.findall(body)) - placeholders)
    if unknown:
        raise ValueError(f"unknown placeholder(s) {', '.join('{' + u + '}' for u in unknown)}; "
                         f"allowed: {', '.join('{' + p + '}' for p in sorted(placeholders))}")
    tokens = _check_tokens(_PLACEHOLDER.sub("x", body), _STATEMENT_WORDS)
    first = next((token.upper() for kind, token in tokens if kind == "word"), "")
    if first not in ("SELECT", "WITH"):
        raise ValueError("a query must start with SELECT or WITH")
