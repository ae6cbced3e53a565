"""contract-gate: an ODCS data contract as a publication gate on Spark and Delta Lake."""

__version__ = "0.1.0"
