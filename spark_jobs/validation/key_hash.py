"""A key set as one 64-bit hash to group on, and a second hash that finds the groups a
collision merged.

Grouping on ``xxhash64`` of the key columns instead of the columns themselves makes the key's
group-by cheaper (one fixed-width long to hash, compare and shuffle instead of strings and
dates). Equal keys always have equal hashes, so a hash group can only be too big, never split:
a collision can report a false duplicate but never hide a real one. To catch those, each group
also keeps the minimum and maximum of a second, independently seeded 64-bit hash of the same
key: where they differ the group holds two distinct keys, and the engine counts that key set
again on the key columns themselves. A false duplicate would need two distinct keys colliding
in both hashes at once.

Both hashes cover a NULL mask of the key parts, because Spark's hashes skip NULL inputs:
without it ``("x", NULL)`` and ``(NULL, "x")`` would hash alike. Grouping keeps its SQL
meaning: NULL key parts compare equal (a ``nulls_distinct`` rule excludes those rows itself),
``-0.0`` equals ``0.0`` and every NaN equals every other (Spark's hashes normalise both).
Only key columns whose equality is their bytes' are hashed; a key set with any other type
(a collated string, a struct, an array) is grouped on its columns as before.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column
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

from spark_jobs.validation.rule_columns import column

HASH_BITS = 64
"""Width of the grouping hash. Tests set it to a few bits to force collisions between chosen
keys (tests/spark/test_key_hash.py); it is never configured elsewhere."""

CHECK_SEED = 0x5EED_C0DE
"""Hashed ahead of the key for the second hash: Spark's xxhash64 feeds each input's hash in as
the seed of the next one, so this gives the same function with another seed."""


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


def check_hash(keys: tuple[str, ...]) -> Column:
    """The independently seeded hash whose spread inside a group reveals a collision."""
    return F.xxhash64(F.lit(CHECK_SEED), _null_mask(keys), *map(column, keys))
