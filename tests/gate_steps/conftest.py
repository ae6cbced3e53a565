"""The gate-step tests' marker (their Spark session is the suite's, tests/conftest.py; their
plans come from ``_gate_plans``)."""

from __future__ import annotations



def pytest_configure(config):
    config.addinivalue_line(
        "markers", "reliability: kill -9 fault-injection trials (each starts a Spark JVM)"
    )
