"""One tagged, idempotent Delta commit per submission and table, retried on optimistic conflicts.

Every write the gate makes to a shared table (target, quarantine) carries:

* ``userMetadata`` = the submission id, so the table's own history says which submission
  made which version (how recovery finds a publish whose decision was never recorded);
* Delta's idempotent-write pair ``txnAppId`` = ``contract-gate:<contract id>:<submission id>``
  and ``txnVersion`` = 1, so Delta itself skips a second commit of the same submission,
  whichever process or retry attempts it.

They are set as session conf (``spark.databricks.delta.write.txnAppId``/``txnVersion`` and
``spark.databricks.delta.commitInfo.userMetadata``), the one form delta-spark 4.4 honours
for every write the gate makes: MERGE takes no options at all, and ``saveAsTable`` ignores
the ``userMetadata`` option. The conf lives in a child session
(``contract_gate_spark.runtime.session.child_session``: classic ``newSession``, Spark Connect
``cloneSession``; own SQL conf either way) that reads and writes one submission's data, so the
caller's session, or a concurrent publish on another thread or Connect session, never sees its
tags. Delta
records the idempotency pair only on writes into an existing table (not on a CREATE TABLE AS
SELECT), so tables are created untagged first and then written to.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from delta import exceptions as delta_errors
from pyspark.sql import SparkSession

from contract_gate_plan.model import Plan
from contract_gate_spark.runtime.errors import has_condition
from contract_gate_spark.runtime.session import TXN_APP_ID, TXN_VERSION_CONF, USER_METADATA, child_session

TXN_VERSION = 1
LAST_COMMIT = "spark.databricks.delta.lastCommitVersionInSession"
"""Delta sets this SQL conf of a session to the version of each commit made in it."""
MAX_ATTEMPTS = 8
CONFLICTS = (  # delta-spark's Python classes share no base class but PySparkException
    delta_errors.ConcurrentAppendException,
    delta_errors.ConcurrentDeleteDeleteException,
    delta_errors.ConcurrentDeleteReadException,
    delta_errors.ConcurrentTransactionException,
    delta_errors.ConcurrentWriteException,
    delta_errors.DeltaConcurrentModificationException,
    delta_errors.MetadataChangedException,
    delta_errors.ProtocolChangedException,
)

# The same conflicts by error condition (delta-error-classes.json): over Spark Connect they arrive
# as the client's generic exception carrying the server's condition, not as the types above.
CONFLICT_CONDITIONS = (
    "DELTA_CONCURRENT_APPEND", "DELTA_CONCURRENT_DELETE_DELETE", "DELTA_CONCURRENT_DELETE_READ",
    "DELTA_CONCURRENT_TRANSACTION", "DELTA_CONCURRENT_WRITE", "DELTA_METADATA_CHANGED",
    "DELTA_PROTOCOL_CHANGED",
)

LOGGER = logging.getLogger("contract_gate.commits")
T = TypeVar("T")


def app_id(plan: Plan, submission_id: str) -> str:
    return f"contract-gate:{plan.contract_id}:{submission_id}"


def tagged_session(
    spark: SparkSession, plan: Plan, submission_id: str, idempotent: bool = True
) -> SparkSession:
    """A child session whose Delta commits carry the submission id and, when ``idempotent``,
    its idempotency pair. DataFrames to be written must be read through it: a write runs in
    its DataFrame's session. (Stage goes without the pair: with it, Delta would skip a second
    ``errorifexists`` write silently instead of saying the candidate exists.)"""
    session = child_session(spark)
    session.conf.unset(LAST_COMMIT)  # a Connect clone copies its parent's: only its own commit sets it
    session.conf.set(USER_METADATA, submission_id)
    if idempotent:
        session.conf.set(TXN_APP_ID, app_id(plan, submission_id))
        session.conf.set(TXN_VERSION_CONF, str(TXN_VERSION))
    return session


def own_commit_version(session: SparkSession) -> int | None:
    """The version that the last commit made in ``session`` (a :func:`tagged_session`) created, None
    when it made none (Delta skipped its write as already applied). A conf read, where the
    target's history is a Spark job."""
    value = session.conf.get(LAST_COMMIT, None)
    return None if value is None else int(value)


def is_conflict(exc: BaseException) -> bool:
    """True when ``exc`` is a lost optimistic-concurrency race, in a classic or Connect session."""
    return isinstance(exc, CONFLICTS) or has_condition(exc, CONFLICT_CONDITIONS)


def retry_conflicts(action: Callable[[int], T], what: str, attempts: int = MAX_ATTEMPTS) -> T:
    """Run ``action(attempt)`` until it does not lose an optimistic-concurrency race.

    Delta already retries a commit whose concurrent winners touched nothing it read; what
    reaches us is a real conflict (a concurrent append into data a MERGE read, a concurrent
    table creation, the same transaction id committed by a twin run). The action must
    re-read the table on every attempt: it then sees the winner, and a twin's commit turns
    into "already done". Jittered back-off keeps two losers from colliding again.
    """
    for attempt in range(1, attempts):
        try:
            return action(attempt)
        except Exception as exc:  # noqa: BLE001 - anything but a conflict is re-raised at once
            if not is_conflict(exc):
                raise
            delay = min(2.0, 0.1 * 2**attempt) * random.uniform(0.5, 1.5)
            LOGGER.info("%s lost a concurrent commit (%s); retry %d in %.2fs",
                        what, type(exc).__name__, attempt, delay)
            time.sleep(delay)
    return action(attempts)
