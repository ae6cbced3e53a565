"""``contract_gate_spark.runtime.job_start``: which zips move on a job's path (the real job start is checked in
tests/airflow/test_airflow_runners.py, through spark-submit)."""

from __future__ import annotations

import sys

import pytest

from contract_gate_spark.runtime.job_start import prefer_installed_pyspark


@pytest.fixture
def packages(tmp_path):
    """A site-packages folder holding a pip-installed pyspark with its bundled zips."""
    lib = tmp_path / "site-packages" / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (tmp_path / "site-packages" / "pyspark" / "__init__.py").write_text("")
    return tmp_path / "site-packages"


def test_the_zips_of_an_installed_pyspark_move_behind_its_package(packages, monkeypatch):
    lib = packages / "pyspark" / "python" / "lib"
    monkeypatch.setattr(sys, "path", ["/job", str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"),
                                      "/python311.zip", str(packages), "/other"])
    prefer_installed_pyspark()
    assert sys.path == ["/job", "/python311.zip", str(packages), str(lib / "pyspark.zip"),
                        str(lib / "py4j-0.10.9.9-src.zip"), "/other"]


def test_the_zips_of_a_spark_distribution_stay_first(tmp_path, packages, monkeypatch):
    """A cluster's SPARK_HOME is its own Spark: its zip is the code that matches the JVM."""
    distribution = tmp_path / "spark-4.2.0-bin" / "python" / "lib"
    path = ["/job", str(distribution / "pyspark.zip"), str(packages)]
    monkeypatch.setattr(sys, "path", list(path))
    prefer_installed_pyspark()
    assert sys.path == path


def test_nothing_moves_when_the_package_folder_is_not_on_the_path(packages, monkeypatch):
    lib = packages / "pyspark" / "python" / "lib"
    path = ["/job", str(lib / "pyspark.zip"), "/other"]
    monkeypatch.setattr(sys, "path", list(path))
    prefer_installed_pyspark()
    assert sys.path == path
