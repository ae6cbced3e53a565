"""A Delta table's current state from its transaction log alone: no JVM, no Delta library.

The freshness check needs the live data files with their statistics, the schema (for
column-mapped physical names) and the newest commit that carries a submission id. All of it is
in ``_delta_log``: the newest checkpoint (parquet) plus the JSON commits after it. As the Delta
protocol intends, ``_last_checkpoint`` names the checkpoint to start from and the commits after
it are found by opening the next version until none exists, so a check on a table with
thousands of commits opens a handful of files. Only when the hint is missing, unreadable or
names files that are gone is the log folder listed.

Supported: classic single- and multi-part parquet checkpoints, column mapping (statistics and
partition values are keyed by physical name) and deletion vectors (a file is then identified by
its path and deletion vector, and its statistics still describe all its rows: an upper bound). A table that needs any other reader feature
(v2 checkpoints, catalog-managed commits, ...) raises :class:`DeltaLogError` rather than being
misread.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

LOG_FOLDER = "_delta_log"
SUPPORTED_READER_FEATURES = frozenset({"columnMapping", "deletionVectors", "timestampNtz", "vacuumProtocolCheck"})
_CHECKPOINT_FILE = re.compile(r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?\.parquet$")


class DeltaLogError(Exception):
    """The folder is not a Delta table this reader can interpret faithfully."""


@dataclass(frozen=True)
class LiveFile:
    path: str  # relative to the table root, URI-decoded
    partition_values: dict[str, str | None]
    stats: str | None  # the raw JSON statistics; parsed only by readers that need them
    deletion_vector: str | None = None  # its unique id; a file is identified by (path, deletion vector)


@dataclass(frozen=True)
class Commit:
    version: int
    user_metadata: str | None  # the submission id, on commits the publish step made


@dataclass
class Snapshot:
    version: int
    fields: list[dict]
    partition_columns: list[str]
    files: list[LiveFile]
    commits: list[Commit] = field(default_factory=list)  # commits replayed after the checkpoint, oldest first
    checkpoint_version: int | None = None

    def column(self, name: str) -> dict:
        for item in self.fields:
            if item["name"] == name:
                return item
        raise DeltaLogError(f"column {name!r} is not in the table schema")

    def physical_name(self, name: str) -> str:
        """The name statistics, partition values and parquet files use for a column."""
        metadata = self.column(name).get("metadata") or {}
        return metadata.get("delta.columnMapping.physicalName", name)


class DeltaLog:
    def __init__(self, location: str):
        """``location``: an absolute local path, or a URI pyarrow has a filesystem for (s3://, gs://, ...)."""
        if posixpath.isabs(location):
            self.fs, self.root = pafs.LocalFileSystem(), location
        else:
            self.fs, self.root = pafs.FileSystem.from_uri(location)
        self.root = self.root.rstrip("/")
        self.log_dir = f"{self.root}/{LOG_FOLDER}"

    def exists(self) -> bool:
        return self.fs.get_file_info(self.log_dir).type == pafs.FileType.Directory

    def file_path(self, live: LiveFile) -> str:
        return f"{self.root}/{live.path}"

    def snapshot(self) -> Snapshot:
        files: dict[tuple[str, str | None], LiveFile] = {}
        metadata = protocol = None
        checkpoint = self._checkpoint()
        version = -1
        if checkpoint is not None:
            version, parts = checkpoint
            metadata, protocol = self._read_checkpoint(parts, files)
        commits = []
        while (text := self._read_commit(version + 1)) is not None:
            version += 1
            for action in _actions(text):
                if "add" in action:
                    add = action["add"]
                    live = LiveFile(unquote(add["path"]), add.get("partitionValues") or {}, add.get("stats"),
                                    _dv_id(add.get("deletionVector")))
                    files[(live.path, live.deletion_vector)] = live
                elif "remove" in action:
                    remove = action["remove"]
                    files.pop((unquote(remove["path"]), _dv_id(remove.get("deletionVector"))), None)
                elif "metaData" in action:
                    metadata = action["metaData"]
                elif "protocol" in action:
                    protocol = action["protocol"]
                elif "commitInfo" in action:
                    commits.append(_commit(version, action["commitInfo"]))
        if version < 0:
            raise DeltaLogError(f"{self.root} is not a Delta table: no commits in {LOG_FOLDER}")
        if metadata is None or protocol is None:
            raise DeltaLogError(f"{self.root}: the log has no metaData/protocol up to version {version}")
        _check_protocol(self.root, protocol)
        return Snapshot(
            version=version,
            fields=json.loads(metadata["schemaString"])["fields"],
            partition_columns=list(metadata.get("partitionColumns") or []),
            files=list(files.values()),
            commits=commits,
            checkpoint_version=checkpoint[0] if checkpoint else None,
        )

    def commits_before(self, version: int) -> Iterator[Commit]:
        """commitInfo of the JSON commits older than ``version``, newest first, until the log
        has been cleaned up (checkpoints keep no commitInfo)."""
        while version > 0:
            version -= 1
            text = self._read_commit(version)
            if text is None:
                return
            for line in text.splitlines():
                if '"commitInfo"' in line:
                    action = json.loads(line)
                    if "commitInfo" in action:
                        yield _commit(version, action["commitInfo"])
                        break

    def _read_commit(self, version: int) -> str | None:
        try:
            with self.fs.open_input_stream(f"{self.log_dir}/{version:020d}.json") as stream:
                return stream.read().decode("utf-8")
        except FileNotFoundError:
            return None

    def _checkpoint(self) -> tuple[int, list[str]] | None:
        """(version, part paths) of the checkpoint to start from, or None to replay from 0."""
        hinted = self._hinted_checkpoint()
        if hinted is not None:
            return hinted
        infos = self.fs.get_file_info(pafs.FileSelector(self.log_dir, allow_not_found=True))
        if not infos:
            raise DeltaLogError(f"{self.root} is not a Delta table: no {LOG_FOLDER} folder")
        parts: dict[tuple[int, int], set[int]] = {}
        for info in infos:
            match = _CHECKPOINT_FILE.match(info.base_name)
            if match:
                version, part, total = int(match[1]), int(match[2] or 1), int(match[3] or 1)
                parts.setdefault((version, total), set()).add(part)
        complete = [key for key, seen in parts.items() if len(seen) == key[1]]
        if not complete:
            return None
        version, total = max(complete)
        return version, self._checkpoint_paths(version, total)

    def _hinted_checkpoint(self) -> tuple[int, list[str]] | None:
        try:
            with self.fs.open_input_stream(f"{self.log_dir}/_last_checkpoint") as stream:
                hint = json.loads(stream.read())
            version, total = int(hint["version"]), int(hint.get("parts") or 1)
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            return None
        paths = self._checkpoint_paths(version, total)
        if any(info.type != pafs.FileType.File for info in self.fs.get_file_info(paths)):
            return None
        return version, paths

    def _checkpoint_paths(self, version: int, total: int) -> list[str]:
        if total == 1:
            return [f"{self.log_dir}/{version:020d}.checkpoint.parquet"]
        return [f"{self.log_dir}/{version:020d}.checkpoint.{part:010d}.{total:010d}.parquet" for part in range(1, total + 1)]

    def read_parquet(self, path: str, columns: list[str]) -> pa.Table:
        """``columns`` of one parquet file (those it has). ``pq.ParquetFile`` rather than
        ``pq.read_table``: the latter goes through ``pyarrow.dataset``, which imports pandas and
        costs more than the whole check."""
        with self.fs.open_input_file(path) as stream:
            parquet = pq.ParquetFile(stream)
            present = set(parquet.schema_arrow.names)
            return parquet.read(columns=[c for c in columns if c in present])

    def _read_checkpoint(self, paths: list[str], files: dict) -> tuple[dict, dict]:
        table = pa.concat_tables([self.read_parquet(path, ["add", "metaData", "protocol"]) for path in paths])
        adds = table.column("add").filter(pc.is_valid(table.column("add")))
        add_fields = {f.name for f in adds.type}
        paths_ = pc.struct_field(adds, "path").to_pylist()
        stats = pc.struct_field(adds, "stats").to_pylist() if "stats" in add_fields else [None] * len(paths_)
        partitions = pc.struct_field(adds, "partitionValues").to_pylist()
        vectors = (pc.struct_field(adds, "deletionVector").to_pylist() if "deletionVector" in add_fields
                   else [None] * len(paths_))
        for path, values, stat, vector in zip(paths_, partitions, stats, vectors):
            live = LiveFile(unquote(path), dict(values or ()), stat, _dv_id(vector))
            files[(live.path, live.deletion_vector)] = live
        metadata = _first_valid(table, "metaData")
        metadata["configuration"] = dict(metadata.get("configuration") or ())
        return metadata, _first_valid(table, "protocol")


def _actions(text: str) -> Iterator[dict]:
    for line in text.splitlines():
        if line.strip():
            yield json.loads(line)


def _dv_id(vector: dict | None) -> str | None:
    """The deletion vector's unique id (protocol: storage type, path or inline data, offset)."""
    if not vector:
        return None
    offset = vector.get("offset")
    return f"{vector['storageType']}{vector['pathOrInlineDv']}" + (f"@{offset}" if offset is not None else "")


def _commit(version: int, info: dict) -> Commit:
    return Commit(version, info.get("userMetadata") or None)


def _first_valid(table, column: str) -> dict:
    values = table.column(column).filter(pc.is_valid(table.column(column))).to_pylist()
    if not values:
        raise DeltaLogError(f"checkpoint has no {column} action")
    return values[0]


def _check_protocol(root: str, protocol: dict) -> None:
    reader_version = protocol.get("minReaderVersion", 1)
    if reader_version > 3:
        raise DeltaLogError(f"{root}: Delta reader version {reader_version} is not supported")
    unsupported = set(protocol.get("readerFeatures") or ()) - SUPPORTED_READER_FEATURES
    if unsupported:
        raise DeltaLogError(f"{root}: Delta reader features not supported without Spark: {', '.join(sorted(unsupported))}")
