"""Warm the Delta Lake jar cache before the first gate runs: ``python -m spark_jobs.runtime.jars``.

The first local session resolves ``io.delta:delta-spark`` from Maven Central through Ivy,
which takes a while and needs the network; doing it at install time keeps the first DAG run
fast and surfaces a network problem where it can be fixed. Where Ivy cannot reach Maven
Central (a proxy Ivy does not honour, say) the jars are copied with ``mvn dependency:copy``
into ``.jars/`` instead, and ``spark_jobs.runtime.session`` then uses them through ``spark.jars``.

``--resolve-only`` fetches the jars without the Delta round trip that proves they load, for an
install whose next step proves it anyway (scripts/install.sh: the class archive build runs a
miniature gate on Delta tables).

Only delta-spark and delta-storage are copied: every other class Delta needs for path-based
and catalog tables (antlr4-runtime, Hadoop, Jackson, Parquet) ships inside pyspark's own jars.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from spark_jobs.runtime.session import DELTA_PACKAGE, get_session, jars_dir, local_jars

MAVEN_ARTIFACTS = (DELTA_PACKAGE, "io.delta:delta-storage:4.4.0")
SMOKE_TIMEOUT_SECONDS = 600


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
    """Run ``smoke`` in a fresh Python so a failed JVM launch leaves this process clean."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from spark_jobs.runtime.jars import smoke; smoke()"],
            timeout=SMOKE_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def resolve_in_subprocess() -> bool:
    """Fetch Delta's jars into the Ivy cache without starting Spark: ``spark-submit --packages``
    resolves them, then runs a script that only exits (seconds, where ``smoke`` takes a minute
    on a small machine). Whether they load is then for the caller to prove."""
    import pyspark

    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "resolved.py"
        script.write_text("")
        try:
            done = subprocess.run([str(spark_submit), "--packages", DELTA_PACKAGE, str(script)],
                                  env={**os.environ, "PYSPARK_PYTHON": sys.executable}, cwd=folder,
                                  timeout=SMOKE_TIMEOUT_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            return False
    return done.returncode == 0


def copy_with_maven() -> None:
    """Copy the Delta jars from Maven Central into ``jars_dir()`` with ``mvn``."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError("Ivy could not resolve Delta Lake and `mvn` is not installed")
    target = jars_dir()
    target.mkdir(parents=True, exist_ok=True)
    for artifact in MAVEN_ARTIFACTS:
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
    parser = argparse.ArgumentParser(prog="python -m spark_jobs.runtime.jars", description=__doc__)
    parser.add_argument(
        "--maven", action="store_true", help="skip Ivy and copy the jars with mvn straight away"
    )
    parser.add_argument(
        "--resolve-only", action="store_true",
        help="fetch the jars through Ivy without the Delta round trip (when the next step proves they load)",
    )
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
