"""Address resolution is shared by every step: one rule for relative paths, safe table names."""

from __future__ import annotations

from contract_plan.addresses import candidate_address, name_part, resolve


def test_relative_paths_resolve_against_contract_gate_home(monkeypatch, tmp_path):
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    resolved = resolve({"kind": "path", "path": "lakehouse/orders", "format": "delta"})
    assert resolved["path"] == f"{tmp_path}/lakehouse/orders"


def test_relative_paths_resolve_against_the_working_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("CONTRACT_GATE_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve({"kind": "path", "path": "a/../b", "format": "delta"})["path"] == f"{tmp_path}/b"


def test_absolute_paths_uris_and_catalog_names_are_kept(monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", "/somewhere")
    for address in (
        {"kind": "path", "path": "/abs/t", "format": "delta"},
        {"kind": "path", "path": "s3://bucket/t", "format": "delta"},
        {"kind": "path", "path": "file:/tmp/t", "format": "delta"},
        {"kind": "table", "name": "main.sales.orders", "format": "delta"},
    ):
        assert resolve(address) == address


def test_submission_ids_become_safe_and_distinct_name_parts():
    assert name_part("batch_0042") == "batch_0042"
    run_id = name_part("manual__2024-03-01T00:00:00+00:00")
    assert run_id.startswith("manual__2024_03_01T00_00_00_00_00_")
    assert name_part("a-b") != name_part("a:b")


def test_candidate_addresses_for_folders_and_catalogs():
    plan = {"object": "orders", "tables": {"candidate_schema": {"kind": "path", "path": "lh/_c", "format": "delta"}}}
    assert candidate_address(plan["tables"]["candidate_schema"], plan["object"], "s1") == {"kind": "path", "path": "lh/_c/orders__s1", "format": "delta"}
    plan["tables"]["candidate_schema"] = {"kind": "table", "name": "main.sales._c", "format": "delta"}
    assert candidate_address(plan["tables"]["candidate_schema"], plan["object"], "s1")["name"] == "main._c.orders__s1"
    plan["tables"]["candidate_schema"] = {"kind": "table", "name": "main._c", "format": "delta"}
    assert candidate_address(plan["tables"]["candidate_schema"], plan["object"], "s1")["name"] == "main._c.orders__s1"
