"""Address resolution is shared by every step: one rule for relative paths, safe table names."""

from __future__ import annotations

import pytest

from contract_gate_plan.addresses import Address, candidate_address, name_part


def test_relative_paths_resolve_against_contract_gate_home(monkeypatch, tmp_path):
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    resolved = Address.from_document({"kind": "path", "path": "lakehouse/orders", "format": "delta"})
    assert resolved.location == f"{tmp_path}/lakehouse/orders"
    assert resolved.is_path and resolved.sql_name == f"delta.`{tmp_path}/lakehouse/orders`"


def test_relative_paths_resolve_against_the_working_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("CONTRACT_GATE_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert Address.from_document({"kind": "path", "path": "a/../b", "format": "delta"}).location == f"{tmp_path}/b"


def test_absolute_paths_uris_and_catalog_names_are_kept(monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", "/somewhere")
    for document in (
        {"kind": "path", "path": "/abs/t", "format": "delta"},
        {"kind": "path", "path": "s3://bucket/t", "format": "delta", "connection": "aws_lake"},
        {"kind": "path", "path": "file:/tmp/t", "format": "csv", "options": {"header": "true"}},
        {"kind": "table", "name": "main.sales.orders", "format": "delta"},
    ):
        assert Address.from_document(document).as_document() == document


def test_a_written_address_keeps_its_relative_path_and_an_address_is_taken_as_it_is(monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", "/somewhere")
    written = Address.as_written({"kind": "path", "path": "lakehouse/orders"})
    assert written.location == "lakehouse/orders" and written.format == "delta"
    resolved = Address.of(written.as_document())
    assert resolved.location == "/somewhere/lakehouse/orders"
    assert Address.of(resolved) is resolved
    assert Address.of("main.sales.orders") == Address(kind="table", name="main.sales.orders")
    assert Address.of("main.sales.orders").sql_name == "`main`.`sales`.`orders`"


def test_a_malformed_address_is_refused_by_name():
    for document in ({"kind": "view", "name": "x"}, {"kind": "path", "name": "x"}, {"kind": "table"}):
        with pytest.raises(ValueError, match="an address is"):
            Address.as_written(document)


def test_delta_rs_opens_paths_only():
    assert Address(kind="path", path="/lake/t").deltalake_uri == "/lake/t"
    with pytest.raises(ValueError, match="catalog table"):
        Address(kind="table", name="main.s.t").deltalake_uri


def test_submission_ids_become_safe_and_distinct_name_parts():
    assert name_part("batch_0042") == "batch_0042"
    run_id = name_part("manual__2024-03-01T00:00:00+00:00")
    assert run_id.startswith("manual__2024_03_01T00_00_00_00_00_")
    assert name_part("a-b") != name_part("a:b")


def test_candidate_addresses_for_folders_and_catalogs():
    folder = Address(kind="path", path="lh/_c")
    assert candidate_address(folder, "orders", "s1") == Address(kind="path", path="lh/_c/orders__s1")
    assert candidate_address(Address(kind="table", name="main.sales._c"), "orders", "s1").location == "main._c.orders__s1"
    assert candidate_address(Address(kind="table", name="main._c"), "orders", "s1").location == "main._c.orders__s1"
