"""Valid landing files for a compiled plan's columns: deterministic rows, written with pyarrow.

``write_landing(path, plan["columns"], rows=10)`` writes rows whose every value fits its column's
Spark type (``name``, ``type``, ``nullable`` as in a plan) as Parquet or JSON lines. Values are
never NULL, row ``i`` gives each string and integral column a value unique to ``i`` (so key columns
hold no duplicates), and ``values`` pins a column to a cycle of given values (enums, patterns).
``start`` numbers the rows from there, so a later batch holds keys no earlier one had.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import random
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contract_gate_plan.spark_types import nested_parts, struct_field

_ATOMIC = {"string": pa.string(), "boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(),
           "int": pa.int32(), "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(),
           "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us"),
           "binary": pa.binary()}
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")
_EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def arrow_type(spark_type: str) -> pa.DataType:
    """The Arrow type Spark reads back as ``spark_type`` (a plan's normalised type string)."""
    if spark_type in _ATOMIC:
        return _ATOMIC[spark_type]
    if match := _DECIMAL.fullmatch(spark_type):
        return pa.decimal128(int(match.group(1)), int(match.group(2)))
    kind, items = _nested(spark_type)
    if kind == "array":
        return pa.list_(arrow_type(items[0]))
    if kind == "map":
        return pa.map_(arrow_type(items[0]), arrow_type(items[1]))
    return pa.struct([(name, arrow_type(field_type)) for name, field_type in map(struct_field, items)])


def rows(columns: list[dict], count: int, seed: int = 7, values: dict[str, list] | None = None,
         start: int = 0) -> list[dict]:
    """``count`` rows as Python values (the same rows for the same arguments), numbered from ``start``."""
    rng = random.Random(seed)
    values = values or {}
    return [{c["name"]: values[c["name"]][(i - start) % len(values[c["name"]])] if c["name"] in values
             else _value(c["type"], c["name"], i, rng) for c in columns} for i in range(start, start + count)]


def write_landing(path: Path, columns: list[dict], count: int = 10, fmt: str = "parquet", seed: int = 7,
                  values: dict[str, list] | None = None, start: int = 0) -> Path:
    """Write ``count`` valid rows to ``path/part-00000.<fmt>`` (``parquet`` or ``json``); return the file."""
    path.mkdir(parents=True, exist_ok=True)
    generated = rows(columns, count, seed, values, start)
    if fmt == "parquet":
        schema = pa.schema([pa.field(c["name"], arrow_type(c["type"]), nullable=c.get("nullable", True))
                            for c in columns])
        target = path / "part-00000.parquet"
        pq.write_table(pa.Table.from_pylist(generated, schema=schema), target)
    elif fmt == "json":
        target = path / "part-00000.json"
        target.write_text("".join(json.dumps(row, default=_json_value) + "\n" for row in generated), encoding="utf-8")
    else:
        raise ValueError(f"format {fmt!r}: write parquet or json")
    return target


def _value(spark_type: str, name: str, i: int, rng: random.Random):
    if spark_type == "string":
        return f"{name}-{i:06d}"
    if spark_type in ("tinyint", "smallint", "int", "bigint"):
        return i % 100 + 1 if spark_type == "tinyint" else i + 1
    if spark_type in ("float", "double"):
        return round(rng.uniform(1, 100), 2)
    if spark_type == "boolean":
        return i % 2 == 0
    if spark_type == "date":
        return (_EPOCH + dt.timedelta(days=i)).date()
    if spark_type == "timestamp":
        return _EPOCH + dt.timedelta(minutes=i)
    if spark_type == "timestamp_ntz":
        return (_EPOCH + dt.timedelta(minutes=i)).replace(tzinfo=None)
    if spark_type == "binary":
        return f"{name}-{i}".encode()
    if match := _DECIMAL.fullmatch(spark_type):
        precision, scale = int(match.group(1)), int(match.group(2))
        units = rng.randint(1, 10 ** min(precision, 9) - 1)
        return decimal.Decimal(units).scaleb(-scale)
    kind, items = _nested(spark_type)
    if kind == "array":
        return [_value(items[0], name, i + k, rng) for k in range(1 + i % 2)]
    if kind == "map":
        return {_value(items[0], name, i, rng): _value(items[1], name, i, rng)}
    return {name: _value(field_type, name, i, rng) for name, field_type in map(struct_field, items)}


def _nested(spark_type: str) -> tuple[str, list[str]]:
    """(``array``/``map``/``struct``, its element types or ``name:type`` fields, split at depth 0)."""
    parts = nested_parts(spark_type)
    if parts is None:
        raise ValueError(f"no generator for Spark type {spark_type!r}")
    return parts


def _json_value(value):
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value) if value.as_tuple().exponent < 0 else int(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
