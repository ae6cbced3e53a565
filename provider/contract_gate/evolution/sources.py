"""The two contract versions a diff compares: a file, or ``path@gitref`` read from git.

A version at a git ref is read with ``git`` itself, run in the file's own repository (the
nearest folder of the path that exists), so ``contracts/orders.yaml@HEAD~1`` means the file as
that commit had it. The blob is size-checked before it is read, like a contract file.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from contract_gate.contract.compiler import compile_plans
from contract_gate.contract.loader import MAX_CONTRACT_BYTES, LoadedContract, load_contract, load_contract_text
from contract_gate_plan.model import Plan


class SourceError(ValueError):
    """A version that cannot be read: no such file, ref or path in that ref, or no git."""


def load_version(spec: str) -> LoadedContract:
    """The contract named by ``spec``: a file, or ``path@ref`` (a file whose name contains ``@``
    is read as that file). Raises :class:`SourceError` or ``ContractError``."""
    if Path(spec).is_file() or "@" not in spec:
        if not Path(spec).is_file():
            raise SourceError(f"no such file: {spec}")
        return load_contract(spec)
    path, _, ref = spec.rpartition("@")
    if not path or not ref:
        raise SourceError(f"{spec!r}: give a file, or path@gitref such as contracts/orders.yaml@HEAD~1")
    if ref.startswith("-"):  # never an option of git
        raise SourceError(f"{spec!r}: a git ref does not start with '-'")
    return load_contract_text(_blob(Path(path), ref, spec), spec)


def compiled_objects(loaded: LoadedContract, env: str | None) -> dict[str, Plan]:
    """schema object name -> its compiled plan, for every object of the contract. Raises ``ContractError``."""
    return compile_plans(loaded, env).plans


def _blob(path: Path, ref: str, spec: str) -> str:
    folder = path.parent if path.parent != Path("") else Path(".")
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    relative = path.resolve().relative_to(folder.resolve())
    if not _git(folder, "rev-parse", "--is-inside-work-tree").returncode == 0:
        raise SourceError(f"{spec!r}: {folder} is not inside a git repository")
    if _git(folder, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").returncode != 0:
        raise SourceError(f"{spec!r}: no commit {ref!r} in the repository of {folder}")
    name = f"{ref}:./{relative.as_posix()}"
    found = _git(folder, "rev-parse", "--verify", "--quiet", "--end-of-options", name)
    if found.returncode != 0 or _git(folder, "cat-file", "-t", found.stdout.strip()).stdout.strip() != "blob":
        raise SourceError(f"{spec!r}: commit {ref!r} has no file {relative.as_posix()}")
    blob = found.stdout.strip()
    size = int(_git(folder, "cat-file", "-s", blob).stdout.strip())
    if size > MAX_CONTRACT_BYTES:
        raise SourceError(f"{spec!r}: the file is larger than {MAX_CONTRACT_BYTES:,} bytes, the limit for a contract")
    data = subprocess.run(["git", "-C", str(folder), "cat-file", "blob", blob], capture_output=True, check=False).stdout
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{spec!r}: the file is not UTF-8 text: {exc}") from exc


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise SourceError("git is not installed: path@ref needs it") from exc
