"""The provider's faces are where a reader looks: ``provider_info`` lists every operator, sensor,
trigger and hook module and every notifier, valid against Airflow's own schema, and
``contract_gate.operators`` exports every operator."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import jsonschema

import contract_gate
from contract_gate.provider_info import get_provider_info

# bases and helpers of the packages, not faces of their own
NOT_LISTED = {"contract_gate.operators.base", "contract_gate.operators.outcome"}


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
