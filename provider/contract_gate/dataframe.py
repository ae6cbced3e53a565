"""The contract as a check inside ordinary PySpark code: notebooks, tests, pipeline functions.

Runs the same engine as the gate (``contract_gate_spark``) on a DataFrame in this process, with no
Airflow anywhere on the import path. ``contract`` is a path to an ODCS contract (compiled on
the spot, for ``env`` when given) or an already compiled plan dict.

Set ``CONTRACT_GATE_DISABLE_VALIDATION=1`` to switch every check here off without touching
code (an emergency valve for a production job): ``validate`` then returns ``None``.

``spark_session(remote)`` gives a session to validate on where the caller has none: a thin
Spark Connect client of ``remote`` (or ``SPARK_REMOTE``), else local Spark started the way the
local runner starts its jobs. ``contract-gate validate`` uses the same function.
"""

from __future__ import annotations

import atexit
import functools
import inspect
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DataType, StructField, StructType

from contract_gate.contract.compiler import compile_plan
from contract_gate.local_spark import class_archive
from contract_gate.local_spark.submit import local_start_conf
from contract_gate_spark.validation.engine import DEPTHS, run_validation
from contract_gate_plan.model import Plan, load_plan
from contract_gate_plan.states import RuleStatus
from contract_gate_spark.runtime.session import active_session, connect, get_session
from contract_gate_spark.validation.report import log_summary

DISABLE_ENV = "CONTRACT_GATE_DISABLE_VALIDATION"
MODES = ("hard", "soft")
LOGGER = logging.getLogger("contract_gate.validation")

Contract = str | Path | dict[str, Any] | Plan


class ContractViolation(Exception):
    """A hard-mode validation failed; ``report`` is the full report."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.report = report
        failing = [
            f"{r['id']} ({r['failed_rows'] if r['failed_rows'] is not None else r['status']})"
            for r in report["rules"]
            if r["passed"] is False or (r["status"] == RuleStatus.NOT_EVALUATED and report["depth"] != "schema")
        ]
        schema = report["schema"]
        problems = [f"missing {', '.join(schema['missing'])}"] if schema["missing"] else []
        problems += [f"unexpected {', '.join(schema['unexpected'])}"] if not schema["ok"] and schema["unexpected"] else []
        problems += [f"{m['column']} is {m['actual']}, not {m['expected']}" for m in schema["type_mismatches"]]
        super().__init__(
            f"contract {report['contract']['id']} {report['contract']['version']} failed: "
            + "; ".join(problems + failing)
        )


def spark_session(remote: str | None = None) -> SparkSession:
    """A Spark session to validate on: a new Spark Connect session on ``remote``
    (``sc://host:port``, else the ``SPARK_REMOTE`` variable), whose server reads the data and
    runs every query, so this process starts no JVM. Without an address, the session already
    running in this process, else local Spark started as the local runner starts a gate job
    (``contract_gate.local_spark.submit.local_start_conf``: Delta's jars from the install's cache, no
    Ivy resolution, the class archive when built, Spark's log quiet)."""
    remote = remote or os.environ.get("SPARK_REMOTE")
    if remote:
        _require_listening(remote)
        return connect(remote)
    running = active_session()
    if running is not None:
        return running
    scratch = tempfile.mkdtemp(prefix="contract-gate-spark-")  # owner-only: Spark's log settings
    atexit.register(shutil.rmtree, scratch, True)
    return get_session("contract-gate-validate", local_start_conf(Path(scratch), archive_options=class_archive.java_options()))


CONNECT_TIMEOUT_SECONDS = 10
DEFAULT_CONNECT_PORT = 15002


def _require_listening(url: str) -> None:
    """Fail at once, naming the address, when nothing listens there: PySpark's Connect client
    retries a refused connection with back-off for minutes before it gives up."""
    parsed = urlparse(url.split("/;", 1)[0])
    if parsed.scheme != "sc" or not parsed.hostname:
        raise ValueError(f"not a Spark Connect address (sc://host:port): {parsed.scheme}://{parsed.hostname or ''}")
    address = (parsed.hostname, parsed.port or DEFAULT_CONNECT_PORT)
    try:
        socket.create_connection(address, timeout=CONNECT_TIMEOUT_SECONDS).close()
    except OSError as exc:
        raise ConnectionError(f"no Spark Connect server answers at {address[0]}:{address[1]}: {exc}") from None


def disabled() -> bool:
    return os.environ.get(DISABLE_ENV, "").strip().lower() in ("1", "true", "yes")


def compile_contract(contract: Contract, env: str | None = None) -> Plan:
    """The typed plan for ``contract``: compiled from a contract file, or a plan dict checked."""
    if isinstance(contract, (dict, Plan)):
        return load_plan(contract)
    return load_plan(compile_plan(contract, env=env))


def validate(
    df: DataFrame,
    contract: Contract,
    mode: str = "hard",
    depth: str = "all",
    env: str | None = None,
    *,
    sample_size: int = 0,
) -> dict[str, Any] | None:
    """Validate ``df`` and return the report (``None`` when validation is disabled).

    ``mode="hard"`` raises ``ContractViolation`` when the outcome is ``fail``; ``"soft"``
    only returns the report. ``depth="schema"`` runs no Spark action. Either way one JSON
    line naming every failing rule and its count goes to the ``contract_gate.validation``
    logger.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be hard or soft, not {mode!r}")
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {', '.join(DEPTHS)}, not {depth!r}")
    if disabled():
        LOGGER.warning("contract validation disabled by %s", DISABLE_ENV)
        return None
    plan = compile_contract(contract, env)
    report = run_validation(df.sparkSession, plan, df, depth=depth, sample_size=sample_size)
    log_summary(report)
    if mode == "hard" and report["outcome"] == "fail":
        raise ContractViolation(report)
    return report


def check_input(
    contract: Contract, param: str, *, mode: str = "hard", depth: str = "all", env: str | None = None
) -> Callable[[Callable], Callable]:
    """Validate the DataFrame passed as ``param`` before the decorated function runs."""
    plan = _lazy_plan(contract, env)

    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)
        if param not in signature.parameters:
            raise TypeError(f"{function.__qualname__}() has no parameter {param!r}")

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            if not disabled():
                validate(bound.arguments[param], plan(), mode, depth)
            return function(*args, **kwargs)

        return wrapper

    return decorate


def check_output(
    contract: Contract, *, mode: str = "hard", depth: str = "all", env: str | None = None
) -> Callable[[Callable], Callable]:
    """Validate the DataFrame the decorated function returns, before the caller gets it."""
    plan = _lazy_plan(contract, env)

    def decorate(function: Callable) -> Callable:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = function(*args, **kwargs)
            if not disabled():
                validate(result, plan(), mode, depth)
            return result

        return wrapper

    return decorate


def _lazy_plan(contract: Contract, env: str | None) -> Callable[[], Plan]:
    """Compile on first call, once: decorating a function must not read files at import."""
    return functools.cache(lambda: compile_contract(contract, env))


def spark_schema(contract: Contract, env: str | None = None) -> StructType:
    """The contract's columns as a StructType, descriptions as column comments."""
    return StructType(
        [
            StructField(
                column.name,
                DataType.fromDDL(column.type),
                nullable=column.nullable,
                metadata={"comment": column.description} if column.description else {},
            )
            for column in compile_contract(contract, env).columns
        ]
    )


def empty_dataframe(spark: SparkSession, contract: Contract, env: str | None = None) -> DataFrame:
    """An empty DataFrame with the contract's schema, e.g. as a test fixture."""
    return spark.createDataFrame([], spark_schema(contract, env))
