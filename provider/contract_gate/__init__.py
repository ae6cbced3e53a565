"""contract-gate: an ODCS data contract as a publication gate on Spark and Delta Lake."""

__version__ = "0.2.0"
"""The package version: pyproject.toml reads it from here (setuptools dynamic version)."""
