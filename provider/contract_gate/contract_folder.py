"""The contract files of a folder, each compiled once per version of its file.

The DAG factory, the pages and the CLI read contracts through here, so one process compiles a
file once whichever of them asks first (milliseconds, no Spark, no Airflow).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contract_gate.contract.compiler import CompiledContract


def contract_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.y*ml") if p.suffix in (".yaml", ".yml") and p.is_file())


def compiled(contract: str | Path, env: str | None = None) -> CompiledContract:
    """The contract file compiled as it is now, object by object; raises its ``ContractError``."""
    path = Path(contract).resolve()
    # a missing file gets no key of its own: the loader then says what is wrong with it
    return _compile(str(path), env, path.stat().st_mtime_ns if path.is_file() else -1)


@functools.lru_cache(maxsize=512)
def _compile(path: str, env: str | None, mtime_ns: int) -> CompiledContract:  # the mtime makes an edited file a new key
    # the compiler loads pydantic and the ODCS schema: a mere listing (dags/contract_gates.py) needs neither
    from contract_gate.contract.compiler import compile_plans

    return compile_plans(path, env=env)
