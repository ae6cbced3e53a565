"""The class archive of local gate jobs: built from the miniature gate, mapped by every job."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from contract_gate.local_spark import class_archive
from contract_gate.runners.local import LocalRunner
from contract_gate_spark.runtime import jars
from contract_gate_spark.runtime.session import DELTA_PACKAGE, jars_dir

PROBE = "from pyspark.sql import SparkSession\nSparkSession.builder.getOrCreate().range(3).count()\n"


def _java_options(argv: list[str]) -> str:
    return next(a for a in argv if a.startswith("spark.driver.extraJavaOptions=")).split("=", 1)[1]


def test_the_runner_maps_the_archive_only_when_it_exists_and_is_wanted(tmp_path, monkeypatch):
    archive = tmp_path / "classes.jsa"
    monkeypatch.setenv(class_archive.ARCHIVE_ENV, str(archive))
    assert "SharedArchiveFile" not in _java_options(LocalRunner().submit_argv("job.py", [], tmp_path, "job"))
    archive.write_bytes(b"built")
    assert f"-XX:SharedArchiveFile={archive}" in _java_options(LocalRunner().submit_argv("job.py", [], tmp_path, "job"))
    assert "SharedArchiveFile" not in _java_options(
        LocalRunner(class_archive=False).submit_argv("job.py", [], tmp_path, "job"))
    monkeypatch.setenv(class_archive.ARCHIVE_ENV, "off")
    assert class_archive.archive_path() is None
    assert "SharedArchiveFile" not in _java_options(LocalRunner().submit_argv("job.py", [], tmp_path, "job"))


def test_if_missing_keeps_an_archive_built_for_this_class_path(tmp_path, monkeypatch, capsys):
    """The quick start asks for the archive after its demo on every run: built once, then kept
    (it is named after the class path, so other jars get an archive of their own)."""
    archive = tmp_path / "classes.jsa"
    archive.write_bytes(b"built before")
    monkeypatch.setenv(class_archive.ARCHIVE_ENV, str(archive))
    monkeypatch.setattr(class_archive, "build", lambda path=None: pytest.fail("rebuilt an archive that exists"))

    assert class_archive.main(["--if-missing"]) == 0
    assert archive.read_bytes() == b"built before" and "already built" in capsys.readouterr().out
    built = []
    monkeypatch.setattr(class_archive, "build", lambda path=None: built.append(path) or archive)
    assert class_archive.main([]) == 0 and built == [None]  # without the flag: built again


@pytest.mark.slow
def test_a_gate_job_loads_spark_and_delta_classes_from_the_archive(tmp_path, monkeypatch):
    """The archive the install built (or one built here, about a minute) is really used: the
    JVM's class-load log says Spark's and Delta's classes came from the shared archive."""
    archive = class_archive.archive_path()
    if archive is None or not archive.is_file():
        archive = class_archive.build(tmp_path / "classes.jsa")
    monkeypatch.setenv(class_archive.ARCHIVE_ENV, str(archive))
    script, loads = tmp_path / "probe.py", tmp_path / "class-load.log"
    script.write_text(PROBE + "spark = SparkSession.getActiveSession()\n"
                      "spark.sql('SELECT 1').write.format('delta').save(%r)\n" % str(tmp_path / "t"), encoding="utf-8")
    runner = LocalRunner(cwd=str(tmp_path), spark_conf={
        "spark.driver.extraJavaOptions": f"-Xlog:class+load=info:file={loads}"})
    done = subprocess.run(runner.submit_argv(script, [], tmp_path, "probe"), env=runner.environment(),
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    shared = [line for line in loads.read_text().splitlines() if "shared objects file" in line]
    assert any("org.apache.spark.sql.SparkSession " in line for line in shared)
    assert any("org.apache.spark.sql.delta.DeltaLog " in line for line in shared)


def test_the_miniature_gate_plan_passes_the_spark_side_checks(tmp_path):
    """The install builds the archive by running the workload: its hand-written plan must pass
    the same checks as a compiled one (fingerprint, SQL in the allow-list's rendered form).
    A subprocess, because importing the workload prepares the process for a gate job."""
    code = ("import sys; from pathlib import Path; from contract_gate_spark.commands.class_archive_workload import workload_plan; "
            "plan = workload_plan(Path(sys.argv[1])); print(plan.fingerprint)")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("sha256:")


def test_a_failed_build_names_its_log_and_shows_its_end_not_the_jvm_output(tmp_path, monkeypatch, capfd):
    """The install's terminal gets no Java or Spark line: the build's JVM writes to its log, and a
    failure prints one message, the log's path and the log's last lines (the quick start's last step)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    workload = tmp_path / "workload.py"
    workload.write_text("import sys\nprint('workload-broke-here', file=sys.stderr)\nsys.exit(3)\n", encoding="utf-8")
    monkeypatch.setattr(class_archive, "workload_script", lambda: workload)

    assert class_archive.main(["--path", str(tmp_path / "classes.jsa")]) == 1

    out, err = capfd.readouterr()
    log = tmp_path / "cache" / "contract-gate" / "install" / "class-archive.log"
    assert out == "" and not (tmp_path / "classes.jsa").exists()
    first, *tail = err.splitlines()
    assert first == (f"class archive for local gate jobs: the class archive workload failed with exit code 3; "
                     f"its output: {log}, ending:")
    assert "  workload-broke-here" in tail and len(tail) <= 20
    assert "workload-broke-here" in log.read_text()


def test_the_jar_fetch_prints_one_line_and_logs_ivy(tmp_path):
    """``install.sh`` fetches the Delta jars through Ivy: its resolution report goes to the step's
    log, the terminal gets one line (the jars are in this machine's Ivy cache since its install)."""
    done = subprocess.run([sys.executable, "-m", "contract_gate_spark.runtime.jars", "--resolve-only"],
                          env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)}, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""
    assert done.stdout.splitlines() in (["Delta Lake jars fetched (Ivy cache)"], [f"Delta Lake jars ready ({jars_dir()})"])
    if "Ivy" in done.stdout:
        log = tmp_path / "contract-gate" / "install" / f"{jars.fetch_step(DELTA_PACKAGE)}.log"
        assert "io.delta#delta-spark" in log.read_text()
