"""The distribution a user installs: the sdist and the wheel built from it (as scripts/ci_airflow_matrix.sh
builds them) carry the licence, the three packages with their ``py.typed`` and nothing else, and
the one version the code declares; the metadata declares ranges, never exact pins."""

from __future__ import annotations

import email
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import contract_gate

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"contract_gate", "contract_gate_plan", "contract_gate_spark"}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    uv = shutil.which("uv") or str(ROOT / ".venv" / "bin" / "uv")  # the CI matrix's venvs have no uv of their own
    subprocess.run([uv, "build", "--quiet", "--out-dir", str(out), str(ROOT)], check=True, timeout=300)
    return out


def _wheel(dist: Path) -> zipfile.ZipFile:
    (wheel,) = dist.glob("*.whl")
    return zipfile.ZipFile(wheel)


def test_the_wheel_holds_the_three_packages_their_py_typed_and_the_licence(dist):
    names = _wheel(dist).namelist()
    dist_info = f"airflow_provider_contract_gate-{contract_gate.__version__}.dist-info"
    assert {name.split("/")[0] for name in names} == PACKAGES | {dist_info}
    assert {f"{package}/py.typed" for package in PACKAGES} <= set(names)
    assert {f"{dist_info}/licenses/LICENSE", f"{dist_info}/licenses/NOTICE"} <= set(names)
    licence = _wheel(dist).read(f"{dist_info}/licenses/LICENSE").decode()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence  # the full text, not a pointer to it


def test_the_sdist_holds_the_licence_and_the_notice(dist):
    (sdist,) = dist.glob("*.tar.gz")
    top = f"airflow_provider_contract_gate-{contract_gate.__version__}"
    with tarfile.open(sdist) as archive:
        assert {f"{top}/LICENSE", f"{top}/NOTICE"} <= set(archive.getnames())


def test_the_metadata_has_the_code_s_version_the_licence_and_only_ranges(dist):
    wheel = _wheel(dist)
    metadata = email.message_from_bytes(
        wheel.read(f"airflow_provider_contract_gate-{contract_gate.__version__}.dist-info/METADATA"))
    assert metadata["Version"] == contract_gate.__version__
    assert metadata["License-Expression"] == "Apache-2.0"
    assert set(metadata.get_all("License-File")) == {"LICENSE", "NOTICE"}
    pinned = [text for text in metadata.get_all("Requires-Dist")
              if any(spec.operator in ("==", "===") for spec in Requirement(text).specifier)]
    assert pinned == [], "exact pins belong in constraints/, the metadata declares ranges"
