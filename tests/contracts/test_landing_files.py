"""A file landing is read as regular files inside it only: a link or a special file that the
producer put there refuses the batch, naming the entry, in every reader (the batch identity,
the landing watch and the stage step; see tests/gate_steps/test_stage.py for the last)."""

from __future__ import annotations

import os

import pytest

from contract_gate.submission import derive_submission_id
from contract_gate_plan.landing_files import LandingRefused, data_files, landing_entries


def landing(path, fmt="csv"):
    return {"kind": "path", "path": str(path), "format": fmt}


@pytest.fixture
def batch(tmp_path):
    folder = tmp_path / "landing"
    (folder / "day=1").mkdir(parents=True)
    (folder / "a.csv").write_text("x\n1\n")
    (folder / "day=1" / "b.csv").write_text("x\n2\n")
    (folder / "_SUCCESS").write_text("")
    (folder / "_temporary").mkdir()
    (folder / "_temporary" / "part.csv").write_text("x\n3\n")
    return folder


def test_regular_files_are_listed_in_a_stable_order_and_skipped_names_left_out(batch):
    assert [p.relative_to(batch).as_posix() for p in data_files(batch)] == ["a.csv", "day=1/b.csv"]
    assert {e.relative for e in landing_entries(batch)} == {
        ".", "a.csv", "day=1", "day=1/b.csv", "_SUCCESS", "_temporary", "_temporary/part.csv"}
    assert data_files(batch / "a.csv") == [batch / "a.csv"]  # a landing that is one file
    assert landing_entries(batch / "missing") == []


@pytest.mark.parametrize("plant", ["file_link", "folder_link", "link_in_skipped_folder", "fifo", "landing_link"])
def test_a_link_or_special_file_refuses_the_batch_naming_it(batch, tmp_path, plant):
    secret = tmp_path / "other_team" / "table.csv"
    secret.parent.mkdir()
    secret.write_text("x\n42\n")
    read_at = batch
    if plant == "file_link":
        os.symlink(secret, batch / "z.csv")
        named = "z.csv in landing"
    elif plant == "folder_link":
        os.symlink(secret.parent, batch / "day=2")
        named = "day=2 in landing"
    elif plant == "link_in_skipped_folder":
        os.symlink(secret, batch / "_temporary" / "x.csv")
        named = "_temporary/x.csv in landing"
    elif plant == "fifo":
        os.mkfifo(batch / "day=1" / "c.csv")  # reading it would hang the gate
        named = "day=1/c.csv in landing"
    else:
        read_at = tmp_path / "linked_landing"
        os.symlink(batch, read_at)
        named = f"landing {read_at} is"
    with pytest.raises(LandingRefused, match=named):
        data_files(read_at)
    with pytest.raises(LandingRefused, match="link or a special file"):
        derive_submission_id("c", landing(read_at))


def test_the_batch_identity_is_unchanged_for_a_plain_landing(batch):
    """The listing moved to contract_gate_plan.landing_files: ids of batches already gated must not change."""
    first = derive_submission_id("c", landing(batch))
    (batch / "_temporary" / "part.csv").write_text("x\n4\n")  # a skipped file is not the batch
    assert derive_submission_id("c", landing(batch)) == first
    (batch / "day=1" / "b.csv").write_text("x\n5\n")
    assert derive_submission_id("c", landing(batch)) != first
