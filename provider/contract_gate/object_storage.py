"""What a gate job needs to reach the plan's tables in S3 (``s3a://``, ``s3://``): each bucket's
credentials, from the Airflow ``aws`` connection its addresses name (``connection`` of the
landing, target, quarantine or decisions), handed over for that job only.

* **Spark** (the ``local`` and ``spark_submit`` modes): Hadoop's S3A settings per bucket
  (``spark.hadoop.fs.s3a.bucket.<bucket>.access.key``...), so a landing and a target in two
  accounts each get their own credentials, plus the S3A connector's jars on the job's class path
  (``contract_gate_spark.runtime.s3a_jars``). The credentials go to the runner when the job starts, which
  hands them to Spark in an owner-only file (``contract_gate.runners.job_credentials``), never on
  a command line, into the plan, a templated field, a report or a decision. ``s3://`` is read through S3A
  too, as EMR and Databricks read it natively.
* **delta-rs** (the decision log, recovery's reading of the target's history): the same
  credentials as ``storage_options``.

A bucket's connection is the one its addresses name; two addresses in one bucket naming two
connections are refused (the job could not tell which holds). A bucket no address names a
connection for (the candidates' folder under the server's root, say) is reached with the job's
own credentials: those of the bucket's other addresses when they name one, else Hadoop's or
delta-rs's default chain (instance role, environment). The ``databricks`` and ``spark_connect``
modes get nothing: their cluster or server owns its storage access, and the plan's URIs reach it
unchanged.

Delta on S3 (Spark): each table has one writer at a time. Delta's ``S3SingleDriverLogStore`` (set
explicitly below) keeps commits from one Spark driver safe, not from two; the gate's DAGs run one
submission per contract at a time (``max_active_runs=1``) and every written table is owned by one
contract (``contract_gate_plan.ownership``), so the gate is the single writer of its tables
(docs/object-storage.md).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contract_gate_spark.runtime import s3a_jars

if TYPE_CHECKING:
    from contract_gate_plan.addresses import Address
    from contract_gate_plan.model import Plan

S3_SCHEMES = ("s3a", "s3", "s3n")
SPARK_ROLES = ("landing", "candidate_schema", "target", "quarantine")
"""The addresses a Spark job reads or writes; the decision log is delta-rs's alone."""
JOB_MODES = ("local", "spark_submit")
"""The modes whose Spark this worker configures; the others own their storage access."""
S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"
SINGLE_DRIVER_LOG_STORE = "io.delta.storage.S3SingleDriverLogStore"

_S3_URI = re.compile(r"^(s3a|s3|s3n)://([^/]*)(/|$)", re.IGNORECASE)
# S3's bucket naming rules: the name also becomes part of a Spark setting's name.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


class ObjectStorageError(ValueError):
    """The plan's S3 addresses cannot be reached as given (a bad bucket, two connections, no jars)."""


@dataclass(frozen=True)
class AwsAccess:
    """One connection's credentials and endpoint, as the amazon provider resolves them."""

    access_key: str | None
    secret_key: str | None
    session_token: str | None
    endpoint: str | None
    region: str | None

    @classmethod
    def of_connection(cls, conn_id: str) -> AwsAccess:
        # the amazon provider, only when a plan has an S3 address
        from airflow.providers.amazon.aws.hooks.s3 import S3Hook

        hook = S3Hook(aws_conn_id=conn_id)
        credentials = hook.get_credentials()
        return cls(credentials.access_key, credentials.secret_key, credentials.token,
                   hook.conn_config.get_service_endpoint_url(service_name="s3"), hook.conn_config.region_name)


def s3_bucket(address: dict[str, Any] | None) -> str | None:
    """The bucket of an ``s3a://``, ``s3://`` or ``s3n://`` path address; None for anything else."""
    if not address or address.get("kind") != "path":
        return None
    match = _S3_URI.match(address.get("path") or "")
    if match is None:
        return None
    bucket = match.group(2)
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise ObjectStorageError(f"{address['path']!r}: {bucket!r} is not an S3 bucket name (3-63 lowercase "
                                 "letters, digits, '.' and '-')")
    return bucket


def bucket_connections(tables: dict[str, Any], roles: tuple[str, ...]) -> dict[str, str | None]:
    """Each S3 bucket of ``roles``' addresses, with the connection they name (None: none named)."""
    found: dict[str, str | None] = {}
    for role in roles:
        address = tables.get(role)
        bucket = s3_bucket(address)
        if address is None or bucket is None:
            continue
        named = address.get("connection")
        known = found.get(bucket)
        if named and known and named != known:
            raise ObjectStorageError(f"bucket {bucket!r} is named with connection {known!r} and with {named!r} "
                                     f"({role}): give one connection per bucket")
        found[bucket] = known or named
    return found


@dataclass(frozen=True)
class SparkJobStorage:
    """What a Spark job needs for the plan's S3 tables, in two parts that travel apart."""

    conf: dict[str, str]
    """File systems, Delta's log store, the connector's jars: settings fit for a command line."""
    credentials: dict[str, str]
    """Each bucket's S3A settings from its connection: only ever in an owner-only file
    (``contract_gate.runners.job_credentials``), never on a command line."""


def spark_job_storage(tables: dict[str, Any], mode: str | None, jars_dir=None) -> SparkJobStorage:
    """The Spark settings a job needs in ``mode`` for the S3 tables among the plan's ``tables``
    (its addresses as the plan document writes them); empty without any."""
    if (mode or "local") not in JOB_MODES:
        return SparkJobStorage({}, {})
    buckets = bucket_connections(tables, SPARK_ROLES)
    if not buckets:
        return SparkJobStorage({}, {})
    conf = {
        "spark.hadoop.fs.s3.impl": S3A_FILESYSTEM,
        "spark.hadoop.fs.s3n.impl": S3A_FILESYSTEM,
        # Delta's own choice for these schemes, set so no cluster default can replace it unseen
        **{f"spark.delta.logStore.{scheme}.impl": SINGLE_DRIVER_LOG_STORE for scheme in S3_SCHEMES},
        **_classpath(mode or "local", jars_dir),
    }
    credentials: dict[str, str] = {}
    for bucket, conn_id in sorted(buckets.items()):
        if conn_id is not None:
            credentials.update(bucket_settings(bucket, AwsAccess.of_connection(conn_id)))
    return SparkJobStorage(conf, credentials)


def bucket_settings(bucket: str, access: AwsAccess) -> dict[str, str]:
    """Hadoop S3A's per-bucket settings for one connection's access."""
    prefix = f"spark.hadoop.fs.s3a.bucket.{bucket}."
    conf = {}
    if access.access_key and access.secret_key:
        conf.update({prefix + "access.key": access.access_key, prefix + "secret.key": access.secret_key})
        if access.session_token:
            conf.update({prefix + "session.token": access.session_token,
                         prefix + "aws.credentials.provider": "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"})
    if access.endpoint:
        # an S3-compatible store (MinIO, Ceph, moto) addresses buckets by path, not by host name
        conf.update({prefix + "endpoint": access.endpoint, prefix + "path.style.access": "true",
                     prefix + "connection.ssl.enabled": str(access.endpoint.lower().startswith("https:")).lower()})
    if access.region:
        conf[prefix + "endpoint.region"] = access.region
    return conf


def storage_options(tables: dict[str, Any], address: dict[str, Any]) -> dict[str, str] | None:
    """delta-rs's ``storage_options`` for ``address`` (its bucket's connection among ``tables``);
    None for an address outside S3 or in a bucket no address names a connection for."""
    bucket = s3_bucket(address)
    if bucket is None:
        return None
    roles = tuple(role for role, other in tables.items() if isinstance(other, dict) and "kind" in other)
    conn_id = address.get("connection") or bucket_connections(tables, roles).get(bucket)
    if conn_id is None:
        return None
    access = AwsAccess.of_connection(conn_id)
    options = {"AWS_ACCESS_KEY_ID": access.access_key, "AWS_SECRET_ACCESS_KEY": access.secret_key,
               "AWS_SESSION_TOKEN": access.session_token, "AWS_REGION": access.region,
               "AWS_ENDPOINT_URL": access.endpoint}
    if access.endpoint and access.endpoint.lower().startswith("http:"):
        options["AWS_ALLOW_HTTP"] = "true"
    return {key: value for key, value in options.items() if value}


def address_storage_options(plan: Plan, address: Address) -> dict[str, str] | None:
    """delta-rs's ``storage_options`` for one of ``plan``'s addresses: what the JVM-free readers
    (decision log, freshness, the pages) open an S3 table with."""
    return storage_options(plan.document["tables"], address.as_document())


def _classpath(mode: str, jars_dir) -> dict[str, str]:
    """The S3A connector's jars: on the driver's class path in local mode (the driver runs every
    task), shipped with ``spark.jars`` to a cluster's executors by ``spark_submit``."""
    # session imports pyspark: only when a job with S3 tables starts, as operators.base imports this
    # module while DAG files are parsed
    from contract_gate_spark.runtime.session import jars_dir as delta_jars_dir

    jars = s3a_jars.jars_on_disk(jars_dir or delta_jars_dir())
    if not jars:
        raise ObjectStorageError(f"the plan has S3 tables but Hadoop's S3A connector ({s3a_jars.HADOOP_AWS_PACKAGE} "
                                 "and the AWS SDK bundle) is not on this worker: run `python -m "
                                 "contract_gate_spark.runtime.jars --s3a` once (scripts/install.sh does)")
    if mode == "local":
        return {"spark.driver.extraClassPath": os.pathsep.join(jars)}
    return {"spark.jars": ",".join(jars)}
