"""Provider metadata that Airflow reads through the ``apache_airflow_provider`` entry point.

Kept import-light (no Airflow, no pyspark): ``airflow providers list`` and the providers
manager import it in every Airflow process.
"""

from __future__ import annotations

from contract_gate import __version__
from contract_gate.config import provider_config

INTEGRATION = "Contract Gate"


def get_provider_info() -> dict:
    return {
        "package-name": "airflow-provider-contract-gate",
        "name": "Contract Gate",
        "description": "An ODCS data contract as a publication gate on Spark and Delta Lake: stage, validate, "
        "publish or quarantine, record every decision, one DAG per contract.",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": INTEGRATION,
                "external-doc-url": "https://bitol-io.github.io/open-data-contract-standard/",
                "tags": ["software"],
            }
        ],
        "operators": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [
                    "contract_gate.operators.submission",
                    "contract_gate.operators.validate",
                    "contract_gate.operators.branch",
                    "contract_gate.operators.publish",
                    "contract_gate.operators.quarantine",
                    "contract_gate.operators.split",
                    "contract_gate.operators.record",
                    "contract_gate.operators.retention",
                    "contract_gate.operators.audit",
                    "contract_gate.operators.freshness",
                    "contract_gate.operators.preview",
                ],
            }
        ],
        "sensors": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [
                    "contract_gate.sensors.landing",
                    "contract_gate.sensors.accepted_data_sensor",
                ],
            }
        ],
        "triggers": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [
                    "contract_gate.triggers.landing",
                    "contract_gate.triggers.accepted_data_trigger",
                    "contract_gate.triggers.spark_driver",
                    "contract_gate.triggers.databricks_run",
                ],
            }
        ],
        "hooks": [
            {
                "integration-name": INTEGRATION,
                "python-modules": ["contract_gate.hooks.spark_standalone", "contract_gate.hooks.databricks"],
            }
        ],
        "notifications": ["contract_gate.notifications.file.FileNotifier"],
        "extra-links": ["contract_gate.pages.links.GateReportLink"],
        # also the ``airflow.plugins`` entry point of pyproject.toml, which is what loads it
        "plugins": [{"name": "contract_gate_pages", "plugin-class": "contract_gate.pages.plugin.ContractGatePagesPlugin"}],
        "asset-uris": [{"schemes": ["table"], "handler": "contract_gate.asset_uris.sanitize_uri",
                        "to_openlineage_converter": "contract_gate.asset_uris.convert_asset_to_openlineage"}],
        "config": provider_config(),
    }
