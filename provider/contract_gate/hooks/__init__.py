"""Hooks: the external APIs the gate talks to itself.

* :class:`~contract_gate.hooks.spark_standalone.SparkStandaloneRestHook`: a Spark standalone
  master's REST submission server (create a driver, read its status, kill it), used by the
  ``spark_submit`` runner and by ``SparkDriverStatusTrigger``.
* :class:`~contract_gate.hooks.databricks.DatabricksWorkspaceHook`: a Databricks workspace through
  ``databricks-sdk`` (jobs, Unity Catalog volumes, SQL statements, tables), used by the
  ``databricks`` runner and its trigger, catalog landings, the GRANTs, the catalog decision log
  and freshness.
"""
