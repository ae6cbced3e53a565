"""Entry point of the ``contract-gate`` console script.

Exit codes shared by every sub-command: 0 ok, 1 the contract or the data failed, 2 usage error
or an error that stopped the command (unreadable file, crashed engine).
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Sub-command modules are imported lazily so that ``lint``/``plan`` never pay for pyspark or Airflow.
SUBCOMMANDS = ("lint", "plan", "validate", "run", "rerun", "status")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="contract-gate", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"contract_gate.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"contract_gate.cli.{name}_cmd":
                raise
            continue  # sub-command not shipped yet
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
