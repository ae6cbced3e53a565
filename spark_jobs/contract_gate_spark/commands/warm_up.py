"""Load the Delta snapshots a job is about to read, in the background, while it does other work.

The first query over a Delta table in a JVM reconstructs the table's state from its log (a few
small Spark jobs), slow on a cold JVM even for a table of one file. Delta keeps a table's
snapshot per JVM, so a snapshot loaded by a background thread is the one the job's own query
finds later. A cold job leaves a small worker's second core mostly idle; loading the snapshots
on a second thread, while the job checks the target's schema and history, takes them off the
job's path.

Used where the runner asks for it (``job_start.LOCAL_START_ENV``: the local default's cold JVMs).
Only an accelerator: a failure here is logged at debug level and otherwise ignored, because the
job's own read of the same table raises it again, where it is handled.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from pyspark.sql import SparkSession

from contract_gate_plan.addresses import Address
from contract_gate_spark.steps.history import exists

LOGGER = logging.getLogger("contract_gate.warm_up")


def load_snapshots(spark: SparkSession, tables: list[tuple[Address | dict[str, Any] | str, int | None]]) -> threading.Thread:
    """Start loading each ``(address, version)`` (None: the latest) on a daemon thread."""
    thread = threading.Thread(target=_load, args=(spark, tables), name="contract-gate-warm-up", daemon=True)
    thread.start()
    return thread


def _load(spark: SparkSession, tables: list[tuple[Address | dict[str, Any] | str, int | None]]) -> None:
    for address, version in tables:
        try:
            table_address = Address.of(address)  # a step's argument as the command line gave it
            if not exists(spark, table_address):
                continue
            reader = spark.read.format("delta")
            if version is not None:
                reader = reader.option("versionAsOf", version)
            table = table_address.read(reader)
            table.inputFiles()  # lists the snapshot's files: the state reconstruction itself
        except Exception:  # noqa: BLE001 - see the module docs
            LOGGER.debug("warming up %s failed", address, exc_info=True)
