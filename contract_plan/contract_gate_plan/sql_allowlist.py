"""The allow-list checker for SQL that a contract supplies, shared by the compiler and the Spark jobs.

A contract is untrusted input. Every piece of SQL it supplies (a ``type: sql`` query, an
``engine: spark-sql`` expression, a DQX ``sql_expression``, ``filter`` or limit) is parsed with
sqlglot's Spark dialect and the tree is walked against an ALLOW-list of node types and functions:
read-only scalar functions, aggregates and windows (queries only), and tables only through the
placeholders the gate substitutes (``{object}``, ``{property}``, and the aliases of
``references``). Anything else -- ``TRANSFORM ... USING``, ``IDENTIFIER()``, ``reflect`` /
``java_method``, table-valued and file functions, path tables (``text.`/etc/passwd```),
statements, comments, parameters, unknown functions -- is refused.

What runs is the SQL RENDERED from the checked tree, never the contract's text, and the
rendered text must parse, check and render to itself again (a fixed point): the checker and
Spark then read one string, with no raw string, escape, comment or quoting trick that one of
them reads differently. The Spark side runs the same check on every SQL text of a plan before it
executes it (``contract_gate_plan.document``), the compiler's own predicates included, so the compiler's
forms (``x IS NOT NULL``, ``DATE '...'``, ``0.1BD``, ``char_length``) render as they are written.

Standard library and sqlglot only: both sides import it.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal, InvalidOperation

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError
from sqlglot.generators.spark import SparkGenerator
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokens import TokenType

from contract_gate_plan.cost_bounds import MAX_BATCH_REFERENCES, MAX_BUILT_LENGTH, regex_problem
from contract_gate_plan.sql_text import quote_identifier

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to a Command" warning

TABLE_PLACEHOLDERS = ("object",)  # + the aliases of the gate's ``references``
COLUMN_PLACEHOLDERS = ("property",)
_SENTINEL = "__contract_gate_placeholder_"
MAX_SQL_CHARACTERS = 100_000
_NUMERIC_SUFFIXES = ("BD", "D", "L", "S", "Y", "F")


class SqlRefused(ValueError):
    """Contract SQL that is not allowed, or that does not parse; the message says why."""


class SqlNotSpark(SqlRefused):
    """SQL the gate cannot run, though it reads no table beyond its placeholders and writes
    nothing: it does not parse as Spark SQL, or uses a function or clause outside the allow-list
    (often another engine's dialect)."""


# -- a Spark dialect that renders the compiler's own forms as they are written ----------------

class TypedLiteral(exp.Expression):
    """``DATE '2024-01-01'`` (sqlglot would render an equivalent CAST)."""

    arg_types = {"this": True, "to": True}


class SuffixedNumber(exp.Expression):
    """``0.1BD``, ``1e+40D``, ``5L`` (sqlglot would render an equivalent CAST)."""

    arg_types = {"this": True, "suffix": True}


def _typed_literal(parser, this, data_type):
    if isinstance(this, exp.Literal) and this.is_string:
        return TypedLiteral(this=this, to=data_type)
    return exp.Cast(this=this, to=data_type)


class _Parser(SparkParser):
    TYPE_LITERAL_PARSERS = {
        **SparkParser.TYPE_LITERAL_PARSERS,
        **{kind: _typed_literal for kind in (exp.DType.DATE, exp.DType.TIMESTAMP, exp.DType.TIMESTAMPTZ,
                                             exp.DType.TIMESTAMPNTZ, exp.DType.TIMESTAMPLTZ)},
    }

    def build_cast(self, strict: bool, **kwargs):
        """The tokenizer reads ``0.1BD`` as ``0.1::DECIMAL`` with the suffix as the type token's text."""
        this, suffix = kwargs.get("this"), self._prev
        if (suffix is not None and suffix.text.upper() in _NUMERIC_SUFFIXES and suffix.token_type != TokenType.VAR
                and isinstance(this, exp.Literal) and this.is_number):
            return SuffixedNumber(this=this, suffix=suffix.text.upper())
        return super().build_cast(strict, **kwargs)


class _Generator(SparkGenerator):
    TRANSFORMS = {
        **SparkGenerator.TRANSFORMS,
        exp.Length: lambda self, e: self.func("char_length", e.this),
        exp.CurrentDate: lambda self, e: "current_date()",
        TypedLiteral: lambda self, e: f"{self.sql(e, 'to')} {self.sql(e, 'this')}",
        SuffixedNumber: lambda self, e: f"{e.this.this}{e.args['suffix']}",
    }

    def not_sql(self, expression: exp.Not) -> str:
        inner = expression.this
        if isinstance(inner, exp.Is):  # x IS NOT NULL / IS NOT TRUE, as written (NOT binds looser than IS)
            return f"{self.sql(inner, 'this')} IS NOT {self.sql(inner, 'expression')}"
        return super().not_sql(expression)


class GateSpark(Spark):
    """Spark SQL as the gate renders it: identifiers back-quoted, function names lower case."""

    NORMALIZE_FUNCTIONS = "lower"
    Parser = _Parser
    Generator = _Generator


_DIALECT = GateSpark()

# -- the allow-lists ---------------------------------------------------------------------------

_EXPRESSION_NODES = (
    exp.Column, exp.Identifier, exp.Literal, exp.Boolean, exp.Null, exp.Paren, exp.Neg, exp.Not,
    exp.And, exp.Or, exp.Xor, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ,
    exp.NullSafeNEQ, exp.Is, exp.In, exp.Between, exp.Like, exp.ILike, exp.RegexpLike, exp.Escape,
    exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.DPipe, exp.BitwiseAnd,
    exp.BitwiseOr, exp.BitwiseXor, exp.BitwiseNot, exp.Case, exp.If, exp.Cast, exp.TryCast,
    exp.DataType, exp.DataTypeParam, exp.Interval, exp.Var, exp.Bracket, exp.Tuple,
    TypedLiteral, SuffixedNumber,
)
# Read-only scalar functions sqlglot knows by class (the Spark names they stand for in comments).
_SCALAR_FUNCTIONS = (
    exp.Abs, exp.Acos, exp.Asin, exp.Atan, exp.Atan2, exp.Cbrt, exp.Ceil, exp.Cos, exp.Cosh,
    exp.Degrees, exp.Exp, exp.Floor, exp.Ln, exp.Log, exp.Pow, exp.Radians, exp.Rint, exp.Round,
    exp.Sign, exp.Sin, exp.Sinh, exp.Sqrt, exp.Tan, exp.Tanh, exp.IsNan, exp.Nanvl,
    exp.SafeAdd, exp.SafeSubtract, exp.SafeMultiply, exp.SafeDivide,  # try_add ... try_divide
    exp.Coalesce, exp.Nullif, exp.Nvl2, exp.Greatest, exp.Least,  # coalesce, nvl, ifnull, ...
    exp.Length, exp.BitLength, exp.Lower, exp.Upper, exp.Initcap, exp.Trim, exp.Concat,
    exp.ConcatWs, exp.Contains, exp.StartsWith, exp.EndsWith, exp.Left, exp.Right, exp.Pad,
    exp.Repeat, exp.Space, exp.Replace, exp.Reverse, exp.Substring, exp.SubstringIndex, exp.SplitPart,
    exp.StrPosition, exp.Levenshtein, exp.Ascii, exp.Chr,  # instr, locate, position; chr, char
    exp.RegexpCount, exp.RegexpInstr, exp.RegexpReplace, exp.RegexpSubstr,
    exp.RegexpExtract, exp.RegexpExtractAll,
    exp.MD5, exp.SHA, exp.SHA2, exp.Hex, exp.Unhex,
    exp.CurrentDate, exp.CurrentTimestamp, exp.TsOrDsAdd, exp.DateDiff, exp.TimeToStr,
    exp.TimestampTrunc, exp.DateTrunc, exp.StrToTime, exp.Year, exp.Quarter, exp.Month,
    exp.WeekOfYear, exp.Day, exp.DayOfMonth, exp.DayOfWeek, exp.DayOfYear, exp.Hour, exp.Minute,
    exp.Second, exp.LastDay, exp.NextDay, exp.MonthsBetween,  # date_add, date_sub, datediff, date_format, ...
    exp.TsOrDsToDate, exp.TimeStrToTime,  # what sqlglot reads into year(d), date_format(ts, f), to_date
    exp.BitwiseLeftShift, exp.BitwiseRightShift,
    exp.Extract, exp.ToNumber, exp.ArraySize, exp.ArrayContains, exp.Rand, exp.Randn, exp.Uuid,
    exp.Lambda, exp.ArrayFilter, exp.Transform,  # filter(a, x -> ...), transform(a, x -> ...)
    exp.JSONExtractScalar, exp.JSONPath, exp.JSONPathRoot, exp.JSONPathKey, exp.JSONPathSubscript,  # get_json_object
    exp.ArrayToString, exp.ArraySort, exp.RegexpSplit, exp.StrToUnix, exp.TimestampAdd,
    exp.TimestampFromParts, exp.AtTimeZone, exp.FromTimeZone,
    # array_join, sort_array, split, unix_timestamp, dateadd, make_timestamp, from/to_utc_timestamp
    exp.ArrayMin, exp.ArrayMax, exp.ArrayDistinct, exp.ArrayPosition, exp.ArrayExcept,
    exp.AddMonths, exp.EqualNull, exp.Translate, exp.Soundex, exp.Pi, exp.Factorial,
    exp.WidthBucket, exp.BitwiseCount,
)
# Spark functions sqlglot does not model (it keeps their names).
_SCALAR_NAMES = frozenset({
    "btrim", "expm1", "log1p", "pmod", "isnull", "isnotnull", "octet_length", "make_date",
    "try_to_number", "try_to_timestamp", "cardinality", "now", "hash", "crc32",
    "forall", "json_array_length", "arrays_overlap", "timestamp_seconds", "date_part",
    "nullifzero", "zeroifnull", "bround", "e", "hypot", "try_to_date", "try_element_at",
    "bigint", "decimal",
})
_AGGREGATE_FUNCTIONS = (
    exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.CountIf, exp.LogicalAnd, exp.LogicalOr,
    exp.Stddev, exp.StddevPop, exp.StddevSamp, exp.Variance, exp.VariancePop, exp.Median,
    exp.Quantile, exp.ApproxQuantile, exp.ApproxDistinct, exp.First, exp.Last, exp.AnyValue,
    exp.ArgMax, exp.ArgMin, exp.Corr, exp.CovarPop, exp.CovarSamp, exp.Skewness, exp.Kurtosis,
)
_AGGREGATE_NAMES = frozenset({"mean", "every", "some"})
_WINDOW_FUNCTIONS = (
    exp.RowNumber, exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist, exp.Ntile, exp.Lag,
    exp.Lead, exp.NthValue, exp.FirstValue, exp.LastValue,
)
_QUERY_NODES = (
    exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery, exp.From, exp.Join,
    exp.Where, exp.Group, exp.Having, exp.Order, exp.Ordered, exp.Limit, exp.Offset, exp.With,
    exp.CTE, exp.TableAlias, exp.Table, exp.Alias, exp.Star, exp.Distinct, exp.Exists, exp.Any,
    exp.All, exp.Window, exp.WindowSpec, exp.Filter,  # count(*) FILTER (WHERE ...)
)
_QUERY_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except)
# Results that change between evaluations: such a predicate is never a Delta CHECK constraint.
_NONDETERMINISTIC = (exp.CurrentDate, exp.CurrentTimestamp, exp.Rand, exp.Randn, exp.Uuid)
_NONDETERMINISTIC_NAMES = frozenset({"now"})

_ROW_NODES = frozenset(_EXPRESSION_NODES + _SCALAR_FUNCTIONS)
_QUERY_ONLY = frozenset(_QUERY_NODES + _AGGREGATE_FUNCTIONS + _WINDOW_FUNCTIONS)
_QUERY_ALLOWED = _ROW_NODES | _QUERY_ONLY

# What a refusal names for node types that are not allowed (others are named by their SQL).
# Spark functions that reach beyond the data (Java methods, the files read): refused as unsafe,
# never taken for another engine's dialect.
_UNSAFE_FUNCTIONS = frozenset({"reflect", "java_method", "try_reflect", "input_file_name", "input_file_block_start",
                               "input_file_block_length"})
_REFUSED_NAMES = {
    exp.QueryTransform: "TRANSFORM ... USING (a script)",
    exp.Command: "a statement",
    exp.Hint: "a query hint",
    exp.Lateral: "LATERAL VIEW",
    exp.Values: "VALUES",
    exp.Placeholder: "a parameter",
    exp.Parameter: "a parameter",
    exp.RawString: "a raw string r'...' (write a normal string)",
    exp.Version: "time travel (VERSION/TIMESTAMP AS OF)",
    exp.TableSample: "TABLESAMPLE",
    exp.Window: "a window function (OVER)",
}


# -- parsing -------------------------------------------------------------------------------

def _tokens(text: str):
    try:
        return _DIALECT.tokenize(text)
    except TokenError:
        raise SqlRefused("does not parse as Spark SQL: a quote is not closed") from None


def _substitute_placeholders(text: str, placeholders: Iterable[str], synonyms: Mapping[str, str] | None = None) -> str:
    """Replace ``{name}`` tokens (never text inside a string) by reserved identifiers; a synonym
    (``{model}`` for ``{object}``) by its placeholder's. ``${name}``, as other tools write it, is
    ``{name}``: the ``$`` goes with it, so no ``${`` reaches Spark."""
    known = set(placeholders)
    synonyms = {name: meant for name, meant in (synonyms or {}).items() if name not in known and meant in known}
    tokens = _tokens(text)
    out, last = [], 0
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.IDENTIFIER and _qualified_batch(token.text, known, synonyms):
            out += [text[last:token.start], f"`{_SENTINEL}object`"]
            last = token.end + 1
            continue
        if token.token_type != TokenType.L_BRACE:
            continue
        name = tokens[i + 1].text if i + 1 < len(tokens) else ""
        closed = i + 2 < len(tokens) and tokens[i + 2].token_type == TokenType.R_BRACE
        if not closed or tokens[i + 1].token_type == TokenType.STRING:
            raise SqlRefused("'{' is allowed only in a placeholder such as {object}")
        if name not in known and name not in synonyms:
            raise SqlRefused(f"unknown placeholder {{{name}}}; allowed: "
                             f"{', '.join('{' + p + '}' for p in sorted(known))}")
        dollar = i > 0 and tokens[i - 1].text == "$" and tokens[i - 1].end + 1 == token.start
        start = tokens[i - 1].start if dollar else token.start
        out += [text[last:start], f"`{_SENTINEL}{synonyms.get(name, name)}`"]
        last = tokens[i + 2].end + 1
    return "".join(out) + text[last:]


_TEMPLATED_PART = re.compile(r"\$?\{([A-Za-z_]+)\}")


def _qualified_batch(name: str, known: set[str], synonyms: Mapping[str, str]) -> bool:
    """Whether a back-quoted name is the batch's table, qualified by another tool's variables as
    datacontract-cli writes a BigQuery table (`${project}.${dataset}.${model}`): every part is a
    variable and the last one means {object}; the qualifiers only say where that table lives."""
    parts = name.split(".")
    matches = [match for match in map(_TEMPLATED_PART.fullmatch, parts) if match is not None]
    if len(matches) != len(parts):
        return False
    last = matches[-1].group(1)
    return "object" in known and synonyms.get(last, last) == "object"


def _parse(text: str) -> exp.Expr:
    tokens = _tokens(text)
    if any(token.comments for token in tokens):
        raise SqlRefused("comments are not allowed")
    for token, after in zip(tokens, tokens[1:]):
        if token.token_type != TokenType.STRING and token.text.upper() == "IDENTIFIER" \
                and after.token_type == TokenType.L_PAREN:
            raise SqlRefused("IDENTIFIER() is not allowed: name columns and functions directly")
    try:
        statements = _DIALECT.parse(text)
    except ParseError as exc:
        error = exc.errors[0] if exc.errors else {}
        where = f" (line {error['line']}, column {error['col']})" if error.get("line") else ""
        raise SqlNotSpark(f"does not parse as Spark SQL: {error.get('description', exc)}{where}") from None
    except SqlglotError as exc:
        raise SqlNotSpark(f"does not parse as Spark SQL: {exc}") from None
    found = [s for s in statements if s is not None]
    if len(found) != 1:
        raise SqlRefused("exactly one statement is allowed" if found else "SQL must not be empty")
    return found[0]


def _contract_text(text) -> str:
    """The text as given, refused when it is no SQL at all, too long or uses a reserved name."""
    if not isinstance(text, str) or not text.strip():
        raise SqlRefused("SQL must be a non-empty string")
    if len(text) > MAX_SQL_CHARACTERS:  # checking takes about a second per 10,000 characters
        raise SqlRefused(f"SQL longer than {MAX_SQL_CHARACTERS} characters is not allowed")
    if _SENTINEL in text.lower():
        raise SqlRefused(f"names starting with {_SENTINEL!r} are reserved")
    return text.strip()


def _render(tree: exp.Expr) -> str:
    return _DIALECT.generate(tree, identify=True, comments=False, unsupported_level=ErrorLevel.RAISE)


# -- checking --------------------------------------------------------------------------------

def _describe(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return f"function {node.name}()"
    for kind, name in _REFUSED_NAMES.items():
        if isinstance(node, kind):
            return name
    if isinstance(node, exp.Func):
        return f"function {node.sql_name().lower()}()"
    return f"{node.key.upper()} ({node.sql(dialect=_DIALECT)[:60]})"


def _check_node(node: exp.Expr, allowed: frozenset, anonymous: frozenset, query: bool) -> None:
    if isinstance(node, exp.Anonymous):
        if not isinstance(node.this, str) or node.name.lower() not in anonymous:
            hint = "" if query or node.name.lower() not in _AGGREGATE_NAMES else " in a row expression"
            refusal = SqlRefused if node.name.lower() in _UNSAFE_FUNCTIONS else SqlNotSpark
            raise refusal(f"{_describe(node)} is not allowed{hint}")
        return
    if type(node) in allowed:
        return
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
        return  # a struct field of a lambda's variable (x.sku); a function of a schema (db.f()) is not one
    if not query and type(node) in _QUERY_ONLY:
        if isinstance(node, (exp.Select, exp.Subquery, exp.Exists, exp.Table, exp.Union)):
            raise SqlRefused("a subquery is not allowed in a row expression")
        raise SqlRefused(f"{_describe(node)} is not allowed in a row expression (aggregates and "
                         "windows belong in a type: sql query)")
    raise (SqlRefused if type(node) in _REFUSED_NAMES else SqlNotSpark)(f"{_describe(node)} is not allowed")


def _check_expression_tree(tree: exp.Expr) -> None:
    if isinstance(tree, exp.Query):
        raise SqlRefused("a query is not allowed here: give one boolean row expression")
    anonymous = _SCALAR_NAMES
    for node in tree.walk():
        _check_node(node, _ROW_NODES, anonymous, query=False)
        _check_identifier_use(node)
        _check_cost(node)


def _check_query_tree(tree: exp.Expr, tables: set[str]) -> None:
    if not isinstance(tree, _QUERY_ROOTS):
        raise SqlRefused("a query must be one SELECT (or WITH ... SELECT)")
    anonymous = _SCALAR_NAMES | _AGGREGATE_NAMES
    for table in tree.find_all(exp.Table):  # first: a query that reads beyond its batch says so, whatever else it has
        _check_table(table, tables)
    for node in tree.walk():
        _check_node(node, _QUERY_ALLOWED, anonymous, query=True)
        _check_identifier_use(node)
        if isinstance(node, exp.With) and node.args.get("recursive"):
            raise SqlRefused("WITH RECURSIVE is not allowed")
        if isinstance(node, exp.Join):
            _check_join(node)
        _check_cost(node)
    references = _batch_references(tree, {})
    if references > MAX_BATCH_REFERENCES:
        raise SqlRefused(f"at most {MAX_BATCH_REFERENCES} references to the batch ({{object}}) in one query; "
                         f"found {references} (a CTE that reads it counts each time it is read)")


def _check_identifier_use(node: exp.Expr) -> None:
    """A column placeholder names a column; table placeholders name tables (or qualify columns)."""
    if isinstance(node, exp.Column) and node.name.startswith(_SENTINEL):
        if node.name[len(_SENTINEL):] not in COLUMN_PLACEHOLDERS:
            raise SqlRefused(f"{{{node.name[len(_SENTINEL):]}}} is a table, not a column")


def _check_table(table: exp.Table, tables: set[str]) -> None:
    if not isinstance(table.this, exp.Identifier):
        raise SqlRefused(f"{_describe(table.this)} is not allowed as a table (the only tables are "
                         "the gate's placeholders, such as {object})")
    if table.args.get("db") or table.args.get("catalog"):
        raise SqlRefused(f"table {table.sql(dialect=_DIALECT)} is not allowed: a query reads "
                         "{object} and the gate's references only (no paths, no other tables)")
    extra = sorted(key for key, value in table.args.items() if value and key not in ("this", "alias"))
    if extra:
        raise SqlRefused(f"table {extra[0]} options are not allowed")
    name = table.name
    if name.startswith(_SENTINEL):
        placeholder = name[len(_SENTINEL):]
        if placeholder not in tables:
            raise SqlRefused(f"{{{placeholder}}} is a column, not a table")
        return
    if not _cte_in_scope(table, name):
        raise SqlRefused(f"table {name!r} is not allowed: a query reads {{object}} and the tables "
                         "the gate's references list, through their placeholders")


def _cte_in_scope(table: exp.Table, name: str, fold_case: bool = False) -> bool:
    """Whether ``name`` is a CTE the table can see: one of a WITH around it, defined before the
    CTE the table is in (a CTE cannot see itself: Spark would read a real table of that name).
    ``fold_case``: compare as Spark does by default (the strict comparison refuses what it doubts)."""
    def same(cte: exp.CTE) -> bool:
        return cte.alias.lower() == name.lower() if fold_case else cte.alias == name

    child: exp.Expr = table
    node = table.parent
    while node is not None:
        if isinstance(node, exp.With):
            ctes = node.expressions
            position = next((i for i, cte in enumerate(ctes) if cte is child), len(ctes))
            if any(same(cte) for cte in ctes[:position]):
                return True
        elif isinstance(node, exp.Query) and node.args.get("with_") is not None and child is not node.args["with_"]:
            if any(same(cte) for cte in node.args["with_"].expressions):
                return True
        child, node = node, node.parent
    return False


# -- cost bounds (contract_gate_plan.cost_bounds) ---------------------------------------------------

_JOIN_RULE = "joins need an equality condition between two different columns"
_BATCH_TABLE = f"{_SENTINEL}object"
# The size argument of each string builder, and what a refusal calls it.
_BUILDERS: dict[type[exp.Func], tuple[str, str]] = {exp.Repeat: ("times", "count"), exp.Pad: ("expression", "length"), exp.Space: ("this", "length")}
_REGEX_FUNCTIONS = (exp.RegexpLike, exp.RegexpCount, exp.RegexpInstr, exp.RegexpReplace, exp.RegexpSubstr,
                    exp.RegexpExtract, exp.RegexpExtractAll, exp.RegexpSplit)  # the regex is ``expression``
_FUNCTION_NAMES: dict[type[exp.Func], str] = {exp.RegexpLike: "rlike", exp.RegexpSplit: "split"}


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Pad):
        return "lpad" if node.args.get("is_left") else "rpad"
    return _FUNCTION_NAMES.get(type(node)) or node.sql_name().lower()


def _check_cost(node: exp.Expr) -> None:
    """Refuse a string builder or a regular expression whose size the contract sets above a bound."""
    if isinstance(node, exp.Func) and type(node) in _BUILDERS:  # every builder is a function
        size = _built_size(node)
        if size > MAX_BUILT_LENGTH:
            raise SqlRefused(f"repeat() of a built string builds up to {size} characters (its count times what the "
                             f"builder inside it builds), above the bound {MAX_BUILT_LENGTH}")
    elif isinstance(node, _REGEX_FUNCTIONS):
        regex = node.args.get("expression")
        if not (isinstance(regex, exp.Literal) and regex.is_string):
            raise SqlRefused(f"the regular expression of {_function_name(node)}() must be one string literal, so that "
                             "its length and repetition counts can be bounded")
        problem = regex_problem(regex.this)
        if problem:
            raise SqlRefused(f"{_function_name(node)}(): {problem}")


def _built_size(node: exp.Func) -> int:
    """The characters a builder may build: its literal size, times (for repeat) the largest size of
    a builder in the string it repeats. A size that is no number literal is refused."""
    key, what = _BUILDERS[type(node)]
    argument = node.args.get(key)
    value = _number(argument)
    name = _function_name(node)
    if argument is None or value is None:
        raise SqlRefused(f"the {what} of {name}() must be a number literal (at most {MAX_BUILT_LENGTH}), so the "
                         "string it builds is bounded")
    if value > MAX_BUILT_LENGTH:
        raise SqlRefused(f"{name}() {what} {argument.sql(dialect=_DIALECT)[:40]} is above the bound {MAX_BUILT_LENGTH}")
    size = max(int(value), 0)
    if isinstance(node, exp.Repeat):
        inner = [_built_size(built) for built in node.this.find_all(*_BUILDERS)]
        size *= max(inner, default=1)
    return size


def _number(node: exp.Expr | None) -> Decimal | None:
    negative = False
    while isinstance(node, (exp.Paren, exp.Neg)):
        negative ^= isinstance(node, exp.Neg)
        node = node.this
    if isinstance(node, SuffixedNumber):
        node = node.this
    if not (isinstance(node, exp.Literal) and node.is_number):
        return None
    try:
        value = Decimal(str(node.this))
    except InvalidOperation:
        return None
    return -value if negative else value


def _check_join(join: exp.Join) -> None:
    """A join must pair rows by an equality of a column of the joined table with a column of
    another (in its ON, or for an inner join in the WHERE clause, which Spark moves into the
    join): anything else makes Spark pair every row with every row. A side that reads no table
    (``CROSS JOIN (SELECT 1 AS one)``) is a constant and pairs freely."""
    if (join.args.get("method") or "").upper() == "NATURAL":
        raise SqlRefused(f"{_JOIN_RULE}: NATURAL JOIN pairs rows on whatever columns the tables share; "
                         "write USING (key) or ON a.key = b.key")
    select = join.parent
    earlier = [select.args["from_"].this, *select.args["joins"][:join.index]] if isinstance(select, exp.Select) else []
    if join.args.get("using") or join.this.find(exp.Table) is None or not any(e.find(exp.Table) for e in earlier):
        return
    condition = join.args.get("on")
    inner = not join.args.get("side") and (join.args.get("kind") or "INNER").upper() in ("INNER", "CROSS")
    where = select.args.get("where") if inner and isinstance(select, exp.Select) else None
    conditions = [c.this if isinstance(c, exp.Where) else c for c in (condition, where) if c is not None]
    joined = join.this.alias_or_name.lower()
    if any(_pairs(equality, joined) for c in conditions for equality in _conjuncts(c)):
        return
    if condition is None:
        raise SqlRefused(f"{_JOIN_RULE} (one of each table, as a.key = b.key, in ON or the WHERE clause): a CROSS "
                         "JOIN or a comma between tables without one pairs every row with every row")
    shown = _SENTINEL_IDENTIFIER.sub(r"{\1}", _render(condition))[:80]
    raise SqlRefused(f"{_JOIN_RULE}, one of the joined table and one of another, each named with its table "
                     f"(ON a.key = b.other_key, or USING (key)); found ON {shown}")


def _conjuncts(condition: exp.Expr) -> Iterator[exp.Expr]:
    while isinstance(condition, exp.Paren):
        condition = condition.this
    if isinstance(condition, exp.And):
        yield from _conjuncts(condition.this)
        yield from _conjuncts(condition.expression)
    else:
        yield condition


def _pairs(condition: exp.Expr, joined: str) -> bool:
    """``condition`` is ``x = y`` (or ``<=>``) with x of one table and y of another, one of them the joined one."""
    if not isinstance(condition, (exp.EQ, exp.NullSafeEQ)):
        return False
    sides = [_only_table(condition.this), _only_table(condition.expression)]
    return None not in sides and sides[0] != sides[1] and joined in sides


def _only_table(side: exp.Expr) -> str | None:
    """The one table every column of ``side`` is qualified with (None: none, several, unqualified)."""
    if side.find(exp.Query) is not None:
        return None
    tables = {column.table.lower() for column in side.find_all(exp.Column)}
    return tables.pop() if len(tables) == 1 and "" not in tables else None


def _batch_references(node: exp.Expr, ctes: dict[str, int]) -> int:
    """How often ``node`` reads the batch: each ``{object}`` table, and each read of a CTE counts
    the reads in that CTE (``ctes``: the references of each CTE in scope)."""
    with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
    if with_ is not None:
        ctes = dict(ctes)
        for cte in with_.expressions:  # a CTE sees the ones before it
            ctes[cte.alias.lower()] = _batch_references(cte.this, ctes)
    total = 0
    for child in node.iter_expressions():
        if child is with_:
            continue
        if isinstance(child, exp.Table):
            total += 1 if child.name == _BATCH_TABLE else ctes.get(child.name.lower(), 0)
        else:
            total += _batch_references(child, ctes)
    return total


def _checked(text: str, check) -> str:
    """Parse, check, render; then require the rendering to parse, check and render to itself.
    Whatever else goes wrong in the parser is a refusal too (fail closed)."""
    try:
        rendered = _render(check(_parse(text)))
        if "${" in rendered:  # even inside a string: Spark substitutes before it parses
            raise SqlRefused("'${' is not allowed: Spark would replace ${...} with a variable "
                             "(${env:NAME} is an environment variable) before reading the SQL")
        if _render(check(_parse(rendered))) != rendered:
            raise SqlRefused("the SQL does not render to a stable text; write it more plainly")
    except SqlRefused:
        raise
    except RecursionError:
        raise SqlRefused("the SQL is nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - see the docstring
        raise SqlRefused(f"the SQL cannot be checked ({type(exc).__name__})") from None
    return rendered


def _as_expression(tree: exp.Expr) -> exp.Expr:
    _check_expression_tree(tree)
    return tree


def check_expression(text: str) -> str:
    """Check one boolean row expression; return the text to run (the rendered tree)."""
    return _checked(_contract_text(text), _as_expression)


def _checked_query(text: str, placeholders: Iterable[str], synonyms: Mapping[str, str] | None = None,
                   batch_names: Iterable[str | tuple[str, ...]] = ()) -> str:
    """The rendered query, its placeholders as reserved back-quoted identifiers."""
    names = set(placeholders)
    tables = names - set(COLUMN_PLACEHOLDERS)
    batch = {tuple(part.lower() for part in ((name,) if isinstance(name, str) else name))
             for name in batch_names} if "object" in tables else set()

    def as_query(tree: exp.Expr) -> exp.Expr:
        if batch:
            _bind_batch_names(tree, batch)
        _drop_dual(tree)
        _check_query_tree(tree, tables)
        return tree

    body = _contract_text(text).rstrip(";").rstrip()
    return _checked(_substitute_placeholders(body, names, synonyms), as_query)


def _bind_batch_names(tree: exp.Expr, names: set[tuple[str, ...]]) -> None:
    """Make each table name in ``names`` (the object's own names, as parts in lower case) the
    batch, as ``{object}``: a bare name that is no CTE in scope (a CTE named like the object is
    that CTE), or a qualified one listed whole (``orders_v1.orders`` where the server's schema is
    ``orders_v1``; ``other_schema.orders`` is another table, refused). It keeps its name as its
    alias, so the columns it qualifies still resolve."""
    for table in list(tree.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier):
            continue
        qualifiers = [table.args[key] for key in ("catalog", "db") if table.args.get(key)]
        if not all(isinstance(part, exp.Identifier) for part in qualifiers):
            continue
        name = table.name
        parts = tuple(part.name.lower() for part in (*qualifiers, table.this))
        if parts not in names or (not qualifiers and _cte_in_scope(table, name, fold_case=True)):
            continue
        table.set("catalog", None)
        table.set("db", None)
        table.set("this", exp.to_identifier(f"{_SENTINEL}object", quoted=True))
        if not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name, quoted=True)))


def _drop_dual(tree: exp.Expr) -> None:
    """``SELECT ... FROM dual`` (Oracle's one-row table) is a SELECT without FROM, Spark's one row:
    its FROM goes, so nothing is read. Only a bare ``dual`` alone in its FROM (no join, alias,
    sample or version) that is no CTE in scope; Spark has no ``dual``, and would read a table of
    that name."""
    for select in list(tree.find_all(exp.Select)):
        source = select.args.get("from_")
        table = source.this if source is not None else None
        if (isinstance(table, exp.Table) and isinstance(table.this, exp.Identifier)
                and table.name.lower() == "dual" and [key for key, value in table.args.items() if value] == ["this"]
                and not select.args.get("joins") and not select.args.get("laterals")
                and not _cte_in_scope(table, table.name, fold_case=True)):
            select.set("from_", None)


_SENTINEL_IDENTIFIER = re.compile(f"`{_SENTINEL}([A-Za-z0-9_]+)`")


def check_query(text: str, placeholders: Iterable[str] = TABLE_PLACEHOLDERS,
                synonyms: Mapping[str, str] | None = None, batch_names: Iterable[str | tuple[str, ...]] = ()) -> str:
    """Check one read-only query; return the text to run, with its ``{placeholders}`` kept.

    ``placeholders``: the names the query may use: ``object`` and the reference aliases as
    tables, ``property`` as a column. ``synonyms``: other placeholder names that mean one of them
    (``{model}``: ``object``), unless a placeholder has that name. ``batch_names``: table names
    that mean the batch (the object's own name; a tuple of parts for a qualified one). The text returned uses the placeholders
    only, so a plan has one form of each."""
    return _SENTINEL_IDENTIFIER.sub(r"{\1}", _checked_query(text, placeholders, synonyms, batch_names))


def bind_query(text: str, names: Mapping[str, str]) -> str:
    """The checked query with each placeholder replaced by the back-quoted identifier that
    ``names`` gives it (a view for a table, a column for ``{property}``)."""
    return _SENTINEL_IDENTIFIER.sub(lambda m: quote_identifier(names[m.group(1)]),
                                    _checked_query(text, names))


def check_canonical(text: str, kind: str, placeholders: Iterable[str] = TABLE_PLACEHOLDERS) -> None:
    """Refuse ``text`` unless it is allowed and is exactly its own rendering (the Spark side's
    check of a plan). ``kind``: ``expression`` or ``query``."""
    rendered = check_query(text, placeholders) if kind == "query" else check_expression(text)
    if rendered != text:
        raise SqlRefused("the SQL is not in the form the compiler renders it (was the plan edited?)")


@functools.lru_cache(maxsize=4096)  # an expression is checked, mined for columns and for determinism
def _expression_tree(text: str) -> exp.Expr:
    return _as_expression(_parse(_contract_text(text)))


def expression_tree(text: str) -> exp.Expr:
    """The parsed tree of an expression (a copy: the parse is cached), for reading its shape
    (``contract_gate_plan.predicate_scope``); a contract's text is checked before it is compared."""
    return _expression_tree(text).copy()


def render_tree(tree: exp.Expr) -> str:
    """A tree (or a part of one) as the gate renders SQL."""
    return _render(tree)


def has_lambda(expression: str) -> bool:
    """Whether the expression has a lambda (``forall(a, x -> ...)``): Delta's CHECK constraint
    reads its expression token by token and cannot read ``->``."""
    return _expression_tree(expression).find(exp.Lambda) is not None


def is_deterministic(expression: str) -> bool:
    """False when the expression calls a function whose result changes between evaluations."""
    tree = _expression_tree(expression)
    return not any(isinstance(node, _NONDETERMINISTIC)
                   or (isinstance(node, exp.Anonymous) and node.name.lower() in _NONDETERMINISTIC_NAMES)
                   for node in tree.walk())


def column_names(expression: str) -> set[str]:
    """Every name the expression uses as a column or a part of one (``a.b`` gives a and b)."""
    tree = _expression_tree(expression)
    return {part.name for column in tree.find_all(exp.Column) for part in column.parts}


def query_columns(text: str, placeholders: Iterable[str]) -> set[str]:
    """The names a checked query may read columns by, lower case: each part of each column
    reference (``{property}`` for that placeholder), and ``*`` when it selects a star anywhere
    but in ``count(*)`` (which reads every column, whatever they are renamed to)."""
    tree = _parse(_checked_query(text, placeholders))
    names = set()
    for column in tree.find_all(exp.Column):
        for part in column.parts:
            name = part.name
            names.add("{" + name[len(_SENTINEL):] + "}" if name.startswith(_SENTINEL) else name.lower())
    if any(not isinstance(star.parent, exp.Count) for star in tree.find_all(exp.Star)):
        names.add("*")
    return names


def query_counts(text: str, placeholders: Iterable[str]) -> bool:
    """Whether a checked query's first result column is a plain ``count(...)`` of one SELECT:
    a number of rows, never a value of one."""
    tree = _parse(_checked_query(text, placeholders))
    first = tree.expressions[0].unalias() if isinstance(tree, exp.Select) and tree.expressions else None
    return isinstance(first, exp.Count)
