"""Entry point of the ``contract-gate`` console script.

Exit codes shared by every sub-command: 0 ok, 1 the contract or the data failed, 2 usage error
or an error that stopped the command (unreadable file, crashed engine).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn
from importlib.metadata import PackageNotFoundError, version

from contract_gate import __version__
from contract_gate.cli.errors import VERBOSE_HINT, missing_package, one_line
from contract_gate.cli.options import configured_logging, report_error

SUBCOMMANDS = ("lint", "plan", "validate", "run", "rerun", "status", "dags", "report", "diff", "init", "preview",
               "audit", "airflow")


class _Parser(argparse.ArgumentParser):
    """A usage error is one line and where to look, not the whole usage block."""

    help_command = ""  # the sub-command whose --help to point at (an unknown option is the top parser's error)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.help_command or self.prog} --help`)\n")


def build_parser(only: str | None = None) -> _Parser:
    """The parser with every sub-command, or with ``only`` that one: a sub-command module may
    import Airflow or pyspark, and ``lint``/``plan`` must not pay for them."""
    parser = _Parser(prog="contract-gate", description=__doc__)
    parser.add_argument("--version", action="version", version=version_line())
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in (only,) if only else SUBCOMMANDS:
        try:
            command = importlib.import_module(f"contract_gate.cli.{name}_cmd")
        except ModuleNotFoundError as exc:  # an extra's package: the other commands still work
            if not exc.name or exc.name.split(".")[0] in ("contract_gate", "contract_gate_plan"):
                raise
            _unavailable(subparsers, name, missing_package(exc.name))
            continue
        command.register(subparsers)
    return parser


def _unavailable(subparsers: argparse._SubParsersAction, name: str, reason: str) -> None:
    """A command whose packages are not installed: listed, and running it says what to install."""
    parser = subparsers.add_parser(name, help=f"(not available: {reason})")
    parser.add_argument("arguments", nargs=argparse.REMAINDER)

    def refuse(args: argparse.Namespace) -> int:
        report_error(args, f"contract-gate {name}: {reason}")
        return 2

    parser.set_defaults(func=refuse)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:  # answered without importing every sub-command
        print(version_line())
        return 0
    chosen = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    parser = build_parser(chosen)
    if chosen:
        parser.help_command = f"contract-gate {chosen}"
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    verbose = getattr(args, "verbose", False)
    with configured_logging(verbose):
        try:
            return int(args.func(args))
        except Exception as exc:  # noqa: BLE001 - a failure no command foresaw still ends in one line and exit 2
            if verbose:
                raise
            report_error(args, f"contract-gate {args.command}: {one_line(exc)}; {VERBOSE_HINT}")
            return 2


def version_line() -> str:
    try:
        installed = version("airflow-provider-contract-gate")
    except PackageNotFoundError:  # run from a source tree that was never installed
        installed = __version__
    return f"contract-gate {installed}"


if __name__ == "__main__":
    sys.exit(main())
