"""Submission identity: the same landed batch always gets the same submission id.

The id is what makes the gate idempotent end to end: the candidate table is named after it,
the publish commit carries it (``userMetadata``, ``txnAppId``), and the decision log is keyed
by it. So triggering the DAG twice for one batch can never publish the batch twice: the second
run derives the same id and every step finds its work already done.

The id is derived from the batch's *content*, not from file times: a producer that re-copies
the same files (new mtimes) must not get a second publication. For a Delta landing table the
batch is a version of that table. In object storage the objects' keys, sizes and ETags (or
version ids) stand for their content, read from a listing without downloading a byte
(:mod:`contract_gate.landing_objects`). A catalog landing table is known by its newest Delta
version too, read from its Delta log where the catalog gives its location, else asked of the
catalog's SQL warehouse (:mod:`contract_gate.landing_tables`). A link
or a special file in a file landing refuses the batch (:mod:`contract_gate_plan.landing_files`).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from contract_gate.landing_objects import is_object_store, list_objects, objects_digest
from contract_gate.landing_tables import catalog_version
from contract_gate.object_storage import s3_bucket, storage_options
from contract_gate_plan.addresses import Address
from contract_gate_plan.landing_files import data_files

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
ID_LENGTH = 16
_CHUNK = 1 << 20


class NothingLanded(FileNotFoundError):
    """The landing holds no batch yet: a run has nothing to gate (it is skipped, not failed)."""


def check_submission_id(submission_id: str | None) -> str:
    """Refuse ids that cannot name a table or a folder safely (they appear in both)."""
    if submission_id is None or not ID_PATTERN.match(submission_id):
        raise ValueError(
            f"submission id {submission_id!r} must be 1-128 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return submission_id


def batch_digest(landing: Address | dict, connection_id: str | None = None) -> str:
    """sha256 over what identifies the batch at the landing address (see the module doc).

    :param connection_id: the Databricks connection that reaches a catalog landing table when the
        landing names none (the gate's execution connection)."""
    landing = Address.of(landing)
    if not landing.is_path:
        if landing.format != "delta":
            raise ValueError(f"landing {landing.location!r} is a catalog table that is not Delta: give the "
                             "submission id explicitly")
        version = catalog_version(landing, connection_id=connection_id)
        if version is None:
            raise NothingLanded(f"nothing has landed: the catalog table {landing.location} does not exist")
        return delta_digest(version)
    if is_object_store(landing):
        if landing.format == "delta":
            version = object_store_delta_version(landing)
            if version is None:
                raise NothingLanded(f"nothing has landed: {landing.location} has no Delta commit")
            return delta_digest(version)
        try:
            return objects_digest(list_objects(landing))
        except FileNotFoundError:
            raise NothingLanded(f"no data objects have landed at {landing.location}") from None
    path = landing.location
    if "://" in path:
        raise ValueError(f"landing {path!r} is not on a local filesystem: give the submission id explicitly")
    folder = Path(path)
    if not folder.exists():
        raise NothingLanded(f"nothing has landed at {folder}")
    if landing.format == "delta":
        return delta_digest(delta_version(folder))
    digest = hashlib.sha256()
    files = data_files(folder)
    if not files:
        raise NothingLanded(f"no data files have landed in {folder}")
    for file in files:
        digest.update(f"{file.relative_to(folder).as_posix()}\0{file.stat().st_size}\0".encode())
        digest.update(file_sha256(file).encode())
    return digest.hexdigest()


def delta_digest(version: int) -> str:
    """The digest of a Delta landing: its version is the batch."""
    return hashlib.sha256(f"delta-version:{version}".encode()).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def delta_version(table: Path) -> int:
    """The newest committed version of a path Delta table, read through
    :mod:`contract_gate.delta_tables` (no Spark)."""
    # Imported here: this module is on the DAG-parse path (operators), deltalake and pyarrow are not.
    from contract_gate.delta_tables import newest_version

    version = newest_version(str(table))
    if version is None:
        raise FileNotFoundError(f"{table} is not a Delta table (no commits in _delta_log)")
    return version


def object_store_delta_version(landing: Address) -> int | None:
    """The newest version of a Delta landing in S3, read from its Delta log with delta-rs and the
    credentials of ``landing.connection`` (nothing else is read); None before its first commit."""
    document = landing.as_document()
    if s3_bucket(document) is None:
        raise ValueError(f"landing {landing.location!r} is a Delta table in object storage outside S3: give the "
                         "submission id explicitly")
    # Imported here: this module is on the DAG-parse path (operators), deltalake and pyarrow are not.
    from contract_gate.delta_tables import newest_version

    return newest_version(landing.location, storage_options=storage_options({"landing": document}, document))


def derive_submission_id(contract_id: str, landing: Address | dict, rerun_of: str | None = None,
                         connection_id: str | None = None, object_name: str | None = None) -> str:
    """The id of the batch now at ``landing``; a re-run of ``rerun_of`` gets its own id, also deterministic.

    A re-run folds the original id in, so re-running unchanged data (after a contract fix, say)
    is a new submission, and triggering the same re-run twice is still one submission.
    ``object_name``: see :func:`submission_id_of`.
    """
    return submission_id_of(contract_id, batch_digest(landing, connection_id), rerun_of, object_name)


def submission_id_of(contract_id: str, digest: str, rerun_of: str | None = None,
                     object_name: str | None = None) -> str:
    """The submission id of a batch whose :func:`batch_digest` is ``digest``.

    ``object_name``: the schema object, given when the contract has several. Their landings can
    hold the same digest (two Delta landings at one version, equal files), and each object's
    batch is a submission of its own; a one-object contract passes None and keeps its ids."""
    seed = f"{contract_id}\0{digest}"
    if object_name is not None:
        seed += f"\0object:{object_name}"
    if rerun_of:
        seed += f"\0rerun_of:{rerun_of}"
    return hashlib.sha256(seed.encode()).hexdigest()[:ID_LENGTH]


def object_of(object_name: str | None, sole: bool) -> str | None:
    """What a submission id folds in of its object: nothing for a contract's only object."""
    return None if sole else object_name
