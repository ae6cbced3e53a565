"""The Spark-side entry point, runnable as a file under ``spark-submit`` or as a module::

    spark-submit spark_jobs/contract_gate_spark/commands/gate_job.py validate --plan plan.json --candidate lakehouse/x \\
        [--format delta|parquet|csv|json] [--version N] --report out.json

Sub-commands live in ``contract_gate_spark.commands`` (one module each, discovered here). Steps can
be chained in one JVM with ``+`` (``gate_job.py stage+validate ...``): each step parses the
arguments it knows from the same command line, they run in order in one session, sharing
``args.context`` (a dict where each step leaves its result under its own name), and the
chain stops at the first step that does not exit 0. A step may start its work early, beside
the step before it (an ``ahead(args)`` default, called when that step starts): ``batch_keys``
counts the target's keys while ``validate`` runs (``contract_gate_spark.runtime.side_by_side``).

Exit codes: 0 the step completed (for ``validate``: whatever the outcome), 1 the step itself
failed, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make contract_gate_spark and contract_gate_plan importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from contract_gate_spark.runtime import job_start, task_watch  # noqa: E402

task_watch.watch_task()  # a job whose driver runs beside its task (local, spark_submit client mode) ends with it
if job_start.asked():
    job_start.prepare()

import contract_gate_spark.commands  # noqa: E402
from contract_gate_spark.commands import warm_up  # noqa: E402
from contract_gate_spark.runtime.session import get_session  # noqa: E402

LOGGER = logging.getLogger("contract_gate.gate_job")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gate_job.py", description=__doc__.split("\n\n")[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in pkgutil.iter_modules(contract_gate_spark.commands.__path__):
        command = importlib.import_module(f"contract_gate_spark.commands.{module.name}")
        if hasattr(command, "register"):  # this module, the entry point, has none
            command.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0].startswith("-") or "+" not in argv[0]:
        steps = [parser.parse_args(argv)]
    else:
        steps = [parser.parse_known_args([step, *argv[1:]])[0] for step in argv[0].split("+")]
    context: dict = {}
    for args in steps:  # shared by the chain's steps (and its warm-up): one plan load per job
        args.context = context
    _warm_up(steps)
    for index, args in enumerate(steps):
        if index + 1 < len(steps):
            _start_ahead(steps[index + 1])
        code = _run(args)
        if code != 0:
            return code
    return 0


def _warm_up(steps: list[argparse.Namespace]) -> None:
    """Start loading the Delta tables the steps will read (``contract_gate_spark.commands.warm_up``): a step
    names them with a ``tables_read(args)`` default, as ``[(address, version or None)]``. Only
    where the runner asks for it (``job_start.LOCAL_START_ENV``). Never fails the job: a step that
    cannot name its tables fails on its own, with its own error."""
    if not job_start.asked():
        return
    try:
        tables = [table for args in steps for table in getattr(args, "tables_read", lambda _: [])(args)]
    except Exception:  # noqa: BLE001 - see the docstring
        LOGGER.debug("no warm-up: the steps' tables could not be named", exc_info=True)
        return
    if tables:
        warm_up.load_snapshots(get_session(), tables)


def _start_ahead(args: argparse.Namespace) -> None:
    """Let the step start its work beside the one before it. Never fails the job: a step whose
    early start failed does its work at its own turn, where its own error is raised."""
    ahead = getattr(args, "ahead", None)
    if ahead is None:
        return
    try:
        ahead(args)
    except Exception:  # noqa: BLE001 - see the docstring
        LOGGER.debug("step %s could not start early", args.command, exc_info=True)


def _run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    try:
        code = int(args.func(args))
    except Exception:
        LOGGER.exception("gate_job %s failed", args.command)
        return 1
    LOGGER.info("gate_job step %s done in %.1f s", args.command, time.perf_counter() - started)
    return code


def run() -> None:
    """The job as a program: the file under spark-submit, and the ``contract-gate-job`` entry point
    of the Spark side's wheel (a Databricks ``python_wheel_task``, which calls it in its own
    process). Exits only on failure: on success it returns, like any entry point."""
    # What the job writes itself (reports, step results) is owner-only, whatever umask it was
    # started with; Hadoop sets the modes of the tables' files itself (contract_gate_plan.restricted).
    os.umask(0o077)
    code = main()
    if code:
        sys.exit(code)


if __name__ == "__main__":
    run()
