"""Which Java processes a command starts: the ``spark_connect`` mode and ``contract-gate validate
--remote`` must start none (a thin Spark Connect client), the local start must start one with the
local runner's settings. A Connect server under test is detached from the test's process
(``tests/connect_server.py``), so a Java process found below a command is one the command started."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psutil

from waiting import wait_until


def java_below(process: psutil.Process) -> dict[int, list[str]]:
    """Java processes descending from ``process`` (by executable name or command): pid -> command."""
    found = {}
    for child in process.children(recursive=True):
        try:
            command = child.cmdline()
            if child.name() == "java" or (command[:1] and command[0].endswith("/java")):
                found[child.pid] = command
        except psutil.Error:  # it ended while we looked
            continue
    return found


def run_watching_java(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 900
                      ) -> tuple[subprocess.CompletedProcess, dict[int, list[str]]]:
    """Run ``argv`` to its end, looking for Java processes below it on every poll; its output and
    every Java process seen."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        child = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env=env, cwd=cwd)
        process = psutil.Process(child.pid)
        java: dict[int, list[str]] = {}

        def ended() -> bool:
            java.update(java_below(process))
            return child.poll() is not None

        wait_until(ended, timeout=timeout, interval=0.1, message=f"{argv[:4]} ending")
    done = subprocess.CompletedProcess(argv, child.returncode, out.read_text(), err.read_text())
    return done, java
