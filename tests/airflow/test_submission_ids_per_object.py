"""Submission ids of a contract with several objects: one per object, also where the objects'
landings hold the same batch digest (two Delta landings at one version, equal files); a
one-object contract keeps the ids it always had."""

from __future__ import annotations

import hashlib

import pyarrow as pa
from deltalake import write_deltalake

from contract_gate.contract.compiler import compile_plans
from contract_gate.landing_batches import Watch, landed_batch
from contract_gate.submission import ID_LENGTH, batch_digest, delta_digest, derive_submission_id, submission_id_of
from contract_gate.contract.loader import load_contract_text
from tests.contracts._contract_texts import HEADER

TWO_OBJECTS = """\
apiVersion: v3.1.0
kind: DataContract
id: urn:datacontract:shared:reference
version: 1.0.0
status: active
schema:
  - name: countries
    physicalType: table
    properties:
      - {name: code, physicalType: string, logicalType: string, primaryKey: true}
  - name: currencies
    physicalType: table
    properties:
      - {name: code, physicalType: string, logicalType: string, primaryKey: true}
customProperties:
  - property: contractGate
    value:
      landing: {path: "landing/{object}", format: delta}
"""


def test_a_one_object_contract_keeps_its_ids():
    digest = delta_digest(3)
    before = hashlib.sha256(f"c\0{digest}".encode()).hexdigest()[:ID_LENGTH]  # the id as it always was
    assert submission_id_of("c", digest) == before
    assert submission_id_of("c", digest, object_name=None) == before


def test_objects_of_one_contract_whose_landings_have_the_same_digest_get_their_own_ids(tmp_path):
    for name in ("countries", "currencies"):  # two Delta landings, both at version 0
        write_deltalake(str(tmp_path / name), pa.table({"code": ["NL"]}))
    landings = {name: {"kind": "path", "path": str(tmp_path / name), "format": "delta"}
                for name in ("countries", "currencies")}
    assert batch_digest(landings["countries"]) == batch_digest(landings["currencies"])

    ids = {name: derive_submission_id("urn:x", landing, object_name=name) for name, landing in landings.items()}
    assert ids["countries"] != ids["currencies"]
    assert ids["countries"] == derive_submission_id("urn:x", landings["countries"], object_name="countries")
    rerun = derive_submission_id("urn:x", landings["countries"], rerun_of=ids["countries"], object_name="countries")
    assert rerun not in ids.values()


def test_the_landing_watch_derives_each_objects_own_id(tmp_path, monkeypatch):
    """The sensor's and the triggerer's id (``landed_batch``) folds the object in for a contract
    of several objects, as the submission task does."""
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))  # where the plans' relative paths resolve
    plans = compile_plans(load_contract_text(TWO_OBJECTS, "reference.yaml")).gated
    for name in plans:
        write_deltalake(str(tmp_path / "lakehouse" / "landing" / name), pa.table({"code": ["NL"]}))
    batches = {name: landed_batch(Watch.from_plan(plan)) for name, plan in plans.items()}
    assert {name: batch.object for name, batch in batches.items()} == {"countries": "countries",
                                                                       "currencies": "currencies"}
    assert batches["countries"].submission_id != batches["currencies"].submission_id
    for name, batch in batches.items():
        assert batch.submission_id == submission_id_of("urn:datacontract:shared:reference", delta_digest(0),
                                                       object_name=name)

    one = compile_plans(load_contract_text(HEADER + "      - {name: code, physicalType: string, logicalType: string}\n"
                                           "customProperties:\n  - property: contractGate\n    value:\n"
                                           "      landing: {path: landing/countries, format: delta}\n", "t.yaml")).gated["t"]
    assert landed_batch(Watch.from_plan(one)).submission_id == submission_id_of("t", delta_digest(0))
