"""Tags on a thread's Spark queries, and stopping the queries that carry one, in either kind of
session.

Spark Connect tags a session's operations (``SparkSession.addTag``, ``interruptTag``). A classic
session has the same methods since Spark 4.0, but there ``interruptTag`` finds a tag only in the
thread that added it, and a timer or a kill comes from another thread; so a classic session tags
the thread's jobs on its SparkContext (``addJobTag``), which ``cancelJobsWithTag`` cancels from any
thread. Either way a tag belongs to the thread that added it.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from contract_gate_spark.runtime.session import is_connect


def add_tag(spark: SparkSession, tag: str) -> None:
    if is_connect(spark):
        spark.addTag(tag)
    else:
        spark.sparkContext.addJobTag(tag)


def remove_tag(spark: SparkSession, tag: str) -> None:
    if is_connect(spark):
        spark.removeTag(tag)
    else:
        spark.sparkContext.removeJobTag(tag)


def thread_tags(spark: SparkSession) -> set[str]:
    """The tags this thread's queries carry."""
    return set(spark.getTags() if is_connect(spark) else spark.sparkContext.getJobTags())


def interrupt_tag(spark: SparkSession, tag: str) -> None:
    """Stop the running queries that carry ``tag`` (callable from any thread)."""
    if is_connect(spark):
        spark.interruptTag(tag)
    else:
        spark.sparkContext.cancelJobsWithTag(tag)
