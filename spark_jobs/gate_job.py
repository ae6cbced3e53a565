"""The Spark-side entry point, runnable as a file under ``spark-submit`` or as a module::

    spark-submit spark_jobs/gate_job.py validate --plan plan.json --candidate lakehouse/x \\
        [--format delta|parquet|csv|json] [--version N] --report out.json

Sub-commands live in ``spark_jobs.commands`` (one module each, discovered here). Exit codes:
0 the step completed (for ``validate``: whatever the outcome), 1 the step itself failed,
2 bad arguments.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the spark_jobs package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import spark_jobs.commands  # noqa: E402

LOGGER = logging.getLogger("contract_gate.gate_job")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gate_job.py", description=__doc__.split("\n\n")[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in pkgutil.iter_modules(spark_jobs.commands.__path__):
        command = importlib.import_module(f"spark_jobs.commands.{module.name}")
        if hasattr(command, "register"):
            command.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except Exception:
        LOGGER.exception("gate_job %s failed", args.command)
        return 1


if __name__ == "__main__":
    sys.exit(main())
