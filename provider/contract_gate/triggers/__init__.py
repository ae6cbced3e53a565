"""Triggers of our own: what a deferred task or an Asset watcher waits on in the triggerer (no
worker slot held).

* :class:`~contract_gate.triggers.landing.LandingTrigger`: a new batch at a contract's landing
  (the deferred ``ContractLandingSensor``, and the ``AssetWatcher`` that starts an event-driven gate);
* :class:`~contract_gate.triggers.accepted_data_trigger.AcceptedDataTrigger`: accepted data for a business
  date, or fresh data (the deferred ``AcceptedDataSensor``);
* :class:`~contract_gate.triggers.spark_driver.SparkDriverStatusTrigger`: a standalone cluster-mode
  driver's end (the ``spark_submit`` runner); the ``databricks`` runner waits on the Databricks
  provider's trigger.
"""
