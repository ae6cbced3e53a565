"""The objects of a landing in object storage (``s3://``, ``abfss://``, ``gs://``...), listed
without reading them.

The store is reached through ``airflow.sdk.ObjectStoragePath`` (fsspec), with the credentials of
the Airflow connection named in the landing's address (``landing.connection``): the amazon,
azure and google providers register their filesystems there for their usual connection types.
A listing gives each object's key, size, ETag or version id and modification time. That is
enough to identify a batch (:func:`objects_digest`) and to tell whether it has settled, so no
byte of data is downloaded to the worker or the triggerer.

:func:`alist_objects` is the triggerer's form: it awaits fsspec's own async listing on the
filesystem's event loop, so the triggerer's loop never blocks on the store.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass

from contract_gate_plan.addresses import Address
from datetime import datetime

from contract_gate_plan.landing_files import LandingRefused

_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# What the stores' listings call an object's content tag and version (s3fs, adlfs, gcsfs).
_TAG_KEYS = ("ETag", "etag", "content_md5", "md5Hash")
_VERSION_KEYS = ("VersionId", "version_id", "generation")
_TIME_KEYS = ("LastModified", "last_modified", "updated", "mtime")


@dataclass(frozen=True)
class StoredObject:
    """One object below the landing prefix; ``relative`` is its key below the prefix."""

    relative: str
    size: int
    tag: str
    mtime: float | None

    @property
    def skipped(self) -> bool:
        """A name Spark and the batch identity skip at any level (``_SUCCESS``, ``.crc``)."""
        return any(part.startswith(("_", ".")) for part in self.relative.split("/"))


def is_object_store(address: Address) -> bool:
    """A path address on a store other than the local filesystem."""
    match = _URI.match(address.location) if address.is_path else None
    return match is not None and match.group(1).lower() != "file"


def landing_path(address: Address):
    """The address as an ``ObjectStoragePath`` bound to its connection."""
    from airflow.sdk import ObjectStoragePath  # the Airflow SDK, only when a store is reached

    return ObjectStoragePath(address.location, conn_id=address.connection)


def list_objects(address: Address | dict) -> list[StoredObject]:
    """Every object below the landing prefix, by key; [] when nothing is there."""
    address = Address.of(address)
    path = landing_path(address)
    root = path.path.rstrip("/")
    try:
        found = path.fs.find(root, detail=True)
    except FileNotFoundError:
        return []
    return _objects(address, root, found)


async def alist_objects(address: Address | dict) -> list[StoredObject]:
    """:func:`list_objects` for an event loop: the connection lookup runs in a thread, the listing
    is the filesystem's coroutine, run on the filesystem's own loop and awaited from this one."""
    address = Address.of(address)
    path = await asyncio.to_thread(landing_path, address)
    fs = await asyncio.to_thread(lambda: path.fs)
    root = path.path.rstrip("/")
    try:
        if getattr(fs, "async_impl", False) and not getattr(fs, "asynchronous", False):
            found = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(fs._find(root, detail=True), fs.loop))
        else:  # a filesystem without an async implementation
            found = await asyncio.to_thread(fs.find, root, detail=True)
    except FileNotFoundError:
        return []
    return _objects(address, root, found)


def objects_digest(objects: list[StoredObject]) -> str:
    """sha256 over the data objects' keys, sizes and ETags or version ids, in key order."""
    data = sorted((o for o in objects if not o.skipped), key=lambda o: o.relative)
    if not data:
        raise FileNotFoundError("no data objects have landed")
    digest = hashlib.sha256()
    for stored in data:
        digest.update(f"{stored.relative}\0{stored.size}\0{stored.tag}\0".encode())
    return digest.hexdigest()


def _objects(address: Address, root: str, found: dict) -> list[StoredObject]:
    objects = []
    for key, info in sorted(found.items()):
        if info.get("type", "file") != "file" or not key.startswith(root + "/"):
            continue
        relative = key[len(root) + 1:]
        # the ETag first: an identical re-upload keeps it, while it gets a new version id
        tag = next((str(info[k]) for k in _TAG_KEYS + _VERSION_KEYS if info.get(k)), None)
        if tag is None:
            raise LandingRefused(f"landing {address.location}: the store lists {relative!r} without an ETag or a "
                                 "version id, so the batch cannot be identified without downloading it")
        objects.append(StoredObject(relative, int(info.get("size") or 0), tag.strip('"'), _mtime(info)))
    return objects


def _mtime(info: dict) -> float | None:
    for key in _TIME_KEYS:
        value = info.get(key)
        if isinstance(value, datetime):
            return value.timestamp()
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str) and value:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return None
