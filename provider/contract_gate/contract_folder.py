"""The contract files of a folder, each compiled once per version of its file.

The DAG factory, the pages and the CLI read contracts through here, so one process compiles a
file once whichever of them asks first (milliseconds, no Spark, no Airflow).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING

from contract_gate.contract.errors import ContractError, ContractIssue

if TYPE_CHECKING:
    from contract_gate.contract.compiler import CompiledContract


# The producer names the file, and its name reaches Python the sync writes (a stub's comment line) and
# the gate tasks' templated ``contract`` field, which Jinja renders against the task context: a
# newline or a quote would add code to the stub, and ``{{ conn.<id>.password }}`` would render a
# secret into a task's log. Letters, digits, '_', '-', '.' and spaces are all a contract file needs.
_FILE_NAME = re.compile(r"\w[\w .-]*\.ya?ml")


def check_file_name(path: Path) -> None:
    """Raise the contract's ``ContractError`` unless its file name is letters, digits, '_', '-', '.'
    and spaces, ending ``.yaml`` or ``.yml`` (every caller that names a broken contract names this
    one too, the name's control characters escaped)."""
    if not _FILE_NAME.fullmatch(path.name):
        shown = str(path).encode("unicode_escape").decode("ascii")
        raise ContractError(shown, [ContractIssue(shown, None, "", (
            "a contract file's name may hold letters, digits, '_', '-', '.' and spaces only (no quote, brace, "
            "percent sign or control character: it reaches generated DAG files and templated task fields); "
            "rename the file"))])


def contract_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.y*ml") if p.suffix in (".yaml", ".yml") and p.is_file())


def compiled(contract: str | Path, env: str | None = None) -> CompiledContract:
    """The contract file compiled as it is now, object by object; raises its ``ContractError`` (a
    file name the gate does not take included)."""
    path = Path(contract).resolve()
    check_file_name(path)
    # a missing file gets no key of its own: the loader then says what is wrong with it
    return _compile(str(path), env, path.stat().st_mtime_ns if path.is_file() else -1)


@functools.lru_cache(maxsize=512)
def _compile(path: str, env: str | None, mtime_ns: int) -> CompiledContract:  # the mtime makes an edited file a new key
    # the compiler loads pydantic and the ODCS schema: a mere listing (dags/contract_gates.py) needs neither
    from contract_gate.contract.compiler import compile_plans

    return compile_plans(path, env=env)
