"""The provider's faces are where a reader looks: ``provider_info`` lists every operator, sensor,
trigger and hook module and every notifier, valid against Airflow's own schema, and
``contract_gate.operators`` exports every operator."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import pytest

import contract_gate
from contract_gate.provider_info import get_provider_info

# bases and helpers of the packages, not faces of their own
NOT_LISTED = {"contract_gate.operators.base", "contract_gate.operators.outcome",
              "contract_gate.hooks.errors"}  # the hooks' exceptions, not a hook


def modules_of(package: str) -> set[str]:
    path = Path(contract_gate.__file__).parent / package.rsplit(".", 1)[1]
    return {f"{package}.{info.name}" for info in pkgutil.iter_modules([str(path)])} - NOT_LISTED


def listed(info: dict, kind: str) -> set[str]:
    return {module for entry in info[kind] for module in entry["python-modules"]}


def test_provider_info_is_valid_and_lists_every_operator_sensor_and_trigger_module():
    import airflow

    info = get_provider_info()
    schema = json.loads((Path(airflow.__file__).parent / "provider_info.schema.json").read_text())
    jsonschema.validate(info, schema)
    for kind in ("operators", "sensors", "triggers", "hooks"):
        assert listed(info, kind) == modules_of(f"contract_gate.{kind}"), kind
        for module in listed(info, kind):
            importlib.import_module(module)


def test_every_notifier_is_listed():
    from airflow.sdk.bases.notifier import BaseNotifier

    found = set()
    for module in modules_of("contract_gate.notifications"):
        for name, value in vars(importlib.import_module(module)).items():
            if inspect.isclass(value) and issubclass(value, BaseNotifier) and value.__module__ == module:
                found.add(f"{module}.{name}")
    assert set(get_provider_info()["notifications"]) == found == {"contract_gate.notifications.file.FileNotifier"}


def test_the_operators_package_exports_every_operator_and_each_is_used():
    from airflow.sdk import BaseOperator

    import contract_gate.operators as package

    defined = {value for module in modules_of("contract_gate.operators") | NOT_LISTED
               for value in vars(importlib.import_module(module)).values()
               if inspect.isclass(value) and issubclass(value, BaseOperator) and value.__module__ == module}
    exported = {getattr(package, name) for name in package.__all__}
    concrete = {cls for cls in defined if cls.__name__.startswith(("Gate", "Freshness"))}
    assert concrete <= exported
    # every concrete operator is a task of the generated DAGs (gate, retention, freshness)
    source = "".join((Path(contract_gate.__file__).parent / name).read_text()
                     for name in ("dags/task_group.py", "dags/contract_dags.py", "dags/freshness_dag.py"))
    assert {cls.__name__ for cls in concrete if cls.__name__ not in source} == set()


def test_the_extra_links_listed_are_the_ones_the_operators_carry():
    from airflow.sdk import BaseOperator, BaseOperatorLink

    carried = {f"{type(link).__module__}.{type(link).__name__}"
               for module in modules_of("contract_gate.operators")
               for value in vars(importlib.import_module(module)).values()
               if inspect.isclass(value) and issubclass(value, BaseOperator)
               for link in getattr(value, "operator_extra_links", ())
               if isinstance(link, BaseOperatorLink)}
    assert set(get_provider_info()["extra-links"]) == carried == {"contract_gate.pages.links.GateReportLink"}


def test_the_plugin_listed_is_the_one_the_entry_point_loads():
    from importlib.metadata import entry_points

    (listed_plugin,) = get_provider_info()["plugins"]
    (entry_point,) = entry_points(group="airflow.plugins", name=listed_plugin["name"])
    module, _, name = listed_plugin["plugin-class"].rpartition(".")
    plugin = getattr(importlib.import_module(module), name)
    assert entry_point.load() is plugin and plugin.name == listed_plugin["name"]


def test_the_asset_uri_scheme_of_catalog_tables_is_registered_and_checked_by_airflow(monkeypatch):
    from airflow.providers_manager import ProvidersManager
    from airflow.sdk import Asset

    from contract_gate import asset_uris
    from contract_gate.dags.task_group import target_asset
    from contract_gate.contract.compiler import compile_plan
    from contract_gate_plan.addresses import Address

    (registered,) = get_provider_info()["asset-uris"]
    assert registered["schemes"] == [asset_uris.SCHEME]
    manager = ProvidersManager()
    assert manager.asset_uri_handlers[asset_uris.SCHEME] is asset_uris.sanitize_uri
    assert manager.asset_to_openlineage_converters[asset_uris.SCHEME] is asset_uris.convert_asset_to_openlineage
    # the URI the DAG factory gives a catalog target is of that scheme, and Airflow accepts it
    plan = compile_plan(Path(__file__).resolve().parents[2] / "contracts" / "orders.yaml")  # the repository's
    tables = replace(plan.require_tables(), target=Address(kind="table", name="main.sales.orders"))
    asset = target_asset(replace(plan, tables=tables))
    assert asset.uri.startswith(f"{asset_uris.SCHEME}://main.sales.orders")
    assert Asset(name="right", uri="table://main.sales.orders").uri == "table://main.sales.orders/"
    # Airflow hands every table:// URI a DAG names to the handler registered for the scheme
    handler = manager.asset_uri_handlers[asset_uris.SCHEME]
    for wrong in ("table://main.sales.orders/more", "table://user@main.sales.orders", "table://a.b.c.d", "table://a..b",
                  "table://main.sales.orders?x=1"):
        with pytest.raises(ValueError, match="names a catalog table"):
            handler(urlsplit(wrong))
    # and the OpenLineage provider names its dataset as the gate's facets name the table
    monkeypatch.setenv("AIRFLOW_CONN_DATABRICKS_DEFAULT", json.dumps({"conn_type": "databricks", "host": "dbc-1.cloud.databricks.com"}))
    dataset = asset_uris.convert_asset_to_openlineage(asset, None)
    assert (dataset.namespace, dataset.name) == ("databricks://dbc-1.cloud.databricks.com", "main.sales.orders")
