"""The session settings a validation pass and a contract query run under, each put back as it
was afterwards."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession

HUGE_METHOD_LIMIT = "spark.sql.codegen.hugeMethodLimit"
JIT_METHOD_BYTES = 8000
"""HotSpot compiles no method longer than this; Spark's documentation advises it as the limit."""
SORT_AGGREGATE = "spark.sql.execution.replaceHashWithSortAgg"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
INITIAL_PARTITIONS = "spark.sql.adaptive.coalescePartitions.initialPartitionNum"
KEY_PARTITIONS = 16
ADVISORY_PARTITION_SIZE = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
KEY_PARTITION_SIZE = "4m"
READER_BATCH = "spark.sql.parquet.columnarReaderBatchSize"
QUERY_READER_BATCH_ROWS = 64
"""Rows a contract query reads per batch of the candidate. Spark stops a cancelled task only when
it asks its input for the next batch, and a query can spend hours on one batch (a join on a key
every row shares pairs each row with all the others), so small batches let a time budget stop it
at once."""


@contextmanager
def pass_settings(spark: SparkSession) -> Iterator[None]:
    """The session's settings for the passes, each put back as it was afterwards.

    * ``spark.sql.codegen.hugeMethodLimit`` at most 8000: whole-stage code generation steps
      back for a stage whose generated method HotSpot would not compile, instead of leaving
      the JVM to interpret it;
    * ``spark.sql.execution.replaceHashWithSortAgg``: the key's rows, sorted on their hash
      after the shuffle (``key_passes.key_groups``), are grouped by one sort aggregate instead
      of a partial and a final hash aggregate, each of which would insert every row into a
      hash map of its own. From Spark 4.3 that sort aggregate also runs in generated code (on by
      default there);
    * at least ``KEY_PARTITIONS`` partitions after the key's shuffle
      (``spark.sql.adaptive.coalescePartitions.initialPartitionNum``), which adaptive execution
      coalesces into partitions of about ``KEY_PARTITION_SIZE`` (a small batch's into one).
      Every task of the key's group-by writes one file per partition for the summary's
      shuffle, so more partitions cost more files than they save.
    """
    wanted: dict[str, Any] = {}
    if _setting(spark, HUGE_METHOD_LIMIT, 65535) > JIT_METHOD_BYTES:
        wanted[HUGE_METHOD_LIMIT] = JIT_METHOD_BYTES
    wanted[SORT_AGGREGATE] = "true"
    shuffle_partitions = _setting(spark, SHUFFLE_PARTITIONS, 200)
    if _setting(spark, INITIAL_PARTITIONS, shuffle_partitions) < KEY_PARTITIONS:
        wanted[INITIAL_PARTITIONS] = KEY_PARTITIONS
    wanted[ADVISORY_PARTITION_SIZE] = KEY_PARTITION_SIZE
    with session_settings(spark, wanted):
        yield


@contextmanager
def query_settings(spark: SparkSession) -> Iterator[None]:
    """The session's settings for the contract queries: ``QUERY_READER_BATCH_ROWS`` per batch."""
    with session_settings(spark, {READER_BATCH: QUERY_READER_BATCH_ROWS}):
        yield


@contextmanager
def session_settings(spark: SparkSession, wanted: Mapping[str, Any]) -> Iterator[None]:
    """``wanted`` set in the session for the block, each setting put back as it was afterwards."""
    previous = {key: spark.conf.get(key, None) for key in wanted}
    for key, value in wanted.items():
        spark.conf.set(key, str(value))
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _setting(spark: SparkSession, key: str, default: int) -> int:
    """A whole-number setting of the session; ``default`` when unset, and a value that is not a
    number (Databricks' ``auto`` partitions) counts as already high enough."""
    value = spark.conf.get(key, None)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        return 1 << 30

