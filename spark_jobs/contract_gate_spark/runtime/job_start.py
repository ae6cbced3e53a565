"""What a script run by ``spark-submit`` does first, so that a short gate job starts fast.

A gate job on the local default is a fresh Python next to a fresh JVM, twice per submission, so
fixed start-up costs count. Two of them are pyspark's, not
Spark's, and :func:`prepare` removes them:

* ``spark-submit`` puts ``$SPARK_HOME/python/lib/pyspark.zip`` (and py4j's zip) first on the
  driver's ``PYTHONPATH``. Python caches no bytecode for modules imported from a zip, so every
  job compiled pyspark from source again. When ``SPARK_HOME`` is the pip-installed
  pyspark package itself (the local runner's case), the zip holds the same release as the
  package next to it, so the zips are moved behind the package's folder. On a cluster, whose
  ``SPARK_HOME`` is a Spark distribution of its own, nothing moves: there the zip is the code
  that matches the JVM.
* pyspark registers py4j converters for NumPy values, and the first call into the JVM asks them
  whether they apply; to answer, they import ``pyspark.testing``, which imports pandas and
  pyarrow. A gate job never hands NumPy values to the JVM, so they are unregistered.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_NUMPY_CONVERTERS = ("NumpyArrayConverter", "NumpyScalarConverter")

LOCAL_START_ENV = "CONTRACT_GATE_LOCAL_START"
"""Set to ``1`` by the local runner, and only there: its jobs run :func:`prepare` and load the
Delta snapshots their steps will read on a background thread (``contract_gate_spark.commands.warm_up``).
Off elsewhere: on a cluster the bundled pyspark zip is the code that matches the JVM, a running
cluster has warm snapshots of its own, and both aids were measured on the local default only."""


CONNECT_MODE_ENV = "SPARK_CONNECT_MODE_ENABLED"
"""PySpark's process-wide switch to its Spark Connect implementation (``pyspark.sql.functions``
and the DataFrame API dispatch on it); a process is then a Connect client, it holds no JVM. It
stays set after a Connect session in the process, so a runner that starts a classic driver from
that process leaves it out of the driver's environment."""

CONNECT_CLIENT_ENV = ("SPARK_REMOTE", CONNECT_MODE_ENV)
"""What pyspark leaves in the environment of a process that was a Spark Connect client: a process
that starts a classic driver or a server of its own from it leaves them out."""


def asked() -> bool:
    """Whether the runner that started this job asked for the local start-up aids."""
    return os.environ.get(LOCAL_START_ENV) == "1"


def prepare() -> None:
    """Call before anything imports pyspark."""
    prefer_installed_pyspark()
    _drop_numpy_converters()


def prefer_installed_pyspark() -> None:
    """Move the zips of a pip-installed pyspark behind the folder that holds that package."""
    bundled = [entry for entry in sys.path if _packages_of_bundled_zip(entry) is not None]
    if not bundled:
        return
    packages = str(_packages_of_bundled_zip(bundled[0]))
    if packages not in sys.path:
        return
    for entry in bundled:
        sys.path.remove(entry)
    after = sys.path.index(packages) + 1
    sys.path[after:after] = bundled


def _packages_of_bundled_zip(entry: str) -> Path | None:
    """For ``<packages>/pyspark/python/lib/<name>.zip``: ``<packages>``, else None."""
    path = Path(entry)
    if path.suffix != ".zip" or len(path.parents) < 4:
        return None
    package = path.parents[2]
    if package.name != "pyspark" or not (package / "__init__.py").is_file():
        return None
    return package.parent


def _drop_numpy_converters() -> None:
    try:
        # py4j and pyspark only once prefer_installed_pyspark() has put the installed package first:
        # a job imports this module before pyspark, so that neither loads from spark-submit's zips
        from py4j import protocol
    except ImportError:  # a Spark Connect-only client talks to no local JVM: no converters
        return
    import pyspark.sql.types  # noqa: F401 - registers the converters this removes (imported late: as above)

    protocol.INPUT_CONVERTER[:] = [
        converter for converter in protocol.INPUT_CONVERTER if type(converter).__name__ not in _NUMPY_CONVERTERS
    ]
