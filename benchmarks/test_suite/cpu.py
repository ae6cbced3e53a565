"""Where the test suite's CPU goes: runs ``scripts/test.sh`` (arguments after ``--`` go to it)
under Linux process accounting and prints the machine's busy CPU seconds beside the wall time,
then the CPU of every process that ended, by kind (Java, Python, browser, PostgreSQL), the
longest-lived Java processes and the short ones.

    sudo apt-get install acct     # accton and dump-acct; run as root
    .venv/bin/python benchmarks/test_suite/cpu.py [-- -m "not slow and not reliability"]

Accounting writes a record when a process ends, with the name of its last thread: a JVM ends as
``Signal Dispatch``, ``Reference Handl``..., a Python process with pyarrow or deltalake loaded as
``jemalloc_bg_thd`` or ``tokio-rt-worker``. So a process is Python by those names, and Java when
it is none of the others and mapped over 500 MB (every JVM maps its heap reservation)."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYTHON = re.compile(r"python|jemalloc_bg_thd|tokio-rt-worker|airflow|contract-gate|lint-imports|event_engine|"
                    r"grpc_global_tim|lifeguard")
BROWSER = re.compile(r"chrom|ThreadPoolForeg|sandbox_ipc|HangWatcher|node|libuv|inotify_reader")
JVM_MAPPED_KB = 500_000
SHORT_JVM_SECONDS = 30  # CPU seconds: a gate job or a test's own server, not a shared session


def busy_and_idle() -> tuple[float, float]:
    """The machine's busy and idle CPU seconds since boot (``/proc/stat``, steal counted busy)."""
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / 100, (idle + iowait) / 100


def records(accounting: Path) -> list[tuple[str, float, float, int]]:
    """(name, CPU seconds, seconds alive, KB mapped) of each ended process (``dump-acct``)."""
    out = subprocess.run(["dump-acct", str(accounting)], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        fields = [field.strip() for field in line.split("|")]
        rows.append((fields[0], (float(fields[2]) + float(fields[3])) / 100, float(fields[4]) / 100,
                     int(float(fields[7]))))
    return rows


def kind(name: str, mapped_kb: int) -> str:
    if PYTHON.search(name):
        return "Python"
    if BROWSER.search(name):
        return "browser"
    if name.startswith("postgres"):
        return "PostgreSQL"
    return "Java" if mapped_kb > JVM_MAPPED_KB else "other"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("test_args", nargs="*", help="arguments of scripts/test.sh (after --)")
    args = parser.parse_args()
    for tool in ("accton", "dump-acct"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing: install the acct package (apt-get install acct) and run as root")
    with tempfile.TemporaryDirectory() as folder:
        accounting = Path(folder) / "pacct"
        accounting.touch()
        subprocess.run(["accton", str(accounting)], check=True, capture_output=True)
        busy, idle, started = *busy_and_idle(), time.monotonic()
        try:
            status = subprocess.run(["bash", "scripts/test.sh", *args.test_args], cwd=REPO).returncode
        finally:
            wall = time.monotonic() - started
            busy_after, idle_after = busy_and_idle()
            time.sleep(5)  # the last JVMs end after pytest does
            subprocess.run(["accton", "off"], check=True, capture_output=True)
        ended = records(accounting)

    print(f"\nscripts/test.sh exited {status}: wall {wall:.0f} s, busy CPU {busy_after - busy:.0f} s, "
          f"idle CPU {idle_after - idle:.0f} s (two cores give {2 * wall:.0f} s)")
    by_kind: dict[str, list[float]] = defaultdict(list)
    java = []
    for name, cpu, alive, mapped in ended:
        by_kind[kind(name, mapped)].append(cpu)
        if kind(name, mapped) == "Java":
            java.append((cpu, alive))
    total = sum(cpu for _, cpu, _, _ in ended)
    print(f"CPU of the processes that ended: {total:.0f} s")
    for name, cpus in sorted(by_kind.items(), key=lambda item: -sum(item[1])):
        print(f"  {name:<11} {sum(cpus):8.0f} s  {100 * sum(cpus) / total:5.1f}%  {len(cpus):6d} processes")
    short = [cpu for cpu, _ in java if cpu < SHORT_JVM_SECONDS]
    print(f"Java processes under {SHORT_JVM_SECONDS} CPU-s: {len(short)}, {sum(short):.0f} s, "
          f"{sum(short) / max(len(short), 1):.1f} s each")
    print("the longest-running Java processes (CPU s, alive s):")
    for cpu, alive in sorted(java, reverse=True)[:6]:
        print(f"  {cpu:8.0f} {alive:8.0f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
