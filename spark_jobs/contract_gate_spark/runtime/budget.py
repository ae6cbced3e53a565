"""A time budget for Spark work: the block's queries run under a tag of their own, and when the
budget runs out a timer thread interrupts that tag, so Spark itself cancels the jobs, on the
cluster or the Connect server, not only the client's wait for them.

One implementation for classic and Spark Connect sessions (``contract_gate_spark.runtime.tags``). A tag,
not a job group: budgets nest (a contract query's own budget inside the validation's), and a job
carries every tag of its thread, where a thread has one job group only. In a classic session the
cancelled jobs' task threads are interrupted too (``setInterruptOnCancel``), so one long
expression in a task stops as well.

The timer keeps interrupting the tag once a second until the block ends: a job submitted just
as the budget ran out, or after a caller swallowed the cancellation, is cancelled too.

A query cancelled while no budget of its had run out was stopped from outside the job: the task
was killed (the ``spark_connect`` runner interrupts the job's tag) or someone cancelled it on the
cluster. That is a stop too (:class:`JobStopped`), never a failed query: the rule it ran is not
``not_evaluated`` (which would count against the batch), the validation has no verdict.
"""

from __future__ import annotations

import threading
import time
import uuid
from types import TracebackType

from pyspark.sql import SparkSession

from contract_gate_plan.limits import KILLED, KILLED_SETTING, Stop
from contract_gate_spark.runtime.errors import CANCELLED, has_condition
from contract_gate_spark.runtime.session import is_connect
from contract_gate_spark.runtime.tags import add_tag, interrupt_tag, remove_tag

INTERRUPT_ON_CANCEL = "spark.job.interruptOnCancel"
REPEAT_SECONDS = 1.0


class StepStopped(RuntimeError):
    """The step was stopped before its end (``StepState.STOPPED``); ``stop`` says what was running
    and why, ``report`` is the validation's partial report when it built one (its stopped rules
    ``RuleStatus.STOPPED``, its outcome ``stopped``), for an in-process caller to show: a gate job
    writes no report for a stopped validation."""

    def __init__(self, stop: Stop) -> None:
        super().__init__(stop.describe())
        self.stop = stop
        self.report: dict | None = None


class TimeBudgetExceeded(StepStopped):
    """A budget ran out; ``stop`` names the limit."""


class JobStopped(StepStopped):
    """The job's query was cancelled from outside while its budgets still ran: a kill of the task
    or a cancel on the cluster."""


class TimeBudget:
    """``with TimeBudget(spark, 300, "rule 'x'", "limits.querySeconds"):`` runs the block's queries
    under the budget; raises :class:`TimeBudgetExceeded` when it ran out and the block failed.

    ``running`` names what the block is doing, for the stop's message; a caller may change it as
    it goes (``budget.running = "rule 'y'"``)."""

    def __init__(self, spark: SparkSession, seconds: int, running: str, setting: str) -> None:
        self.spark = spark
        self.seconds = seconds
        self.running = running
        self.setting = setting
        self.tag = f"contract-gate-budget-{uuid.uuid4().hex}"
        self._spent = threading.Event()
        self._ended = threading.Event()
        self._interrupt_on_cancel: str | None = None
        self._started: float | None = None

    @property
    def spent(self) -> bool:
        return self._spent.is_set()

    def check(self, error: BaseException | None = None) -> None:
        """Raise :class:`TimeBudgetExceeded` when the budget has run out (for a caller that caught
        the cancelled query's error); given that ``error``, raise :class:`JobStopped` when it is a
        cancel while the budget still ran (a stop from outside, not a failed query)."""
        if self.spent:
            raise TimeBudgetExceeded(Stop(self.running, self.seconds, self.setting))
        if error is not None and has_condition(error, CANCELLED):
            spent = round(time.monotonic() - self._started) if self._started is not None else 0
            raise JobStopped(Stop(self.running, spent, KILLED_SETTING, KILLED)) from None

    def __enter__(self) -> TimeBudget:
        self._started = time.monotonic()
        add_tag(self.spark, self.tag)
        if not is_connect(self.spark):
            context = self.spark.sparkContext
            self._interrupt_on_cancel = context.getLocalProperty(INTERRUPT_ON_CANCEL)
            context.setInterruptOnCancel(True)
        threading.Thread(target=self._watch, name="contract-gate-budget", daemon=True).start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._ended.set()
        remove_tag(self.spark, self.tag)
        if not is_connect(self.spark):
            # None (the property was unset) unsets it again, as pyspark documents; its stub says str only
            self.spark.sparkContext.setLocalProperty(INTERRUPT_ON_CANCEL, self._interrupt_on_cancel)  # type: ignore[arg-type]
        if exc_type is not None and issubclass(exc_type, Exception) and not issubclass(exc_type, TimeBudgetExceeded):
            self.check()  # the block failed because its queries were cancelled: say why, not how

    def _watch(self) -> None:
        if self._ended.wait(self.seconds):
            return
        self._spent.set()
        while True:
            try:
                interrupt_tag(self.spark, self.tag)
            except Exception:  # noqa: BLE001 - a session that is gone has nothing left to stop
                return
            if self._ended.wait(REPEAT_SECONDS):
                return

