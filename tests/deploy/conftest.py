"""Deployment checks: the compose stack's files, and Airflow on a real PostgreSQL metadata DB."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from _postgres import start_postgres


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server (the Debian package) in a temporary folder, stopped at the end."""
    folder = Path(tempfile.mkdtemp(prefix="contract-gate-postgres-"))
    server = start_postgres(folder)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
