"""Warm the Delta Lake jar cache before the first gate runs: ``python -m contract_gate_spark.runtime.jars``.

The first local session resolves ``io.delta:delta-spark`` from Maven Central through Ivy,
which takes a while and needs the network; doing it at install time keeps the first DAG run
fast and surfaces a network problem where it can be fixed. Where Ivy cannot reach Maven
Central (a proxy Ivy does not honour, say) the jars are copied with ``mvn dependency:copy``
into ``.jars/`` instead, and ``contract_gate_spark.runtime.session`` then uses them through ``spark.jars``.

``--resolve-only`` fetches the jars without the Delta round trip that proves they load, for an
install whose next step proves it anyway (scripts/install.sh: the class archive build runs a
miniature gate on Delta tables).

Only delta-spark and delta-storage are copied: every other class Delta needs for path-based
and catalog tables (antlr4-runtime, Hadoop, Jackson, Parquet) ships inside pyspark's own jars.

``--s3a`` fetches Hadoop's S3A connector instead (``contract_gate_spark.runtime.s3a_jars``: hadoop-aws and
the AWS SDK bundle, about 690 MB), for gates whose tables are in S3; the Maven fallback copies it
into ``.jars/s3a/``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyspark

from contract_gate_spark.runtime import install_log, s3a_jars
from contract_gate_spark.runtime.session import DELTA_PACKAGE, get_session, jars_dir, local_jars

MAVEN_ARTIFACTS = (DELTA_PACKAGE, "io.delta:delta-storage:4.4.0")
SMOKE_TIMEOUT_SECONDS = 600
SMOKE_STEP = "delta-round-trip"


def smoke() -> None:
    """Start a local session and round-trip a Delta table: proves the jars load and work."""
    spark = get_session("contract-gate-jars", {"spark.ui.enabled": "false"})
    with tempfile.TemporaryDirectory() as folder:
        spark.range(3).write.format("delta").save(folder)
        rows = spark.read.format("delta").option("versionAsOf", 0).load(folder).count()
    spark.stop()
    if rows != 3:
        raise RuntimeError(f"Delta smoke test read {rows} rows, expected 3")


def smoke_in_subprocess() -> bool:
    """Run ``smoke`` in a fresh Python so a failed JVM launch leaves this process clean; a failure
    is printed with the end of its log."""
    try:
        done = install_log.run_logged(
            [sys.executable, "-c", "from contract_gate_spark.runtime.jars import smoke; smoke()"],
            SMOKE_STEP, timeout=SMOKE_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        print(install_log.failure(f"the Delta round trip took over {SMOKE_TIMEOUT_SECONDS} s", SMOKE_STEP), file=sys.stderr)
        return False
    if done.returncode != 0:
        print(install_log.failure(f"the Delta round trip failed (exit code {done.returncode})", SMOKE_STEP), file=sys.stderr)
    return done.returncode == 0


def fetch_step(package: str) -> str:
    """The install log's name for fetching ``package`` (``group:artifact:version``)."""
    return f"fetch-{package.split(':')[1]}"


def resolve_in_subprocess(package: str = DELTA_PACKAGE) -> bool:
    """Fetch ``package`` (default Delta's jars) into the Ivy cache without starting Spark:
    ``spark-submit --packages`` resolves it, then runs a script that only exits (seconds, where
    ``smoke`` takes a minute on a small machine). Whether they load is then for the caller to prove.
    A failure is printed with the end of its log (the caller then tries Maven)."""
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    step = fetch_step(package)
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "resolved.py"
        script.write_text("")
        try:
            done = install_log.run_logged([str(spark_submit), "--packages", package, str(script)], step,
                                          env={**os.environ, "PYSPARK_PYTHON": sys.executable}, cwd=folder,
                                          timeout=SMOKE_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            print(install_log.failure(f"Ivy took over {SMOKE_TIMEOUT_SECONDS} s to fetch {package}", step), file=sys.stderr)
            return False
    if done.returncode != 0:
        print(install_log.failure(f"Ivy could not fetch {package} (exit code {done.returncode})", step), file=sys.stderr)
    return done.returncode == 0


def copy_with_maven(artifacts: tuple[str, ...] = MAVEN_ARTIFACTS, target: Path | None = None) -> None:
    """Copy ``artifacts`` (default the Delta jars) from Maven Central into ``target`` (default
    ``jars_dir()``) with ``mvn``."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError(f"Ivy could not resolve {artifacts[0]} and `mvn` is not installed")
    target = target or jars_dir()
    target.mkdir(parents=True, exist_ok=True)
    for artifact in artifacts:
        subprocess.run(
            [
                mvn,
                "--batch-mode",
                "--quiet",
                "dependency:copy",
                f"-Dartifact={artifact}",
                f"-DoutputDirectory={target}",
            ],
            check=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contract_gate_spark.runtime.jars", description=__doc__)
    parser.add_argument(
        "--maven", action="store_true", help="skip Ivy and copy the jars with mvn straight away"
    )
    parser.add_argument(
        "--resolve-only", action="store_true",
        help="fetch the jars through Ivy without the Delta round trip (when the next step proves they load)",
    )
    parser.add_argument(
        "--s3a", action="store_true",
        help="fetch Hadoop's S3A connector (hadoop-aws and the AWS SDK bundle) instead of Delta's jars",
    )
    args = parser.parse_args(argv)
    if args.s3a:
        return fetch_s3a(maven=args.maven)
    if not args.maven:
        if local_jars():
            print(f"Delta Lake jars ready ({jars_dir()})")
            return 0
        if args.resolve_only and resolve_in_subprocess():
            print("Delta Lake jars fetched (Ivy cache)")
            return 0
        if not args.resolve_only and smoke_in_subprocess():
            print("Delta Lake jars ready (Ivy cache)")
            return 0
    print(f"copying {', '.join(MAVEN_ARTIFACTS)} with mvn into {jars_dir()}", file=sys.stderr)
    copy_with_maven()
    if not smoke_in_subprocess():
        print("Delta Lake jars copied but a local session still cannot use them", file=sys.stderr)
        return 1
    print(f"Delta Lake jars ready ({jars_dir()})")
    return 0


def fetch_s3a(*, maven: bool) -> int:
    """The S3A connector into the Ivy cache, else (or with ``maven``) into ``.jars/s3a/``. Whether
    it loads is proved by the first gate that reads S3, so nothing is started here."""
    if s3a_jars.jars_on_disk(jars_dir()):
        print(f"S3A connector jars ready ({s3a_jars.HADOOP_AWS_PACKAGE})")
        return 0
    if not maven and resolve_in_subprocess(s3a_jars.HADOOP_AWS_PACKAGE) and s3a_jars.jars_on_disk(jars_dir()):
        print(f"S3A connector jars fetched (Ivy cache {s3a_jars.ivy_jars_dir()})")
        return 0
    target = s3a_jars.maven_dir(jars_dir())
    print(f"copying {', '.join(s3a_jars.ARTIFACTS)} with mvn into {target}", file=sys.stderr)
    copy_with_maven(s3a_jars.ARTIFACTS, target)
    if not s3a_jars.jars_on_disk(jars_dir()):
        print(f"the S3A connector jars are still missing from {target}", file=sys.stderr)
        return 1
    print(f"S3A connector jars ready ({target})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
