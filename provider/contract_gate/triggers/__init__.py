"""Triggers of our own: what a deferred gate task waits on in the triggerer (no worker slot held).

Only the ``spark_submit`` runner's cluster deploy mode needs one today
(:class:`~contract_gate.triggers.spark_driver.SparkDriverStatusTrigger`); the ``databricks``
runner waits on the Databricks provider's trigger.
"""
