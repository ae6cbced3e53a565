"""A key set as one 64-bit hash to group on, and the exact second look at the hash groups
that hold two or more rows.

Grouping on ``xxhash64`` of the key columns instead of the columns themselves makes the key's
group-by cheaper (one fixed-width long to hash, compare and shuffle instead of strings and
dates). Equal keys always have equal hashes, so a hash group can only be too big, never split:
a collision can report a false duplicate but never hide a real one. A hash group of one row is
one key, exactly; only a group of two or more rows (a suspect: a duplicate, or distinct keys
that collided) needs a second look. ``merged_keys`` reads the key columns of the suspects'
rows alone and compares each group's least and greatest key: when every suspect holds one
key, the counts from the hashes are exact; when one holds two, the engine counts that key set
again on its columns. The hash is not secret (a producer can craft colliding keys), so
exactness rests on this look at the columns, not on the hash being wide.

The hash covers a NULL mask of the key parts, because Spark's hashes skip NULL inputs:
without it ``("x", NULL)`` and ``(NULL, "x")`` would hash alike. Grouping keeps its SQL
meaning: NULL key parts compare equal (a ``nulls_distinct`` rule excludes those rows itself),
``-0.0`` equals ``0.0`` and every NaN equals every other (Spark's hashes normalise both).
Only key columns whose equality is their bytes' are hashed; a key set with any other type
(a collated string, a struct, an array) is grouped on its columns as before.
"""

from __future__ import annotations

import json
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    NumericType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from contract_gate_spark.validation.rule_columns import column

LOOK_HASH = "__contract_gate_look_hash"
LOOK_KEY = "__contract_gate_look_key"
LEAST_KEY = "__contract_gate_least_key"
GREATEST_KEY = "__contract_gate_greatest_key"

HASH_BITS = 64
"""Width of the grouping hash. Tests set it to a few bits to force collisions between chosen
keys (tests/spark/test_key_hash.py); it is never configured elsewhere."""

LOOK_LIMIT = 100_000
"""Most suspect hash groups the second look names one by one (their hashes, a set in the
query). A batch with more duplicate keys than this is counted again on its columns instead."""


def hashable(schema: StructType, keys: tuple[str, ...]) -> bool:
    """Whether every key column compares equal exactly when its value's bytes are equal."""
    fields = {field.name: field.dataType for field in schema.fields}
    return all(name in fields and _byte_equal(fields[name]) for name in keys)


def _byte_equal(data_type: DataType) -> bool:
    if isinstance(data_type, StringType):
        return getattr(data_type, "collation", "UTF8_BINARY") == "UTF8_BINARY"
    return isinstance(
        data_type, (NumericType, DateType, TimestampType, TimestampNTZType, BooleanType, BinaryType)
    )


def _null_mask(keys: tuple[str, ...]) -> Column:
    return reduce(lambda mask, part: mask * 2 + part, [column(k).isNull().cast("int") for k in keys])


def key_hash(keys: tuple[str, ...]) -> Column:
    """The 64-bit hash to group on (``HASH_BITS`` wide)."""
    value = F.xxhash64(_null_mask(keys), *map(column, keys))
    if HASH_BITS < 64:
        value = value.bitwiseAND(F.lit((1 << HASH_BITS) - 1))
    return value


def merged_keys(df: DataFrame, keys: tuple[str, ...], hashes: list[int]) -> bool:
    """Whether a suspect hash group (``hashes``: hash groups of 2+ rows) may hold two
    distinct keys: true when one does, or when there were too many suspects to look at.

    The look reads the key columns only: the suspects' rows (a semi-join on the broadcast
    list of their hashes: a small job), grouped on the hash. A group holds one key exactly
    when the least and the greatest of its keys are equal: Spark orders a key as grouping
    compares it (NULL parts equal, ``-0.0`` equal to ``0.0``, NaN to NaN), so one group-by
    does what grouping on hash and columns, then on the hash, would do in two. The hashes
    travel as one JSON literal, parsed in the JVM: ``createDataFrame`` would convert and
    verify them one Python row at a time."""
    if len(hashes) > LOOK_LIMIT:
        return True
    listed = F.from_json(F.lit(json.dumps(hashes)), "array<bigint>")
    named = df.sparkSession.range(1).select(F.explode(listed).alias(LOOK_HASH))
    keyed = df.select(key_hash(keys).alias(LOOK_HASH), F.struct(*map(column, keys)).alias(LOOK_KEY))
    rows = keyed.join(F.broadcast(named), LOOK_HASH, "left_semi")
    per_hash = rows.groupBy(LOOK_HASH).agg(
        F.min(LOOK_KEY).alias(LEAST_KEY), F.max(LOOK_KEY).alias(GREATEST_KEY)
    )
    merged = ~F.col(LEAST_KEY).eqNullSafe(F.col(GREATEST_KEY))
    return per_hash.agg(F.count_if(merged)).collect()[0][0] > 0
