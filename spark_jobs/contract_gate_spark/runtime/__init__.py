"""Spark side, runtime: where a SparkSession comes from (session, Delta jars), how its failures
are told apart (errors), and the start-up aids the local runner asks for (class archive,
warm-up, job start)."""
