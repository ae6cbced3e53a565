"""The engine tests' fixtures (the Spark session is the suite's, tests/conftest.py)."""

from __future__ import annotations

import pytest



@pytest.fixture
def as_delta(spark, tmp_path):
    """Write a DataFrame as a real Delta table and open it as a pinned candidate."""
    from contract_gate_spark.validation.candidate import read_candidate

    def write(df, name="candidate"):
        path = str(tmp_path / name)
        df.write.format("delta").save(path)
        return read_candidate(spark, path, format="delta")

    return write
