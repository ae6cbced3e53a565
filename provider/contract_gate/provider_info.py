"""Provider metadata that Airflow reads through the ``apache_airflow_provider`` entry point."""

from __future__ import annotations

from contract_gate import __version__


def get_provider_info() -> dict:
    return {
        "package-name": "airflow-provider-contract-gate",
        "name": "Contract Gate",
        "description": "An ODCS data contract as a publication gate on Spark and Delta Lake.",
        "versions": [__version__],
    }
