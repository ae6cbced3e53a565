"""The fence of a ``spark_connect`` job (``contract_gate.runners.connect_fence``) on a real server.

A worker's first job forks its watcher (the Connect client already imported, no gRPC channel
open yet): the watcher runs the worker's own interpreter, in a session of its own, holding no
file of the worker's but its pipe and ``/dev/null``, with the worker's Python signal handlers
reset (Airflow's SIGTERM handler would stop a task). A worker that has connected before starts a
new interpreter instead (gRPC's threads are not copied by a fork). Either watcher, on its worker's
SIGKILL, ends the session it was told of: the session is closed on the server.

The worker runs in a child process: this one may be a classic PySpark driver, and a process is a
Connect client or a classic driver, not both."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from waiting import wait_until

WORKER = """
import json, os, signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: None)  # a handler of the worker's own, as Airflow's task runner has
from contract_gate.runners.connect_fence import ConnectFence
from contract_gate_spark.runtime.session import connect
url = sys.argv[1]
before = ConnectFence(url)  # the first, before any channel: forked
spark = connect(url)  # this process has connected: the next watcher is a new interpreter
after = ConnectFence(url)
watched = {"forked": before, "spawned": after}
sessions = {}
for name, fence in watched.items():
    session = connect(url)
    fence.watch(session.session_id)
    sessions[name] = session.session_id
print(json.dumps({"pid": os.getpid(), "sessions": sessions}), flush=True)
time.sleep(600)  # killed here
"""

ATTACH = """
import sys
from contract_gate.runners.connect_fence import with_session
from contract_gate_spark.runtime.session import connect
try:
    connect(with_session(sys.argv[1], sys.argv[2])).range(1).collect()
except Exception as exc:
    print("closed" if "SESSION_CLOSED" in str(exc) else f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
else:
    print("open")
"""


def _watchers(worker: int) -> dict[str, psutil.Process]:
    """The worker's watchers: the forked one runs the worker's own command line."""
    children = psutil.Process(worker).children()
    own = psutil.Process(worker).cmdline()
    return {("forked" if child.cmdline() == own else "spawned"): child for child in children}


def _ended(process: psutil.Process) -> bool:
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _attach(url: str, session_id: str) -> str:
    done = subprocess.run([sys.executable, "-c", ATTACH, url, session_id], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


@contextlib.contextmanager
def _worker(url: str, folder: Path) -> Iterator[tuple[subprocess.Popen, dict]]:
    """The worker (``WORKER``) and what it printed once both watchers were told their sessions;
    SIGKILLed on exit."""
    with (folder / "worker.log").open("w") as log:
        worker = subprocess.Popen([sys.executable, "-c", WORKER, url], stdout=subprocess.PIPE, stderr=log,
                                  text=True, cwd=folder)
        try:
            yield worker, json.loads(worker.stdout.readline())
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait()


@pytest.mark.slow  # three Connect clients: about 30 s on two shared cores
def test_a_worker_killed_with_sigkill_has_its_sessions_closed_by_either_watcher(spark_connect_server, tmp_path):
    url = spark_connect_server.url
    with _worker(url, tmp_path) as (worker, started):
        watchers = _watchers(worker.pid)
        assert set(watchers) == {"forked", "spawned"}, watchers
        forked, spawned = watchers["forked"], watchers["spawned"]
        assert "contract_gate.runners.connect_fence" in spawned.cmdline()
        for watcher in (forked, spawned):  # detached: a kill of the worker's group misses it
            assert os.getsid(watcher.pid) == watcher.pid != os.getsid(worker.pid)
        # the forked watcher holds nothing of the worker's (its pipes to a supervisor, its logs)
        names = {Path(f.path).name for f in forked.open_files()}
        assert names <= {"null"}, names
        assert {c.fd for c in forked.net_connections("all")} == set()
        assert len(os.listdir(f"/proc/{forked.pid}/fd")) == 4  # stdin, stdout, stderr on /dev/null; its pipe
        forked.send_signal(signal.SIGTERM)  # the worker's handler would ignore it: the default ends the watcher
        wait_until(lambda: _ended(forked), timeout=30,
                   message="the forked watcher ended by SIGTERM (default handling)")
    # the spawned watcher, alone now, ends its session once its worker is gone
    wait_until(lambda: _ended(spawned), timeout=120, message="the spawned watcher done")
    assert _attach(url, started["sessions"]["spawned"]) == "closed"


@pytest.mark.slow
def test_the_forked_watcher_closes_its_session_when_its_worker_dies(spark_connect_server, tmp_path):
    url = spark_connect_server.url
    with _worker(url, tmp_path) as (worker, started):
        forked = _watchers(worker.pid)["forked"]
        assert _attach(url, started["sessions"]["forked"]) == "open"
    killed = time.monotonic()
    wait_until(lambda: _ended(forked), timeout=60, message="the forked watcher done")
    print(f"forked watcher: worker SIGKILL to its sessions ended: {time.monotonic() - killed:.1f} s")
    assert _attach(url, started["sessions"]["forked"]) == "closed"
