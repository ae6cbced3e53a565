"""The one line an error that stopped a command prints: what and where, and what to do next.

The traceback, and Spark's or Airflow's pages of output, are for ``--verbose``; a newcomer acts
on the first sentence.
"""

from __future__ import annotations

from contract_gate.contract.errors import ContractError

VERBOSE_HINT = "run again with --verbose for the details"


def one_line(exc: BaseException) -> str:
    """``exc`` as one line: a contract error's first issue (file, line, YAML path) and how to
    list the rest; otherwise the first line of the message."""
    if isinstance(exc, ContractError) and exc.issues:
        more = len(exc.issues) - 1
        return str(exc.issues[0]) + (f" (and {more} more: contract-gate lint {exc.file})" if more else "")
    if isinstance(exc, ContractError):
        return str(exc).splitlines()[0]
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return text or type(exc).__name__
