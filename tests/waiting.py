"""Waiting on a condition instead of sleeping a fixed time (tests never sleep a constant).

A fixed sleep is either too short on a loaded machine (the test flakes) or too long on an idle
one (the suite crawls); polling the condition with a deadline is neither.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float, interval: float = 0.05,
               message: str = "the condition") -> T:
    """Call ``predicate`` every ``interval`` seconds until it returns something truthy, and return
    that; after ``timeout`` seconds raise ``TimeoutError`` naming ``message``. An exception the
    predicate raises (e.g. "the child exited first") ends the wait at once."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{message} did not hold within {timeout} s")
        time.sleep(interval)
