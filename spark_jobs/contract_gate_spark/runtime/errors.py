"""Spark side, runtime: what kind of failure a Spark or Delta exception is, told by its error
condition (``TABLE_OR_VIEW_ALREADY_EXISTS``) or its Delta exception type, never by its message.

A message is for people: Spark rewords it between releases and builds some from the data
(``CAST_INVALID_INPUT`` and Delta's ``DELTA_VIOLATE_CONSTRAINT_WITH_VALUES`` quote row values),
so a search of the text can both miss a case and match a value. A condition is Spark's stable
name of the failure, with named parameters (``constraintName``).

Where the condition is, by kind of session:

* Classic (py4j): PySpark converts the JVM exceptions it knows (``AnalysisException``,
  ``SparkRuntimeException``, ...) and keeps the Java original; one it does not know arrives as
  py4j's ``Py4JJavaError`` (Delta's ``DeltaInvariantViolationException``, a failed write task's
  ``TASK_WRITE_FAILED``). Both lead to the Java exception, whose cause chain is read here: a
  failure inside a task (``raise_error`` in a MERGE) is the cause of the driver's exception.
* Spark Connect: the server sends the whole cause chain, each failure with its condition and
  parameters under the same names (the server is the same Spark), but PySpark's client keeps
  only the outermost one on the exception it raises: a failure inside a task (``raise_error``
  in a MERGE) would arrive as a bare ``TASK_WRITE_FAILED``. :func:`keep_connect_causes`, called
  wherever the gate makes a Connect session (``contract_gate_spark.runtime.session``), keeps the chain's
  conditions on the exception, so both kinds of session are read the same way here.
* Delta's commit conflicts (``ConcurrentAppendException`` ...): in a classic session they are
  exception types of ``delta.exceptions``, built without the Java original, so they carry no
  condition here and are caught by type; over Spark Connect they arrive as the client's generic
  exception with Delta's condition (``DELTA_CONCURRENT_APPEND`` ...). ``contract_gate_spark.steps.commits.is_conflict``
  takes both.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from py4j.java_gateway import is_instance_of
from pyspark import SparkContext

# Named sets of conditions the steps act on (Spark's error-conditions.json, Delta's
# delta-error-classes.json). A name also matches its sub-conditions (``X`` matches ``X.Y``).
TABLE_EXISTS = ("TABLE_OR_VIEW_ALREADY_EXISTS", "DELTA_TABLE_ALREADY_EXISTS")
# ``save()`` in ``errorifexists`` mode onto a path table (``writeTo(...).create()`` says TABLE_EXISTS)
PATH_EXISTS = ("DELTA_PATH_EXISTS",)
NON_EMPTY_LOCATION = ("DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION",)
# ``DESCRIBE DETAIL`` of a path that holds no Delta table (missing, or a folder of other files)
NOT_A_DELTA_TABLE = ("DELTA_MISSING_DELTA_TABLE", "DELTA_PATH_DOES_NOT_EXIST", "PATH_NOT_FOUND")
NOTHING_TO_INFER = ("UNABLE_TO_INFER_SCHEMA",)  # a folder without a file to read a schema from
USER_RAISED = ("USER_RAISED_EXCEPTION",)  # ``raise_error(message)``: its ``errorMessage`` parameter
CHECK_VIOLATED = ("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES",)  # parameter ``constraintName``
# Delta's NOT NULL check of written rows, and Spark's refusal to write a nullable array element
# or map value into a NOT NULL one (an analysis-time check of the same constraint).
NOT_NULL_VIOLATED = ("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", "NOT_NULL_CONSTRAINT_VIOLATION")

# A query cancelled while it ran: an interrupt of its Spark Connect operation, or a classic job cancel
# (a time budget's, a kill of the task's, a cancel in the Spark UI).
CANCELLED = ("OPERATION_CANCELED", "SPARK_JOB_CANCELLED")

_MAX_CAUSES = 32  # a cause chain is finite in the JVM; this only bounds a pathological one


@dataclass(frozen=True)
class SparkError:
    """One failure in an exception's cause chain: its condition and its message parameters
    (a parameter may hold a value of the data: ``DELTA_VIOLATE_CONSTRAINT_WITH_VALUES``'s
    ``values``; read only the parameter you need)."""

    condition: str
    parameters: Mapping[str, str] = field(default_factory=dict)

    def is_one_of(self, conditions: tuple[str, ...]) -> bool:
        return any(self.condition == c or self.condition.startswith(c + ".") for c in conditions)


def spark_errors(exc: BaseException) -> list[SparkError]:
    """The conditions of ``exc`` and its causes, outermost first; empty when none has one
    (a plain Python error, a Delta conflict, a JVM that is gone)."""
    return list(_errors(exc))


def find_error(exc: BaseException, conditions: tuple[str, ...]) -> SparkError | None:
    """The outermost failure in ``exc``'s cause chain whose condition is one of ``conditions``."""
    return next((error for error in _errors(exc) if error.is_one_of(conditions)), None)


def has_condition(exc: BaseException, conditions: tuple[str, ...]) -> bool:
    return find_error(exc, conditions) is not None


def error_condition(exc: BaseException) -> str:
    """What to report about a failure: its outermost condition (``DIVIDE_BY_ZERO``), else the
    Java exception's class name, else the Python one. Never its message."""
    for error in _errors(exc):
        return error.condition
    java = getattr(exc, "java_exception", None)  # py4j's error; a converted one is named by its type
    try:
        return str(java.getClass().getName()) if java is not None else type(exc).__name__
    except Exception:  # noqa: BLE001 - a JVM that is gone has no class name to give
        return type(exc).__name__


def _errors(exc: BaseException) -> Iterator[SparkError]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < _MAX_CAUSES:
        seen.add(id(current))
        java = _java_exception(current)
        if java is not None:  # the Java chain holds this exception and all its causes
            yield from _java_errors(java)
            return
        chain = getattr(current, _CONNECT_CHAIN, None)
        if chain:  # the server's chain, as keep_connect_causes kept it
            yield from chain
            return
        error = _python_error(current)
        if error is not None:
            yield error
        current = current.__cause__


def _java_exception(exc: BaseException):
    """The JVM exception behind a classic session's error: a converted one keeps it as
    ``_origin`` (pyspark.errors.exceptions.captured, no public accessor), py4j's own error as
    ``java_exception``; None for Spark Connect's and Delta's conflict classes."""
    return getattr(exc, "_origin", None) or getattr(exc, "java_exception", None)


def _java_errors(throwable) -> Iterator[SparkError]:
    try:
        gateway = SparkContext._gateway
        found = []
        for _ in range(_MAX_CAUSES):
            if throwable is None:
                break
            if gateway is not None and is_instance_of(gateway, throwable, "org.apache.spark.SparkThrowable"):
                condition = throwable.getCondition()
                if condition:
                    found.append(SparkError(str(condition), dict(throwable.getMessageParameters())))
            throwable = throwable.getCause()
    except Exception:  # noqa: BLE001 - a JVM that is gone has no condition to give
        return
    yield from found


def _python_error(exc: BaseException) -> SparkError | None:
    """A PySpark exception's own condition (Spark Connect's, or one raised on the client).
    ``getErrorClass`` is the name before pyspark 4.0."""
    method = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    try:
        condition = method() if method is not None else None
        # duck-typed as getCondition above: a PySpark error (classic or Connect) that has a condition
        parameters = exc.getMessageParameters() if condition else None  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a JVM that is gone has no condition to give
        return None
    return SparkError(str(condition), dict(parameters or {})) if condition else None


_CONNECT_CHAIN = "_contract_gate_causes"
"""The attribute on a Spark Connect client's exception that holds its server-side cause chain."""


def keep_connect_causes() -> None:
    """Make the Spark Connect client keep the conditions of a failure's causes on the exception
    it raises (idempotent; a no-op where PySpark's Connect client is not installed).

    The server answers a failed request with every failure of the cause chain, each with its
    condition and message parameters (``FetchErrorDetailsResponse``: ``root_error_idx``, then
    ``cause_idx`` links); PySpark builds its exception from the outermost one and drops the
    rest. There is no public hook for it, so the client's converter is wrapped: it still builds
    the exception, and the chain's conditions are kept beside it, outermost first."""
    try:  # the Connect client needs grpcio, pandas and pyarrow, which a classic-only install may lack
        from pyspark.sql.connect.client import core
    except ImportError:
        return
    convert = core.convert_exception
    if getattr(convert, "keeps_causes", False):
        return

    def convert_keeping_causes(info, truncated_message, resp, *args, **kwargs):  # named as convert_exception's
        exc = convert(info, truncated_message, resp, *args, **kwargs)
        chain = _connect_chain(resp)
        if chain:
            setattr(exc, _CONNECT_CHAIN, chain)
        return exc

    convert_keeping_causes.keeps_causes = True  # type: ignore[attr-defined]  # a mark, read back with getattr above
    core.convert_exception = convert_keeping_causes


def _connect_chain(details) -> tuple[SparkError, ...]:
    """The conditions of a ``FetchErrorDetailsResponse``'s chain, outermost first (a failure
    that is not a Spark throwable has none and is skipped, as in a classic session)."""
    if details is None or not details.HasField("root_error_idx"):
        return ()
    errors, found, index = list(details.errors), [], details.root_error_idx
    for _ in range(_MAX_CAUSES):
        if not 0 <= index < len(errors):
            break
        error = errors[index]
        if error.HasField("spark_throwable") and error.spark_throwable.HasField("error_class"):
            throwable = error.spark_throwable
            found.append(SparkError(str(throwable.error_class), dict(throwable.message_parameters)))
        if not error.HasField("cause_idx"):
            break
        index = error.cause_idx
    return tuple(found)
