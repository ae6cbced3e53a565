"""Hadoop's S3A connector (``s3a://``): its Maven coordinate and its jars on disk.

``hadoop-aws`` must be the version of the Hadoop inside pyspark (``pyspark/jars/hadoop-client-*``),
and it brings the AWS SDK v2 ``bundle`` it was built against (one jar of about 690 MB), the
analytics accelerator and wildfly-openssl. ``python -m contract_gate_spark.runtime.jars --s3a`` fetches
them once into the Ivy cache (or, with Maven, into ``.jars/s3a/``); a gate job puts them on its
class path only when its plan has an S3 address (``contract_gate.object_storage``), so a gate
without one never loads a 690 MB jar.

Standard library only: the local runner reads this module without starting Spark.
"""

from __future__ import annotations

import os
from pathlib import Path

HADOOP_VERSION = "3.5.0"
"""The Hadoop of pyspark 4.2.0's ``hadoop-client-api`` jar (a test keeps the two equal)."""

HADOOP_AWS_PACKAGE = f"org.apache.hadoop:hadoop-aws:{HADOOP_VERSION}"

# What hadoop-aws 3.5.0's POM resolves to (its compile and runtime scopes).
ARTIFACTS = (
    HADOOP_AWS_PACKAGE,
    "software.amazon.awssdk:bundle:2.35.4",
    "software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3:1.3.1",
    "org.wildfly.openssl:wildfly-openssl:2.2.5.Final",
)
IVY_JARS = tuple(f"{group}_{name}-{version}.jar" for group, name, version in (a.split(":") for a in ARTIFACTS))
MAVEN_JARS = tuple(f"{name}-{version}.jar" for _, name, version in (a.split(":") for a in ARTIFACTS))


def maven_dir(jars_dir: Path) -> Path:
    """The Maven fallback's folder: beside Delta's jars, but not in it (every session loads
    ``.jars/*.jar``)."""
    return jars_dir / "s3a"


def ivy_jars_dir() -> Path:
    return Path(os.environ.get("CONTRACT_GATE_IVY_JARS", Path.home() / ".ivy2.5.2" / "jars"))


def jars_on_disk(jars_dir: Path) -> list[str]:
    """The connector's jars from the Maven fallback's folder or the Ivy cache; [] when either
    lacks one of them."""
    for folder, names in ((maven_dir(jars_dir), MAVEN_JARS), (ivy_jars_dir(), IVY_JARS)):
        found = [folder / name for name in names]
        if all(path.is_file() for path in found):
            return [str(path) for path in found]
    return []
