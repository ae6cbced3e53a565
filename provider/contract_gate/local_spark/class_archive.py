"""A class-data-sharing (AppCDS) archive that makes every local gate job's JVM start faster.

A gate job is a short JVM: on a small worker a large share of its run is loading, verifying
and linking the same ~20,000 Spark and Delta classes. The JVM can write the classes it loaded
into an archive at exit (``-XX:ArchiveClassesAtExit``) and map that archive at the next start
(``-XX:SharedArchiveFile``). ``python -m contract_gate.local_spark.class_archive`` builds it once,
at install time, by running a miniature gate (``spark_jobs/contract_gate_spark/commands/class_archive_workload.py``)
through the local jobs' own ``spark-submit`` command line (:mod:`contract_gate.local_spark.submit`); from then on the local runner
passes the archive to every job.

The archive is only an accelerator: a JVM of another build, or a class path that changed
since (another pyspark or Delta jar), makes the JVM ignore it and load classes as usual.
``CONTRACT_GATE_CLASS_ARCHIVE`` moves it; set it to ``off`` to run without one.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import os
import sys
import tempfile
import time
from pathlib import Path

from contract_gate.local_spark.installation import delta_jars_on_disk, spark_home, spark_package_folder
from contract_gate.local_spark.submit import local_start_conf, submit_argv, submit_environment
from contract_gate_spark.runtime.install_log import cache_folder, failure, run_logged

ARCHIVE_ENV = "CONTRACT_GATE_CLASS_ARCHIVE"
BUILD_STEP = "class-archive"


def archive_path() -> Path | None:
    """Where the archive is (or would be built); None when switched off."""
    configured = os.environ.get(ARCHIVE_ENV)
    if configured and configured.strip().lower() == "off":
        return None
    if configured:
        return Path(configured)
    # Named after the class path it was built for: another installation (another virtualenv,
    # other jars) gets an archive of its own instead of overwriting this one.
    class_path = hashlib.sha256("\n".join([str(spark_home()), *delta_jars_on_disk()]).encode()).hexdigest()[:12]
    return cache_folder() / f"spark-{importlib.metadata.version('pyspark')}-{class_path}.jsa"


def java_options() -> str:
    """The JVM option that maps the archive, or "" when there is none to map."""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path}" if path is not None and path.is_file() else ""


def workload_script() -> Path:
    return spark_package_folder() / "commands" / "class_archive_workload.py"


def build(path: Path | None = None) -> Path:
    """Run the miniature gate with ``-XX:ArchiveClassesAtExit`` and move the archive to ``path``."""
    path = path or archive_path()
    if path is None:
        raise RuntimeError(f"{ARCHIVE_ENV}=off: no class archive to build")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="contract-gate-class-archive-") as scratch:
        partial = Path(scratch) / "classes.jsa"
        # -Xlog:cds=off: the dump lists every class it cannot archive (generated, signed-jar), by design
        conf = local_start_conf(Path(scratch), spark_conf={
            "spark.driver.extraJavaOptions": f"-XX:ArchiveClassesAtExit={partial} -Xlog:cds=off -Xlog:cds+dynamic=off"})
        argv = submit_argv(workload_script(), [str(Path(scratch) / "gate")], conf, "contract-gate class archive")
        done = run_logged(argv, BUILD_STEP, env=submit_environment(), cwd=scratch)
        if done.returncode != 0:
            raise RuntimeError(failure(f"the class archive workload failed with exit code {done.returncode}", BUILD_STEP))
        if not partial.is_file():
            raise RuntimeError("the JVM wrote no class archive (does this JVM support -XX:ArchiveClassesAtExit?)")
        os.replace(partial, path)  # atomic: a concurrent job maps the old archive or the new one
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contract_gate.local_spark.class_archive",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, help=f"where to write it (default: ${ARCHIVE_ENV} or ~/.cache)")
    parser.add_argument("--if-missing", action="store_true",
                        help="keep an archive already built for this class path (it is named after it)")
    args = parser.parse_args(argv)
    existing = args.path or archive_path()
    if args.if_missing and existing is not None and existing.is_file():
        print(f"class archive for local gate jobs: {existing} (already built for this class path)")
        return 0
    started = time.perf_counter()
    try:
        path = build(args.path)
    except RuntimeError as error:
        print(f"class archive for local gate jobs: {error}", file=sys.stderr)
        return 1
    print(f"class archive for local gate jobs: {path} ({path.stat().st_size / 2**20:.0f} MiB, "
          f"built in {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
