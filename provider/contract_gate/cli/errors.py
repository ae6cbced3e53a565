"""The one line an error that stopped a command prints: what and where, and what to do next.

The traceback, and Spark's or Airflow's pages of output, are for ``--verbose``; a newcomer acts
on the first sentence.
"""

from __future__ import annotations

from contract_gate.contract.errors import ContractError

VERBOSE_HINT = "run again with --verbose for the details"
# The extra that installs a package a command imports (pyproject.toml's optional dependencies).
EXTRA_OF = {"pyspark": "spark", "delta": "spark", "pandas": "spark", "rich": "spark", "airflow": "airflow",
            "deltalake": "airflow", "pyarrow": "airflow", "databricks": "airflow"}


def one_line(exc: BaseException) -> str:
    """``exc`` as one line: a contract error's first issue (file, line, YAML path) and how to
    list the rest; otherwise the first line of the message."""
    if isinstance(exc, ContractError) and exc.issues:
        more = len(exc.issues) - 1
        return str(exc.issues[0]) + (f" (and {more} more: contract-gate lint {exc.file})" if more else "")
    if isinstance(exc, ContractError):
        return str(exc).splitlines()[0]
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return missing_package(exc.name)
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return text or type(exc).__name__


def missing_package(module: str) -> str:
    """What to install for a package that is not there."""
    package = module.split(".")[0]
    extra = EXTRA_OF.get(package)
    where = f"pip install 'airflow-provider-contract-gate[{extra}]'" if extra else f"install {package}"
    return f"this command needs {package}, which is not installed: {where}"
