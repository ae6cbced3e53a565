"""Spark on this machine, from the pip-installed pyspark: where it is (``installation``), the one
``spark-submit`` command line of a local job (``submit``), the JVM class archive that makes its
start faster (``class_archive``) and a local Spark Connect server (``connect_server``).

The ``local`` runner, ``contract-gate validate`` and the quick start use them; none of them
imports pyspark (Spark runs in another process)."""
