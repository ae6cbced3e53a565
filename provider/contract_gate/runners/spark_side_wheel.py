"""The Spark side as one wheel, for a cluster or serverless environment to install.

The wheel holds the installed ``contract_gate_spark`` and ``contract_gate_plan`` packages (the
job's code and the plan it reads) with a console-script entry point, ``contract-gate-job``
(``contract_gate_spark.commands.gate_job:run``), for a ``python_wheel_task``. It requires the
``sqlglot`` this side has (the allow-list of contract SQL parses with it); pyspark and Delta are
the runtime's.

The wheel is built in memory, byte for byte the same for the same files: entries in a fixed
order with a fixed time stamp. Its version is the provider's with a local label holding a digest
of its contents (``0.2.0+<digest>``), so a new provider version, or any change of the Spark side,
is a new file, and pip on a long-lived cluster sees a new version rather than the one it has.
A process builds it once per provider version (:func:`wheel_for`): the files it holds are the
installed packages, which do not change under a running worker.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import zipfile
from dataclasses import dataclass
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

DISTRIBUTION = "contract_gate_spark"
ENTRY_POINT = "contract-gate-job"
ENTRY_TARGET = "contract_gate_spark.commands.gate_job:run"
PACKAGES = ("contract_gate_spark", "contract_gate_plan")
_TIMESTAMP = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say: no build time in the bytes


@dataclass(frozen=True)
class SparkSideWheel:
    """A wheel file's name (``<distribution>-<version>-py3-none-any.whl``) and bytes."""

    filename: str
    data: bytes


def package_files() -> list[tuple[str, bytes]]:
    """``(path in the wheel, bytes)`` of every file of the Spark side's packages, sorted."""
    files = []
    for package in PACKAGES:
        spec = find_spec(package)  # found, not imported: this runs in the Airflow task
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError(f"package {package} is not installed: the Spark side cannot be deployed")
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in root.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.append((f"{package}/{path.relative_to(root).as_posix()}", path.read_bytes()))
    return sorted(files)


@functools.cache
def wheel_for(provider_version: str) -> SparkSideWheel:
    """This process's wheel of the Spark side for ``provider_version``, built on first use."""
    return build_wheel(provider_version)


def build_wheel(provider_version: str) -> SparkSideWheel:
    """The Spark side's wheel for ``provider_version`` (see the module doc)."""
    sqlglot = f"sqlglot=={version('sqlglot')}"
    files = package_files()
    digest = hashlib.sha256()
    for name, data in [*files, ("requires", sqlglot.encode())]:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    wheel_version = f"{provider_version}+{digest.hexdigest()[:16]}"
    info = f"{DISTRIBUTION}-{wheel_version}.dist-info"
    files += [
        (f"{info}/METADATA", (f"Metadata-Version: 2.1\nName: {DISTRIBUTION}\nVersion: {wheel_version}\n"
                              f"Summary: contract-gate's Spark side\nRequires-Dist: {sqlglot}\n").encode()),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: contract-gate\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{info}/entry_points.txt", f"[console_scripts]\n{ENTRY_POINT} = {ENTRY_TARGET}\n".encode()),
    ]
    record = "".join(f"{name},sha256={_record_hash(data)},{len(data)}\n" for name, data in files)
    files.append((f"{info}/RECORD", (record + f"{info}/RECORD,,\n").encode()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files:
            entry = zipfile.ZipInfo(name, _TIMESTAMP)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            wheel.writestr(entry, data)
    return SparkSideWheel(f"{DISTRIBUTION}-{wheel_version}-py3-none-any.whl", buffer.getvalue())


def _record_hash(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
