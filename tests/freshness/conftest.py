"""Fixtures: a fresh lakehouse home per test (Spark: the suite's session, tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh lakehouse home: plan paths (``lakehouse/...``) resolve under it, and so does a
    ``FileNotifier``'s path (the alerts folder)."""
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__ALERTS_DIR", str(tmp_path))
    monkeypatch.delenv("CONTRACT_GATE_STATUS_DIR", raising=False)
    return tmp_path
