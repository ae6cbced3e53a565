"""The layout a newcomer can navigate: every package of the three sides says its one job."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [ROOT / "contract_plan" / "contract_gate_plan", ROOT / "spark_jobs" / "contract_gate_spark", ROOT / "provider" / "contract_gate"]


def _modules():
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            if "__pycache__" not in path.parts:
                yield path


@pytest.mark.parametrize("folder", sorted({p.parent for p in _modules()}), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_folder_is_a_package_whose_init_says_its_job(folder):
    init = folder / "__init__.py"
    assert init.is_file(), f"{folder.relative_to(ROOT)} has no __init__.py"
    assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), f"{init.relative_to(ROOT)} has no docstring"


def test_every_module_starts_with_a_docstring():
    missing = [str(p.relative_to(ROOT)) for p in _modules()
               if p.name != "__init__.py" and not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))]
    assert missing == []

