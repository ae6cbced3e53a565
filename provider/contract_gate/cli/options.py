"""Options several sub-commands share, spelled and behaving the same in each.

``--json`` prints one JSON document on stdout (and an error as ``{"error": ...}``);
``--input-format`` names the format of the data a command reads, with ``--format`` kept as a
deprecated alias; ``--verbose`` lets Airflow's, Spark's and the gate's log lines through.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator, Sequence


class _DeprecatedAlias(argparse.Action):
    """Stores into the new option's destination and says which option to use instead."""

    def __init__(self, option_strings: Sequence[str], dest: str, replacement: str = "", **kwargs: Any) -> None:
        self.replacement = replacement
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"contract-gate: {option_string} is deprecated and will be removed; use {self.replacement}",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_input_format(parser: argparse.ArgumentParser, choices: Sequence[str], default: str | None,
                     help: str) -> None:
    parser.add_argument("--input-format", dest="input_format", choices=choices, default=default, help=help)
    parser.add_argument("--format", dest="input_format", choices=choices, action=_DeprecatedAlias,
                        replacement="--input-format", help="deprecated alias of --input-format")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")


def add_verbose(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--verbose", action="store_true", help="show Airflow's, Spark's and the gate's log lines")


def print_json(document: Any) -> None:
    print(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False, default=str))


def report_error(args: argparse.Namespace, message: str) -> None:
    """An error that stopped the command: as JSON on stdout with ``--json``, else on stderr."""
    if getattr(args, "json", False):
        print_json({"error": message})
    else:
        print(message, file=sys.stderr)


@contextmanager
def configured_logging(verbose: bool) -> Iterator[None]:
    """Log records reach the terminal only with ``--verbose``. Without a handler, Python would
    print warnings raw on stderr (its last resort); a null handler on the root keeps them out.
    Airflow, when the command imports it, installs a handler of its own: below WARNING it logs
    nothing (set before its first import, which reads its configuration once; put back after,
    for a process that runs more than one command)."""
    root = logging.getLogger()
    if verbose:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        yield
        return
    if not root.handlers:
        root.addHandler(logging.NullHandler())
    global _quieted
    saved = os.environ.get(_AIRFLOW_LEVEL)
    os.environ.setdefault(_AIRFLOW_LEVEL, "WARNING")
    _quieted = saved is None
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(_AIRFLOW_LEVEL, None)
        _quieted = False


def callers_environment() -> dict[str, str]:
    """The environment the caller gave this command, for the processes it starts that outlive it
    (``airflow up``'s components): without the logging level it set for itself, which would
    leave their task logs without a line below WARNING."""
    environment = dict(os.environ)
    if _quieted:
        environment.pop(_AIRFLOW_LEVEL, None)
    return environment


_AIRFLOW_LEVEL = "AIRFLOW__LOGGING__LOGGING_LEVEL"
_quieted = False  # configured_logging set _AIRFLOW_LEVEL (the caller did not)
