# The images of the compose stack (docker-compose.yaml), from the official Airflow and Spark images.
#
#   airflow  apache/airflow + a JRE + the contract-gate provider (pip install .[spark,airflow]) + the
#            Delta Lake jars, fetched once here (python -m contract_gate_spark.runtime.jars, which also
#            round-trips a Delta table to prove they load)
#   spark    apache/spark + the same Delta jars, copied from the airflow stage (not fetched again),
#            for the master, the worker and the Spark Connect server
#
# Versions match the tested set in constraints/ (apache-airflow, pyspark, delta-spark), which the
# provider is installed with; tests/deploy/test_compose_stack.py checks that they do. Both images run as uid 50000, group 0 (the Airflow image's user): the gate
# keeps candidates, quarantine, decisions and work files owner-only, and Airflow and Spark share
# them on the lakehouse volume.
ARG AIRFLOW_IMAGE=apache/airflow:3.3.2-python3.11
ARG SPARK_IMAGE=apache/spark:4.2.0-scala2.13-java17-python3-ubuntu

FROM ${AIRFLOW_IMAGE} AS airflow
ARG AIRFLOW_VERSION=3.3.2
USER root
# Java for the local and spark_submit modes (spark-submit runs on the Airflow side); the
# spark_connect mode needs none.
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /opt/lakehouse && chown 50000:0 /opt/lakehouse
USER airflow
COPY --chown=airflow:root pyproject.toml README.md /opt/contract-gate/
COPY --chown=airflow:root constraints/constraints-3.11.txt /opt/contract-gate/constraints/
COPY --chown=airflow:root provider /opt/contract-gate/provider
COPY --chown=airflow:root contract_plan /opt/contract-gate/contract_plan
COPY --chown=airflow:root spark_jobs /opt/contract-gate/spark_jobs
# apache-airflow pinned again so pip keeps the image's Airflow (the official image's advice)
RUN pip install --no-cache-dir -c /opt/contract-gate/constraints/constraints-3.11.txt \
    "apache-airflow==${AIRFLOW_VERSION}" "/opt/contract-gate[spark,airflow]"
WORKDIR /tmp
RUN python -m contract_gate_spark.runtime.jars
WORKDIR /opt/airflow

FROM ${SPARK_IMAGE} AS spark
USER root
# The Airflow image's uid (see above), with a passwd entry: Hadoop's login needs a user name.
RUN useradd --uid 50000 --gid 0 --home-dir /opt/spark/work-dir --no-create-home airflow \
    && mkdir -p /opt/lakehouse /opt/spark/logs /opt/spark/work \
    && chown 50000:0 /opt/lakehouse /opt/spark/logs /opt/spark/work \
    && chown -R 50000:0 /opt/spark/work-dir
COPY --from=airflow /home/airflow/.ivy2.5.2/jars/io.delta_*.jar /opt/spark/jars/
USER 50000:0
