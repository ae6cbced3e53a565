"""Column types as contracts write them: a ``physicalType`` in the server's own dialect, or only a
``logicalType``, mapped to the exact Spark type the gate checks (docs/contracts.md#types).

Which dialect reads a ``physicalType`` depends on the type of the server chosen for the
environment. Servers whose data Spark reads as it is (no server, ``local``, ``databricks``, file
and object stores, Hive/Glue catalogs, and any type without a table here) read it as a Spark
type first, exactly as ``contract_gate_plan.spark_types`` parses it, then through the names no
dialect reads differently (:data:`COMMON`). A database or stream server (postgres, snowflake,
...) reads it through its own table first: ``timestamp`` in Postgres or Snowflake holds a wall
time without a zone (``timestamp_ntz``), where Spark's ``timestamp`` is an instant. A name its
table lacks is then read as a Spark type, then through :data:`COMMON`.

A mapping may carry what the Spark type cannot say: the length of ``varchar(n)`` (a
``max_length`` rule), that text must parse as JSON (``json``, ``jsonb``, Snowflake's
``VARIANT``), or that it is a time of day (Delta stores no TIME type, so a time is text
``HH:MM[:SS[.fffffffff]]`` checked by a pattern rule).

Standard library only (and the Spark type grammar): ``lint`` and ``plan`` import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contract_gate_plan.spark_types import TypeSyntaxError, spark_type

TYPES_DOC = "docs/contracts.md#types"
# A time of day as text: HH:MM, HH:MM:SS or HH:MM:SS.fraction (up to nanoseconds).
TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,9})?)?$"
MAX_PRECISION = 38  # Spark's decimal


_SPARK_CHARACTERS = re.compile(r"\s*(?:var)?char\s*\(\s*(\d+)\s*\)\s*", re.IGNORECASE)


class UnmappedType(ValueError):
    """A type with no Spark column type; the message says why."""


class UnknownTypeName(UnmappedType):
    """A type name no table knows (``objectId``, ``GEOGRAPHY`` on Spark), as opposed to a known
    one written wrongly: a property's logicalType may stand in for it."""


@dataclass(frozen=True)
class Mapped:
    """A Spark type (as ``spark_type`` writes it) and the rules that come with the contract's type."""

    type: str
    max_length: int | None = None
    json: bool = False
    time: bool = False


# -- one entry of a table: how a name (with its arguments) becomes a Spark type ----------------------

class _Spec:
    """How a type name becomes a Spark type; ``described`` is its cell in the docs' table."""

    described = ""

    def map(self, args: list) -> Mapped:
        raise NotImplementedError


class _Plain(_Spec):
    """Always one Spark type; numeric arguments (a precision, a display width) only document."""

    def __init__(self, spark: str):
        self.spark = spark
        self.described = spark

    def map(self, args):
        _numbers(args, 2)
        return Mapped(self.spark)


class _Text(_Spec):
    """A string; a length argument becomes a ``maxLength`` rule (``max`` or none: no rule)."""

    described = "string (+ maxLength n)"

    def map(self, args):
        length = _numbers(args, 1, allow_max=True)
        return Mapped("string", max_length=length[0] if length else None)


class _Decimal(_Spec):
    """``decimal(p,s)``; without arguments, the dialect's default precision and scale."""

    def __init__(self, precision: int, scale: int):
        self.default = (precision, scale)
        self.described = f"decimal(p,s); bare: decimal({precision},{scale})"

    def map(self, args):
        numbers = _numbers(args, 2, allow_max=True)
        precision, scale = self.default if not numbers else (numbers[0], numbers[1] if len(numbers) > 1 else 0)
        if precision is None:  # NUMBER(*, s) in Oracle
            precision = MAX_PRECISION
        if precision > MAX_PRECISION:
            raise UnmappedType(f"precision {precision} is above Spark's {MAX_PRECISION} digits")
        if not 1 <= precision or not 0 <= (scale or 0) <= precision:
            raise UnmappedType(f"decimal({precision},{scale}) is out of range (precision 1-38, scale 0-precision)")
        return Mapped(f"decimal({precision},{scale or 0})")


class _Float(_Spec):
    """``float(p)``: a float up to 24 bits of precision, else a double (SQL's FLOAT(p));
    MySQL's ``float(m,d)`` (digits, not bits) stays a float."""

    def __init__(self, bare: str):
        self.bare = bare
        self.described = f"float(p<=24): float, float(p>24): double; bare: {bare}"

    def map(self, args):
        numbers = _numbers(args, 2)
        if not numbers:
            return Mapped(self.bare)
        return Mapped("float" if len(numbers) == 2 or numbers[0] <= 24 else "double")


class _Json(_Spec):
    described = "string + a JSON rule"

    def map(self, args):
        _numbers(args, 0)
        return Mapped("string", json=True)


class _Time(_Spec):
    described = "string + a time-of-day pattern rule"

    def map(self, args):
        _numbers(args, 1)
        return Mapped("string", time=True)


class _OneIs(_Spec):
    """``(1)`` means a boolean (MySQL's ``tinyint(1)``, ``bit(1)``), other widths ``other``."""

    def __init__(self, other: str, bare: str):
        self.other, self.bare = other, bare
        self.described = f"({1}): boolean, else {other}; bare: {bare}"

    def map(self, args):
        numbers = _numbers(args, 1)
        if not numbers:
            return Mapped(self.bare)
        return Mapped("boolean" if numbers[0] == 1 else self.other)


class _Refused(_Spec):
    def __init__(self, reason: str):
        self.reason = reason
        self.described = f"refused: {reason}"

    def map(self, args):
        raise UnmappedType(self.reason)


def _numbers(args: list[int | str], most: int, allow_max: bool = False) -> list[int | None]:
    """The arguments as whole numbers (``max`` and ``*`` as None when allowed); at most ``most``."""
    if len(args) > most:
        raise UnmappedType(f"takes at most {most} argument(s)")
    result: list[int | None] = []
    for arg in args:
        if isinstance(arg, int):
            result.append(arg)
        elif allow_max and arg in ("max", "*"):
            result.append(None)
        else:
            raise UnmappedType(f"argument {arg!r} is not a number")
    return result


def _table(**entries) -> dict[str, _Spec]:
    """Names (``_`` for a space) -> specs; a string is a plain Spark type."""
    return {name.replace("_", " ").lower(): spec if isinstance(spec, _Spec) else _Plain(spec)
            for name, spec in entries.items()}


def _with(base: dict, **entries) -> dict[str, _Spec]:
    return {**base, **_table(**entries)}


_TEXT, _JSON, _TIME = _Text(), _Json(), _Time()
# Delta stores no interval or range type: the batch carries them as text (BigQuery's and Postgres'
# exports write '1 day 02:00:00' and '[start, end)'), and the gate checks that text.
_NO_INTERVAL = _Plain("string")
_INTEGERS = _table(smallint="smallint", int2="smallint", integer="int", int="int", int4="int",
                   bigint="bigint", int8="bigint")

# -- the dialect tables (docs/contracts.md#types lists every row) -------------------------------------

POSTGRES = {
    **_INTEGERS,
    **_table(smallserial="smallint", serial2="smallint", serial="int", serial4="int", bigserial="bigint",
             serial8="bigint", real="float", float4="float", double_precision="double", float8="double",
             float=_Float("double"), numeric=_Decimal(38, 18), decimal=_Decimal(38, 18), money="decimal(19,2)",
             text=_TEXT, varchar=_TEXT, character_varying=_TEXT, char=_TEXT, character=_TEXT, bpchar=_TEXT,
             citext=_TEXT, name=_TEXT, uuid="string", json=_JSON, jsonb=_JSON, xml="string", inet="string",
             cidr="string", macaddr="string", bytea="binary", boolean="boolean", bool="boolean", date="date",
             timestamp="timestamp_ntz", timestamp_without_time_zone="timestamp_ntz", timestamptz="timestamp",
             timestamp_with_time_zone="timestamp", time=_TIME, time_without_time_zone=_TIME, timetz=_TIME,
             time_with_time_zone=_TIME, interval=_NO_INTERVAL),
}
SNOWFLAKE = _table(
    # INT, INTEGER, BIGINT... are synonyms of NUMBER(38,0) in Snowflake, and unload as such
    number=_Decimal(38, 0), decimal=_Decimal(38, 0), numeric=_Decimal(38, 0), int="decimal(38,0)",
    integer="decimal(38,0)", bigint="decimal(38,0)", smallint="decimal(38,0)", tinyint="decimal(38,0)",
    byteint="decimal(38,0)", float="double", float4="double", float8="double", double="double",
    double_precision="double", real="double", varchar=_TEXT, char=_TEXT, character=_TEXT, nchar=_TEXT,
    nvarchar=_TEXT, nvarchar2=_TEXT, char_varying=_TEXT, nchar_varying=_TEXT, string=_TEXT, text=_TEXT,
    binary="binary", varbinary="binary", boolean="boolean", date="date", time=_TIME, datetime="timestamp_ntz",
    timestamp="timestamp_ntz", timestamp_ntz="timestamp_ntz", timestamp_ltz="timestamp", timestamp_tz="timestamp",
    variant=_JSON, object=_JSON, array=_JSON, geography="string", geometry="string",
)
BIGQUERY = _table(
    # every BigQuery integer type is INT64
    int64="bigint", int="bigint", integer="bigint", smallint="bigint", bigint="bigint", tinyint="bigint",
    byteint="bigint", float64="double", float="double", numeric=_Decimal(38, 9), decimal=_Decimal(38, 9),
    bignumeric=_Decimal(38, 9), bigdecimal=_Decimal(38, 9), string=_TEXT, bytes="binary", bool="boolean",
    boolean="boolean", date="date", datetime="timestamp_ntz", timestamp="timestamp", time=_TIME, json=_JSON,
    geography="string", interval=_NO_INTERVAL,
    range=_Plain("string"),
)
SQLSERVER = _table(
    bit="boolean", tinyint="smallint", smallint="smallint", int="int", integer="int", bigint="bigint",
    decimal=_Decimal(18, 0), numeric=_Decimal(18, 0), money="decimal(19,4)", smallmoney="decimal(10,4)",
    float=_Float("double"), real="float", date="date", time=_TIME, datetime="timestamp_ntz",
    datetime2="timestamp_ntz", smalldatetime="timestamp_ntz", datetimeoffset="timestamp", char=_TEXT,
    varchar=_TEXT, nchar=_TEXT, nvarchar=_TEXT, text=_TEXT, ntext=_TEXT, uniqueidentifier="string",
    xml="string", binary="binary", varbinary="binary", image="binary",
)
MYSQL = _table(
    tinyint=_OneIs("tinyint", "tinyint"), bool="boolean", boolean="boolean", bit=_OneIs("bigint", "boolean"),
    smallint="smallint", mediumint="int", int="int", integer="int", bigint="bigint",
    tinyint_unsigned="smallint", smallint_unsigned="int", mediumint_unsigned="int", int_unsigned="bigint",
    integer_unsigned="bigint", bigint_unsigned="decimal(20,0)", float=_Float("float"), double="double",
    double_precision="double", real="double", decimal=_Decimal(10, 0), numeric=_Decimal(10, 0),
    dec=_Decimal(10, 0), char=_TEXT, varchar=_TEXT, tinytext=_TEXT, text=_TEXT, mediumtext=_TEXT,
    longtext=_TEXT, enum="string", set="string", json=_JSON, binary="binary", varbinary="binary",
    tinyblob="binary", blob="binary", mediumblob="binary", longblob="binary", date="date",
    datetime="timestamp_ntz", timestamp="timestamp", time=_TIME, year="int",
)
ORACLE = _table(
    # NUMBER without a precision: decimal(38,10), as Spark's own Oracle dialect reads it
    number=_Decimal(38, 10), numeric=_Decimal(38, 10), decimal=_Decimal(38, 10), integer="decimal(38,0)",
    int="decimal(38,0)", smallint="decimal(38,0)", float=_Plain("double"), binary_float="float",
    binary_double="double", varchar2=_TEXT, nvarchar2=_TEXT, varchar=_TEXT, char=_TEXT, nchar=_TEXT,
    clob="string", nclob="string", long="string", raw="binary", long_raw="binary", blob="binary",
    boolean="boolean", json=_JSON, rowid="string", urowid="string",
    # Oracle's DATE holds a time of day too
    date="timestamp_ntz", timestamp="timestamp_ntz", timestamp_with_time_zone="timestamp",
    timestamp_with_local_time_zone="timestamp", interval=_NO_INTERVAL,
)
DUCKDB = {
    **_INTEGERS,
    **_table(tinyint="tinyint", int1="tinyint", short="smallint", signed="int", long="bigint",
             hugeint="decimal(38,0)", utinyint="smallint", usmallint="int", uinteger="bigint",
             ubigint="decimal(20,0)", uhugeint="decimal(38,0)", float="float", float4="float", real="float",
             double="double", float8="double", decimal=_Decimal(18, 3), numeric=_Decimal(18, 3), varchar=_TEXT,
             char=_TEXT, bpchar=_TEXT, text=_TEXT, string=_TEXT, uuid="string", json=_JSON, blob="binary",
             bytea="binary", binary="binary", varbinary="binary", boolean="boolean", bool="boolean",
             logical="boolean", date="date", time=_TIME, timestamp="timestamp_ntz", datetime="timestamp_ntz",
             timestamp_s="timestamp_ntz", timestamp_ms="timestamp_ntz", timestamp_ns="timestamp_ntz",
             timestamptz="timestamp", timestamp_with_time_zone="timestamp", interval=_NO_INTERVAL),
}
REDSHIFT = {
    **_INTEGERS,
    **_table(decimal=_Decimal(18, 0), numeric=_Decimal(18, 0), real="float", float4="float",
             double_precision="double", float8="double", float="double", boolean="boolean", bool="boolean",
             char=_TEXT, character=_TEXT, nchar=_TEXT, bpchar=_TEXT, varchar=_TEXT, character_varying=_TEXT,
             nvarchar=_TEXT, text=_TEXT, date="date", timestamp="timestamp_ntz",
             timestamp_without_time_zone="timestamp_ntz", timestamptz="timestamp",
             timestamp_with_time_zone="timestamp", time=_TIME, time_without_time_zone=_TIME, timetz=_TIME,
             time_with_time_zone=_TIME, super=_JSON, varbyte="binary", varbinary="binary",
             binary_varying="binary", geometry="string", geography="string", hllsketch="string"),
}
TRINO = _table(
    boolean="boolean", tinyint="tinyint", smallint="smallint", integer="int", int="int", bigint="bigint",
    real="float", double="double", decimal=_Decimal(38, 0), varchar=_TEXT, char=_TEXT, varbinary="binary",
    json=_JSON, date="date", time=_TIME, time_with_time_zone=_TIME, timestamp="timestamp_ntz",
    timestamp_with_time_zone="timestamp", uuid="string", ipaddress="string", string=_TEXT,
    interval_year_to_month=_NO_INTERVAL, interval_day_to_second=_NO_INTERVAL,
)
# Kafka: Avro primitive and logical types, Protobuf scalar types, JSON Schema types.
KAFKA = _table(
    null=_Refused("a column that is always null has no type to check"), boolean="boolean", int="int",
    long="bigint", float="float", double="double", bytes="binary", fixed="binary", string=_TEXT,
    enum="string", uuid="string", date="date", time_millis="int", time_micros="bigint",
    timestamp_millis="timestamp", timestamp_micros="timestamp", timestamp_nanos="timestamp",
    local_timestamp_millis="timestamp_ntz", local_timestamp_micros="timestamp_ntz",
    local_timestamp_nanos="timestamp_ntz", decimal=_Decimal(38, 18), int32="int", sint32="int",
    sfixed32="int", int64="bigint", sint64="bigint", sfixed64="bigint", uint32="bigint", fixed32="bigint",
    uint64="decimal(20,0)", fixed64="decimal(20,0)", bool="boolean", integer="bigint", number="double",
)
# Protobuf's FieldDescriptorProto.Type numbers, as protobuf importers write them ('9' is a string).
_PROTOBUF_CODES = {"1": "double", "2": "float", "3": "bigint", "4": "decimal(20,0)", "5": "int",
                   "6": "decimal(20,0)", "7": "bigint", "8": "boolean", "9": "string", "12": "binary",
                   "13": "bigint", "14": "string", "15": "int", "16": "bigint", "17": "int", "18": "bigint"}
# Names that mean one thing in every dialect that has them, read after the Spark grammar.
COMMON = {
    **_table(text=_TEXT, character_varying=_TEXT, nvarchar=_TEXT, nvarchar2=_TEXT, varchar2=_TEXT,
             nchar=_TEXT, bpchar=_TEXT, citext=_TEXT, clob="string", str="string", uuid="string",
             uniqueidentifier="string", json=_JSON, jsonb=_JSON, int2="smallint", int4="int", int8="bigint",
             int64="bigint", int32="int", int16="smallint", mediumint="int", hugeint="decimal(38,0)",
             float4="float", float8="double", float64="double", float32="float", double_precision="double",
             number=_Decimal(38, 10), numeric=_Decimal(10, 0), bytes="binary", bytea="binary", blob="binary",
             varbinary="binary", bool="boolean", time=_TIME, datetime="timestamp_ntz", datetime2="timestamp_ntz",
             datetimeoffset="timestamp", timestamptz="timestamp", timestamp_with_time_zone="timestamp",
             timestamp_without_time_zone="timestamp_ntz", time_without_time_zone=_TIME,
             time_with_time_zone=_TIME, interval=_NO_INTERVAL, tinyint_unsigned="smallint",
             smallint_unsigned="int", mediumint_unsigned="int", int_unsigned="bigint", integer_unsigned="bigint",
             bigint_unsigned="decimal(20,0)",
             # a container word without nested items or map types: strings inside, as the gate reads
             # JSON or CSV text; give items/map to check the element type
             list="array<string>", set="array<string>", array="array<string>", map="map<string,string>",
             enum="string"),
    **{code: _Plain(spark) for code, spark in _PROTOBUF_CODES.items()},
}

# Spark's own names, for the Spark grammar's neighbours: timestamp(6), int(11), integer[].
SPARK = {
    **{name.replace("_", " "): _Plain(spark_type(name)) for name in (
        "string", "boolean", "bool", "tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long",
        "float", "real", "double", "date", "timestamp", "timestamp_ltz", "timestamp_ntz", "binary")},
    **_table(varchar=_TEXT, char=_TEXT, decimal=_Decimal(10, 0), dec=_Decimal(10, 0), numeric=_Decimal(10, 0)),
}
DIALECTS: dict[str, dict[str, _Spec]] = {
    "postgres": POSTGRES, "snowflake": SNOWFLAKE, "bigquery": BIGQUERY, "sqlserver": SQLSERVER,
    "mysql": MYSQL, "oracle": ORACLE, "duckdb": DUCKDB, "redshift": REDSHIFT, "trino": TRINO, "kafka": KAFKA,
}
# Other names ODCS tools give these server types.
SERVER_ALIASES = {"postgresql": "postgres", "mariadb": "mysql", "mssql": "sqlserver", "synapse": "sqlserver",
                  "motherduck": "duckdb", "presto": "trino", "athena": "trino", "avro": "kafka",
                  "pubsub": "kafka", "kinesis": "kafka"}
# Container words: with nested properties or items, those decide the type (BigQuery's RANGE, text
# without them, is a pair of bounds that importers spell out as items).
CONTAINERS = frozenset({"object", "struct", "record", "array", "list", "map", "message", "repeated message",
                        "row", "tuple", "group", "repeated", "nested", "variant", "super", "range"})


def dialect_of(server_type: str | None) -> str | None:
    """The dialect that reads a server's types first, or None for the Spark dialect."""
    if not server_type:
        return None
    key = server_type.strip().lower()
    key = SERVER_ALIASES.get(key, key)
    return key if key in DIALECTS else None


def map_physical(physical_type, server_type: str | None) -> Mapped:
    """The Spark type of ``physical_type`` on a server of ``server_type``; raise
    :class:`UnmappedType` saying why there is none."""
    if not isinstance(physical_type, str) or not physical_type.strip():
        raise UnmappedType("physicalType must be a non-empty string")
    dialect = dialect_of(server_type)
    if dialect is not None:
        return _Reader(physical_type, [DIALECTS[dialect], COMMON, SPARK]).read()
    try:
        spark = spark_type(physical_type)
    except TypeSyntaxError:
        return _Reader(physical_type, [SPARK, COMMON]).read()
    length = _SPARK_CHARACTERS.fullmatch(physical_type)
    return Mapped(spark, max_length=int(length.group(1)) if length else None)


def is_container(physical_type) -> bool:
    """Whether ``physical_type`` only says "an object" or "a list", leaving the type to nested properties."""
    return isinstance(physical_type, str) and " ".join(physical_type.lower().split()) in CONTAINERS


# -- reading a type text ---------------------------------------------------------------------

_TOKEN = re.compile(r"\s*([A-Za-z_$][A-Za-z0-9_$-]*|\d+|`(?:[^`]|``)*`|\"(?:[^\"]|\"\")*\"|[<>(),:\[\]*])")
_NESTED_OPEN = {"array": ("<", "("), "list": ("<",), "struct": ("<", "("), "row": ("(",), "record": ("<",),
                "map": ("<", "("), "range": ("<",)}
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


class _Reader:
    """A recursive reader of type texts in every dialect's nesting syntax: ``ARRAY<T>``,
    ``ARRAY(T)``, ``T[]``, ``STRUCT<a T, b:T>``, ``STRUCT(a T)``, ``ROW(a T)``, ``MAP<K,V>``."""

    def __init__(self, text: str, tables: list[dict[str, _Spec]]):
        self.text = text
        self.tables = tables
        self.tokens = self._tokenize(text)

    def _tokenize(self, text: str) -> list[str]:
        tokens, pos, text = [], 0, text.strip()
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if not match:
                raise UnmappedType(f"cannot read {text!r}")
            tokens.append(match.group(1))
            pos = match.end()
        return tokens

    def read(self) -> Mapped:
        mapped = self.type()
        if self.tokens:
            raise UnmappedType(f"unexpected {' '.join(self.tokens)!r}")
        return mapped

    def peek(self) -> str | None:
        return self.tokens[0] if self.tokens else None

    def take(self, expected: str | None = None) -> str:
        if not self.tokens or (expected is not None and self.tokens[0] != expected):
            raise UnmappedType(f"expected {expected!r}" if expected else "the type ends too early")
        return self.tokens.pop(0)

    def type(self) -> Mapped:
        head = (self.peek() or "").lower()
        opener = self.tokens[1] if len(self.tokens) > 1 else None
        if head in _NESTED_OPEN and opener in _NESTED_OPEN[head]:
            mapped = self.nested(head)
        else:
            mapped = self.atomic()
        while self.peek() == "[":  # Postgres and DuckDB arrays: text[]
            self.take("[")
            while self.peek() not in ("]", None):
                self.take()  # a fixed size: int[3]
            self.take("]")
            mapped = Mapped(f"array<{mapped.type}>")
        return mapped

    def nested(self, head: str) -> Mapped:
        self.take()
        opener = self.take()
        closer = ">" if opener == "<" else ")"
        if head in ("array", "list"):
            element = self.type().type
            self.take(closer)
            return Mapped(f"array<{element}>")
        if head == "range":  # BigQuery's RANGE<T>: its text, '[start, end)', as exports write it
            self.type()
            self.take(closer)
            return Mapped("string")
        if head == "map":
            key = self.type().type
            self.take(",")
            value = self.type().type
            self.take(closer)
            return Mapped(f"map<{key},{value}>")
        fields = []
        while self.peek() not in (closer, None):
            name = self.take()
            if name[0] in "`\"":
                name = name[1:-1]
            if self.peek() == ":":
                self.take(":")
            field_type = self.type().type
            while self.peek() not in (",", closer, None):  # NOT NULL, OPTIONS(...) of a field only document
                self.skip_word_or_group()
            fields.append(f"{name}:{field_type}")
            if self.peek() == ",":
                self.take(",")
        self.take(closer)
        try:
            return Mapped(spark_type(f"struct<{','.join(fields)}>"))
        except TypeSyntaxError as exc:
            raise UnmappedType(str(exc)) from None

    def skip_word_or_group(self) -> None:
        if self.take() == "(":
            depth = 1
            while depth:
                token = self.take()
                depth += {"(": 1, ")": -1}.get(token, 0)

    def atomic(self) -> Mapped:
        words: list[str] = []
        args: list[int | str] = []
        while (token := self.peek()) is not None and _WORD.fullmatch(token):
            words.append(self.take().lower())
        if self.peek() == "(" and words:
            self.take("(")
            args = self.arguments()
            while (token := self.peek()) is not None and _WORD.fullmatch(token):
                words.append(self.take().lower())  # int(11) unsigned, timestamp(6) with time zone
        if not words:
            if (token := self.peek()) is not None and token.isdigit():
                words.append(self.take())  # a Protobuf type number
            else:
                raise UnmappedType(f"cannot read {self.text!r}")
        # time-millis (Avro), timestamp_ntz and "timestamp ntz" are one name; zerofill only displays
        name = re.sub(r" zerofill$", "", " ".join(words).replace("-", " ").replace("_", " "))
        for table in self.tables:
            if name in table:
                return table[name].map(args)
        raise UnknownTypeName(f"unknown type {' '.join(words)!r}")

    def arguments(self) -> list[int | str]:
        args: list[int | str] = []
        current: list[str] = []
        while True:
            token = self.take()
            if token in (",", ")"):
                if current:
                    # Oracle: VARCHAR2(20 BYTE), NUMBER(*,2)
                    first = current[0]
                    args.append(int(first) if first.isdigit() else first.lower())
                current = []
                if token == ")":
                    return args
            else:
                current.append(token)


# -- logical types -------------------------------------------------------------------------------

_INTEGER_FORMATS = {"i8": "tinyint", "i16": "smallint", "i32": "int", "i64": "bigint", "i128": "decimal(38,0)",
                    "u8": "smallint", "u16": "int", "u32": "bigint", "u64": "decimal(20,0)",
                    "u128": "decimal(38,0)"}
_NUMBER_FORMATS = {"f32": "float", "f64": "double"}
_VECTOR_ELEMENTS = {"float32": "float", "float16": "float", "bfloat16": "float", "float64": "double",
                    "int8": "tinyint", "uint8": "smallint"}


def map_logical(logical_type, options: dict | None) -> Mapped:
    """The Spark type of a property with only a ``logicalType`` (an ``object``/``array``/``map``
    with nested properties takes its type from them instead)."""
    options = options or {}
    fmt = options.get("format")
    if logical_type == "string":
        return Mapped("string")
    if logical_type == "integer":
        # ODCS's default format is i32, but integers without a width are 64-bit in most sources
        # (JSON, Avro long, Parquet from pandas); give format: i32 for an int column
        if fmt is None:
            return Mapped("bigint")
        if fmt not in _INTEGER_FORMATS:
            raise UnmappedType(f"integer format {fmt!r} is not one of {', '.join(_INTEGER_FORMATS)}")
        return Mapped(_INTEGER_FORMATS[fmt])
    if logical_type == "number":
        if fmt is None:
            return Mapped("double")
        if fmt not in _NUMBER_FORMATS:
            raise UnmappedType(f"number format {fmt!r} is not one of {', '.join(_NUMBER_FORMATS)}")
        return Mapped(_NUMBER_FORMATS[fmt])
    if logical_type == "boolean":
        return Mapped("boolean")
    if logical_type == "date":
        return Mapped("date")
    if logical_type == "timestamp":
        return Mapped("timestamp_ntz" if options.get("timezone") is False else "timestamp")
    if logical_type == "time":
        return Mapped("string", time=True)
    if logical_type == "vector":
        element = options.get("elementType", "float32")
        if element not in _VECTOR_ELEMENTS:
            raise UnmappedType(f"vector elementType {element!r} has no Spark type; give a physicalType")
        return Mapped(f"array<{_VECTOR_ELEMENTS[element]}>")
    if logical_type == "array":  # no items: elements read as text (docs/contracts.md#types)
        return Mapped("array<string>")
    if logical_type == "map":
        return Mapped("map<string,string>")
    if logical_type == "object":  # no properties: keys and values as text, like a bare map (docs/contracts.md#types)
        return Mapped("map<string,string>")
    raise UnmappedType(f"unknown logicalType {logical_type!r}")
