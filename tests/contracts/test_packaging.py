"""pyproject.toml declares ranges; constraints/ pins the versions tested; the two stay in step, and
the Airflow matrix in CI starts from the floor pyproject.toml declares."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
LOCKED_EXTRAS = ("spark", "airflow", "test")  # scripts/lock_constraints.sh


def _pins() -> dict[str, str]:
    text = (ROOT / "constraints" / "constraints-3.11.txt").read_text(encoding="utf-8")
    return {canonicalize_name(name): version for name, version in re.findall(r"^([\w.-]+)==(\S+)", text, re.M)}


def _requirements() -> list[Requirement]:
    texts = [*PROJECT["dependencies"], *(t for extra in LOCKED_EXTRAS for t in PROJECT["optional-dependencies"][extra])]
    return [Requirement(text) for text in texts]


def test_every_dependency_is_pinned_inside_its_range():
    pins = _pins()
    outside = {str(r): pins.get(canonicalize_name(r.name)) for r in _requirements()
               if pins.get(canonicalize_name(r.name)) is None or not r.specifier.contains(pins[canonicalize_name(r.name)])}
    assert outside == {}, "run scripts/lock_constraints.sh"


def test_airflow_and_its_providers_are_ranges_that_the_matrix_starts_from():
    airflow = {canonicalize_name(r.name): r for r in map(Requirement, PROJECT["optional-dependencies"]["airflow"])}
    for name, requirement in airflow.items():
        if name.startswith("apache-airflow"):
            operators = {spec.operator for spec in requirement.specifier}
            assert operators == {">=", "<"}, f"{requirement}: a range from the oldest version tested"
    floor = next(s.version for s in airflow["apache-airflow"].specifier if s.operator == ">=")
    matrix = (ROOT / "scripts" / "ci_airflow_matrix.sh").read_text(encoding="utf-8")
    assert re.search(rf"^LOWEST_AIRFLOW={re.escape(floor)}\b", matrix, re.M)


def test_the_provider_is_classified_as_one():
    assert {"Framework :: Apache Airflow", "Framework :: Apache Airflow :: Provider"} <= set(PROJECT["classifiers"])
    assert PROJECT["urls"]
