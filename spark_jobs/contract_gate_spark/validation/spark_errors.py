"""The exceptions a failed Spark query raises, in classic and Spark Connect sessions."""

from __future__ import annotations

from pyspark.errors import PySparkException

try:  # a Java exception pyspark does not convert (absent from a Spark Connect-only client)
    from py4j.protocol import Py4JJavaError

    SPARK_ERRORS: tuple[type[BaseException], ...] = (PySparkException, Py4JJavaError)
except ImportError:  # pragma: no cover
    SPARK_ERRORS = (PySparkException,)
