"""Run one Spark query on a second thread while the caller's thread runs another.

A gate step on a small batch spends its seconds waiting on Spark's fixed costs (planning, a
table's state rebuilt from its log, job scheduling), not on the cores: two independent queries
sent at once overlap those waits, on a Spark Connect server and in a local JVM alike (one
session serves concurrent queries from several threads in both). Used where a step needs a
second answer that does not depend on the first (docs/gate-steps.md, "Queries run side by
side").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from contract_gate_spark.runtime.session import active_session
from contract_gate_spark.runtime.tags import add_tag, thread_tags

T = TypeVar("T")


def side_by_side(work: Callable[[], T], name: str) -> Future[T]:
    """Start ``work()`` on a daemon thread; its ``Future`` holds the result or the exception.

    A daemon thread, not an executor's: a job that fails on its own thread must still end at
    once, without waiting for the query beside it (its session's end cancels that query). The
    thread's queries carry the caller's tags (a session's tags are per thread), so stopping the
    job by its tag stops them too."""
    future: Future[T] = Future()
    session = active_session()
    tags = thread_tags(session) if session is not None else set()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            if session is not None:
                for tag in tags:
                    add_tag(session, tag)
            future.set_result(work())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
            future.set_exception(exc)

    threading.Thread(target=run, name=f"contract-gate-{name}", daemon=True).start()
    return future
